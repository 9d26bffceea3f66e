"""`python -m patchsmith.fleet.worker`: run work units read from stdin, one result line each.

Input: one `WorkUnit` JSON object a line; output: one `RepoResult` JSON object a line,
flushed as each unit ends. The child stops at the end of its input. The parent
(`WorkerProcess`) enforces the timeouts and kills this process when one passes.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.lifeline import PARENT_ENV, die_with_parent
from patchsmith.fleet.result import RepoResult
from patchsmith.fleet.unit import WorkUnit, run_unit

__all__ = ["main", "serve_one"]


def serve_one(line: str) -> RepoResult:
    """The result of the unit in `line`; an internal error becomes WORKER_FAILED."""
    unit = WorkUnit.from_json(json.loads(line))
    try:
        return run_unit(unit)
    except Exception as exc:  # one repository's bug must not end the worker
        return RepoResult.failed(
            unit.repo.key,
            PatchFailure(
                FailureCode.WORKER_FAILED,
                f"{unit.repo.key}: {type(exc).__name__}: {exc}",
                file=unit.repo.key,
                hint="an internal error, reported with its traceback; the other "
                "repositories went on",
                excerpt="".join(traceback.format_exception(exc))[-2000:],
                rule="worker",
            ),
        )


def main() -> int:
    if PARENT_ENV in os.environ:
        die_with_parent()  # started by a driver: never outlive it
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(serve_one(line).to_json_text() + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
