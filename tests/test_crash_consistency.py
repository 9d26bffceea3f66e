"""Crash consistency of the real CLI: SIGKILL at every step of a multi-file commit.

A launcher (test code only) runs `patchsmith.cli.main` with a step hook that sends
the process SIGKILL before the chosen step; the next command, itself a CLI `apply`,
must find every file all-old or all-new (its commit recovers first, under the lock).
Also the two-process scenario of finding 2: process A dies mid-commit after process B
opened the workspace and staged; B's commit must not build on A's half state, and a
later open must not roll A back over B's edit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.errors import FailureCode
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

pytestmark = pytest.mark.slow

LAUNCHER = textwrap.dedent(
    """
    import os, signal, sys
    from patchsmith.runtime import transaction

    crash_at, steps_log = int(sys.argv[1]), sys.argv[2]
    real_commit = transaction.Transaction.commit

    def commit(self, *, on_step=None, **options):
        seen = [0]

        def step(name):
            with open(steps_log, "a", encoding="utf-8") as log:
                log.write(name + "\\n")
            if seen[0] == crash_at:
                os.kill(os.getpid(), signal.SIGKILL)
            seen[0] += 1

        return real_commit(self, on_step=step, **options)

    transaction.Transaction.commit = commit
    from patchsmith.cli import main
    sys.exit(main(sys.argv[3:]))
    """
)

RUN_CLI = [sys.executable, "-c", "import sys; from patchsmith.cli import main; sys.exit(main())"]

OLD = {
    "a.py": b"def a():\n    return 1\n",
    "b.py": b"def b():\n    return 2\n",
    "gone.txt": b"bye\n",
    "keep.txt": b"untouched\n",
}
NEW = {
    "a.py": b"def a():\n    return 10\n",
    "b.py": b"def b():\n    return 20\n",
    "pkg/new.py": b"N = 1\n",
    "keep.txt": b"untouched\n",
}
PATCH = """\
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def a():
-    return 1
+    return 10
--- a/b.py
+++ b/b.py
@@ -1,2 +1,2 @@
 def b():
-    return 2
+    return 20
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1 @@
+N = 1
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
"""
UNRELATED = "--- /dev/null\n+++ b/zz.txt\n@@ -0,0 +1 @@\n+z\n"


def _cli(
    root: Path, patch: Path, crash_at: int, steps_log: Path
) -> subprocess.CompletedProcess[str]:
    argv = ["apply", str(patch), "-C", str(root), "--no-record"]
    return subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(crash_at), str(steps_log), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _files(root: Path) -> dict[str, bytes]:
    return {p: b for p, b in snapshot_tree(root).files().items() if p != "zz.txt"}


class TestCliCrash:
    def test_sigkill_at_every_step(self, tmp_path: Path) -> None:
        """Killed before any step, the next CLI apply finds all-old (all-new once committed)."""
        patch = tmp_path / "reply.diff"
        patch.write_text(PATCH)
        other = tmp_path / "other.diff"
        other.write_text(UNRELATED)
        plan_root = make_tree(tmp_path / "plan", OLD)
        plan_log = tmp_path / "plan.log"
        done = _cli(plan_root, patch, -1, plan_log)
        assert 0 == done.returncode, done.stderr
        assert NEW == _files(plan_root)
        steps = plan_log.read_text().splitlines()
        assert ["check", "journal"] == steps[:2]
        assert ["remove journal", "done"] == steps[-2:]

        outcomes: list[str] = []
        for n, name in enumerate(steps):
            root = make_tree(tmp_path / f"k{n}", OLD)
            killed = _cli(root, patch, n, tmp_path / f"k{n}.log")
            assert -9 == killed.returncode, (name, killed.stderr)
            # The next command is a real CLI run too; its commit recovers first.
            after = subprocess.run(
                [*RUN_CLI, "apply", str(other), "-C", str(root)],
                capture_output=True,
                text=True,
                check=False,
                timeout=120,
            )
            assert 0 == after.returncode, (name, after.stderr)
            assert "Traceback" not in after.stderr
            files = _files(root)
            assert files in (OLD, NEW), name
            outcomes.append("new" if files == NEW else "old")
            assert [] == list((root / ".patchsmith" / "journal").iterdir())
            assert not [p for p in snapshot_tree(root).files() if p.endswith(".tmp")]
        # Only a kill after the commit point ("done") leaves the new files.
        assert ["old"] * (len(steps) - 1) + ["new"] == outcomes


class TestTwoProcesses:
    def _kill_a(self, root: Path, tmp_path: Path, at: str) -> None:
        """Process A: a CLI apply killed just before step `at`."""
        patch = tmp_path / "reply.diff"
        patch.write_text(PATCH)
        plan_root = make_tree(tmp_path / f"plan-{at}", OLD)
        _cli(plan_root, patch, -1, tmp_path / f"plan-{at}.log")
        steps = (tmp_path / f"plan-{at}.log").read_text().splitlines()
        killed = _cli(root, patch, steps.index(at), tmp_path / f"a-{at}.log")
        assert -9 == killed.returncode, killed.stderr

    def test_b_opened_before_a_died_commits_on_old_state(self, tmp_path: Path) -> None:
        """B staged on the old files; A dies after replacing a.py; B's commit recovers A first."""
        root = make_tree(tmp_path / "ws", OLD)
        b_workspace = Workspace(root)
        b = Transaction(b_workspace)
        assert b.update("a.py", "def a():\n    return 'B'\n") is None
        assert b.update("keep.txt", "B was here\n") is None

        self._kill_a(root, tmp_path, "replace b.py")
        assert NEW["a.py"] == (root / "a.py").read_bytes()  # A's half state

        assert b.commit() is None
        expected = dict(OLD, **{"a.py": b"def a():\n    return 'B'\n", "keep.txt": b"B was here\n"})
        assert expected == _files(root)
        reopened = Workspace(root)
        assert () == reopened.recovered
        assert () == reopened.blocking_failures
        assert expected == _files(root)

    def test_b_staged_on_half_state_is_stale(self, tmp_path: Path) -> None:
        """B read A's half-written a.py; after recovering A, B's commit is STALE_FILE."""
        root = make_tree(tmp_path / "ws", OLD)
        b_workspace = Workspace(root)
        self._kill_a(root, tmp_path, "replace b.py")
        b = Transaction(b_workspace)
        assert b.update("a.py", "def a():\n    return 10 + 1\n") is None

        failure = b.commit()

        assert failure is not None
        assert FailureCode.STALE_FILE == failure.code
        assert OLD == _files(root)
        assert OLD == _files(root) and () == Workspace(root).recovered

    def test_human_edit_after_crash_survives_reopen(self, tmp_path: Path) -> None:
        """A file edited by hand after A died is never rolled back: the journal is quarantined."""
        root = make_tree(tmp_path / "ws", OLD)
        self._kill_a(root, tmp_path, "delete gone.txt")
        (root / "a.py").write_bytes(b"# my edit\n")

        reopened = Workspace(root)

        assert b"# my edit\n" == (root / "a.py").read_bytes()
        assert [FailureCode.JOURNAL_QUARANTINED] == [f.code for f in reopened.blocking_failures]
        assert os.listdir(root / ".patchsmith" / "quarantine")
