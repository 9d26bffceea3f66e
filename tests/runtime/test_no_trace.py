"""`--no-record` leaves no `.patchsmith/` behind; the lock survives the directory's removal."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

from patchsmith import apply, propose, write_file
from patchsmith.cli import main
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.workspace import Workspace

ONE = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
TWO = ONE + "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-b = 1\n+b = 2\n"


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"a.py": b"a = 1\n", "b.py": b"b = 1\n"})


class TestNoRecordLeavesNoTrace:
    @pytest.mark.parametrize("patch", [ONE, TWO], ids=["single-file", "journaled"])
    def test_apply(self, root: Path, patch: str) -> None:
        report = apply(patch, root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert not (root / ".patchsmith").exists()

    def test_cli(self, root: Path, tmp_path: Path) -> None:
        reply = tmp_path / "r.diff"
        reply.write_text(TWO, encoding="utf-8")

        assert 0 == main(["apply", str(reply), "-C", str(root), "--no-record"])
        assert not (root / ".patchsmith").exists()

    def test_propose_and_write_file(self, root: Path) -> None:
        proposal = {
            "proposal_id": "p",
            "run_id": "r",
            "attempt_no": 1,
            "strategy": "UNIFIED_DIFF",
            "objective": "x",
            "operations": [{"type": "patch", "text": TWO}],
        }

        assert propose(proposal, root, record=False).ok
        assert write_file(root, "c.py", "c = 1\n", None, "new", True, record=False).ok
        assert not (root / ".patchsmith").exists()

    def test_recording_keeps_the_directory(self, root: Path) -> None:
        """The other side: with a record the directory (and its database) stays."""
        apply(ONE, root)

        assert (root / ".patchsmith" / "patchsmith.db").is_file()

    def test_existing_directory_is_left_alone(self, root: Path) -> None:
        """A `.patchsmith/` that was there before (records of earlier runs) is kept."""
        apply(ONE, root)
        before = sorted(p.name for p in (root / ".patchsmith").iterdir())

        apply(TWO.replace("a = 1\n+a = 2", "a = 2\n+a = 3"), root, record=False)

        assert before == sorted(p.name for p in (root / ".patchsmith").iterdir())


class TestLockAfterRemoval:
    def test_waiter_relocks_the_new_lock_file(self, root: Path) -> None:
        """A process waiting on a lock file that the holder removes locks the new one."""
        holder, waiter = Workspace(root), Workspace(root)
        held, waiting_done = threading.Event(), threading.Event()
        seen: list[bool] = []

        def wait_for_lock() -> None:
            held.wait()
            with waiter.lock():
                # The lock held now is the file on disk, not the removed one.
                seen.append((root / ".patchsmith" / "lock").is_file())
            waiting_done.set()

        thread = threading.Thread(target=wait_for_lock)
        thread.start()
        with holder.lock():
            held.set()
            waiting_done.wait(0.3)  # the waiter is blocked on the old lock file
            holder.discard_state_dir()
            assert not (root / ".patchsmith").exists()
        thread.join(10)

        assert [True] == seen

    def test_discard_keeps_a_directory_with_more_in_it(self, root: Path) -> None:
        workspace = Workspace(root)
        with workspace.lock():
            (root / ".patchsmith" / "keep.txt").write_text("x")
            workspace.discard_state_dir()

        assert (root / ".patchsmith" / "keep.txt").is_file()
        assert (root / ".patchsmith" / ".gitignore").is_file()
