"""aider's edit appliers behind a JSON-lines pipe, for `bench/peers.py`.

Runs under the bench-only environment that `bench/peers.py` makes (aider-chat installed without
its dependencies, plus the few packages its coder modules import); it never imports patchsmith.
aider's coder classes derive from a `Coder` base that pulls in the whole chat application (model
clients, git, prompt toolkit), so this module registers a small stand-in base before importing
`udiff_coder`, `editblock_coder`, `wholefile_coder` and `patch_coder`. The stand-in supplies what
their parsing and applying code calls: the workspace root, the files "in the chat" (every file of
the workspace), plain file reads and writes as aider's own `InputOutput` does them, and the
`get_edits` -> dry run -> `prepare_to_edit` -> `apply_edits` sequence of aider's `apply_updates`.

Protocol: one JSON request per stdin line,
`{"root": dir, "coder": "udiff"|"editblock"|"wholefile"|"patch", "content": reply}`, answered by
`{"ok": bool, "error": str, "ns": int}`. `ok` is false when aider would have told the user that
the edit failed (a `ValueError` from its parsers or appliers, or any other exception, which aider
also reports instead of applying). The time covers the coder's work alone, not the pipe.
"""

from __future__ import annotations

import json
import os
import sys
import time
import types
from pathlib import Path
from typing import Any


def _install_stand_in_base() -> None:
    """Make `aider.coders` importable module by module without its `__init__` or real base."""
    import aider

    package = types.ModuleType("aider.coders")
    package.__path__ = [str(Path(aider.__file__).parent / "coders")]
    sys.modules["aider.coders"] = package
    base = types.ModuleType("aider.coders.base_coder")
    base.Coder = StandInCoder  # type: ignore[attr-defined]
    sys.modules["aider.coders.base_coder"] = base


class PlainIO:
    """aider's `InputOutput.read_text` / `write_text` with default settings, quietly."""

    def read_text(self, filename: str, silent: bool = False) -> str | None:
        try:
            with open(filename, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeError):
            return None

    def write_text(self, filename: str, content: str) -> None:
        with open(filename, "w", encoding="utf-8", newline=None) as handle:
            handle.write(content)

    def tool_output(self, *args: Any, **kwargs: Any) -> None:
        pass

    tool_warning = tool_error = tool_output


class StandInCoder:
    """What aider's edit coders use of their base class, for one reply in one workspace."""

    fence = ("```", "```")

    def __init__(self, root: str, content: str) -> None:
        self.root = os.path.realpath(root)
        self.partial_response_content = content
        self.io = PlainIO()
        self.abs_root_path_cache: dict[str, str] = {}
        self.shell_commands: list[str] = []
        self.declined: list[str] = []
        self.abs_fnames = {
            os.path.join(folder, name) for folder, _, names in os.walk(self.root) for name in names
        }

    def abs_root_path(self, path: str) -> str:
        return str((Path(self.root) / path).resolve())

    def get_rel_fname(self, fname: str) -> str:
        return os.path.relpath(fname, self.root)

    def get_inchat_relative_files(self) -> list[str]:
        return sorted({self.get_rel_fname(name) for name in self.abs_fnames})

    def get_multi_response_content_in_progress(self, remove_suffix: bool = False) -> str:
        return self.partial_response_content

    def apply_edits_dry_run(self, edits: list[Any]) -> list[Any]:
        return edits

    def allowed_to_edit(self, path: str) -> bool:
        """A file inside the workspace may be edited or made; anything outside is declined.

        aider asks the user before touching a file that is not in the chat; the bench answers
        yes inside the workspace (a new file is created empty, as aider does) and no outside it;
        aider then says it skipped the edit, which the bench reports as a failure.
        """
        full = self.abs_root_path(path)
        if os.path.commonpath([full, self.root]) != self.root:
            self.declined.append(path)
            return False
        if not os.path.exists(full):
            os.makedirs(os.path.dirname(full), exist_ok=True)
            Path(full).touch()
        return True

    def prepare_to_edit(self, edits: list[Any]) -> list[Any]:
        return [edit for edit in edits if edit[0] is None or self.allowed_to_edit(edit[0])]

    def run(self) -> None:
        """aider's `apply_updates` without its chat bookkeeping: raises when aider reports."""
        edits = self.get_edits()  # type: ignore[attr-defined]
        edits = self.apply_edits_dry_run(edits)
        edits = self.prepare_to_edit(edits)
        self.apply_edits(edits)  # type: ignore[attr-defined]
        if self.declined:
            raise ValueError(f"skipped edits outside the workspace: {self.declined}")


def coders() -> dict[str, type[StandInCoder]]:
    _install_stand_in_base()
    from aider.coders import (  # type: ignore[import-not-found]
        editblock_coder,
        patch_coder,
        udiff_coder,
        wholefile_coder,
    )

    return {
        "udiff": udiff_coder.UnifiedDiffCoder,
        "editblock": editblock_coder.EditBlockCoder,
        "wholefile": wholefile_coder.WholeFileCoder,
        "patch": patch_coder.PatchCoder,
    }


def serve(kinds: dict[str, type[StandInCoder]], request: dict[str, Any]) -> dict[str, Any]:
    coder = kinds[request["coder"]](request["root"], request["content"])
    start = time.perf_counter_ns()
    try:
        coder.run()
    except Exception as error:  # aider reports every exception to the user instead of applying
        return {
            "ok": False,
            "error": f"{type(error).__name__}: {error}"[:300],
            "ns": time.perf_counter_ns() - start,
        }
    return {"ok": True, "error": "", "ns": time.perf_counter_ns() - start}


def main() -> int:
    kinds = coders()
    # aider prints progress and dumps; keep the pipe for answers only.
    answers, sys.stdout = sys.stdout, sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = serve(kinds, json.loads(line))
        except Exception as error:  # a malformed request: say so, keep serving
            answer = {"ok": False, "error": f"bad request: {error}", "ns": 0, "bad": True}
        answers.write(json.dumps(answer, ensure_ascii=True) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
