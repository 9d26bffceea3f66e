"""Two processes write the same file with the same expected hash: one wins, one is STALE_FILE."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.workspace_snapshot import make_tree

from patchsmith.store import AttemptKind, AttemptStatus, Store

SOURCE = b"counter = 0\n"

# argv: root, name, expected sha256, sync dir, mode ("commit" = both stage before either
# commits; "free" = both start together and race freely). Prints the report as JSON.
CHILD = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from patchsmith import write_file
    from patchsmith.runtime.transaction import Transaction

    root, name, expected, sync, mode = sys.argv[1:6]
    sync = Path(sync)

    def wait_for(names):
        deadline = time.monotonic() + 30
        while not all((sync / n).exists() for n in names):
            if time.monotonic() > deadline:
                sys.exit("peer never arrived")
            time.sleep(0.002)

    if mode == "commit":
        real_commit = Transaction.commit

        def commit(self, **kwargs):
            (sync / f"staged-{name}").touch()
            wait_for(["staged-A", "staged-B"])
            return real_commit(self, **kwargs)

        Transaction.commit = commit
    (sync / f"ready-{name}").touch()
    wait_for(["ready-A", "ready-B"])
    report = write_file(root, "c.py", f"counter = '{name}'\\n", expected, f"writer {name}")
    print(report.to_json_text())
    """
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _race(root: Path, sync: Path, mode: str) -> dict[str, dict[str, Any]]:
    sync.mkdir()
    children = {
        name: subprocess.Popen(
            [sys.executable, "-c", CHILD, str(root), name, sha(SOURCE), str(sync), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("A", "B")
    }
    reports = {}
    for name, child in children.items():
        out, err = child.communicate(timeout=120)
        assert 0 == child.returncode, err
        reports[name] = json.loads(out)
    return reports


class TestConcurrentWrites:
    @pytest.mark.parametrize("mode", ["commit", "free"])
    def test_exactly_one_wins(self, tmp_path: Path, mode: str) -> None:
        """One write applies, the other is STALE_FILE naming both hashes; both are recorded."""
        root = make_tree(tmp_path / "ws", {"c.py": SOURCE})

        reports = _race(root, tmp_path / "sync", mode)

        statuses = {name: r["status"] for name, r in reports.items()}
        assert ["applied", "refused"] == sorted(statuses.values())
        winner = next(name for name, status in statuses.items() if status == "applied")
        loser = reports["B" if winner == "A" else "A"]
        final = f"counter = '{winner}'\n".encode()
        assert final == (root / "c.py").read_bytes()
        [error] = loser["errors"]
        assert "STALE_FILE" == error["code"]
        assert sha(SOURCE) in error["message"]
        assert sha(final) in error["message"]
        with Store.open(root / ".patchsmith") as store:
            attempts = store.list_attempts()
        assert {AttemptKind.WRITE} == {a.kind for a in attempts}
        assert [AttemptStatus.APPLIED, AttemptStatus.REFUSED] == sorted(
            (a.status for a in attempts), key=lambda s: s.value
        )
        assert {r["attempt_id"] for r in reports.values()} == {a.id for a in attempts}
