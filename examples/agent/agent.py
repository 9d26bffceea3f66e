"""The example agent: patchsmith's repair loop driving a (scripted) model.

    python examples/agent/agent.py SCRATCH_DIR

copies examples/agent/workspace to SCRATCH_DIR and runs task.json there with
`patchsmith.run_task`. Swap `scripted_model` for a function that sends
`turn.prompt()` to your LLM and returns its text: nothing else changes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import patchsmith
from patchsmith.pipeline import Budget, Turn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from model import reply  # noqa: E402  (the scripted model beside this file)


def scripted_model(turn: Turn) -> str:
    """A proposal source: the turn's prompt in, the model's text out."""
    return reply(turn.prompt())


def main(scratch: str) -> int:
    root = Path(scratch)
    shutil.copytree(HERE / "workspace", root, dirs_exist_ok=True)
    task = json.loads((HERE / "task.json").read_text(encoding="utf-8"))
    result = patchsmith.run_task(task, scripted_model, Budget(max_attempts=3), root=root)
    for turn in result.turns:
        print(f"attempt {turn.attempt_no}: {turn.outcome}")
    print(f"run {result.run_id}: {result.status.value}")
    print((root / "inventory.py").read_text(encoding="utf-8"), end="")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
