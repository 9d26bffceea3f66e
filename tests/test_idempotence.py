"""Applying the same proposal twice: detected, answered `already_applied`, nothing rewritten."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import propose
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus
from patchsmith.store import AttemptStatus, Store

SOURCE = b"a = 1\nb = 2\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def proposal(proposal_id: str = "p-1", **changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "proposal_id": proposal_id,
        "run_id": "r-1",
        "attempt_no": 1,
        "strategy": "UNIFIED_DIFF",
        "objective": "bump b",
        "preconditions": [{"type": "FILE_HASH_MATCH", "path": "m.py", "value": sha(SOURCE)}],
        "operations": [
            {"type": "patch", "text": "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n-b = 2\n+b = 3\n"},
            {
                "type": "direct_write",
                "path": "notes.md",
                "content": "bumped\n",
                "allow_create": True,
            },
        ],
    }
    base.update(changes)
    return base


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"m.py": SOURCE})


def _attempts(root: Path) -> list[tuple[AttemptStatus, int]]:
    with Store.open(root / ".patchsmith") as store:
        return [(a.status, len(a.files)) for a in reversed(store.list_attempts())]


class TestIdempotence:
    def test_second_apply_is_already_applied(self, root: Path) -> None:
        """The second run writes nothing and records no second set of file changes."""
        first = propose(proposal(), root)
        after_first = snapshot_tree(root)
        mtime = os.stat(root / "m.py").st_mtime_ns

        second = propose(proposal(), root)

        assert ApplyStatus.APPLIED == first.status
        assert ApplyStatus.ALREADY_APPLIED == second.status
        assert second.ok
        assert after_first == snapshot_tree(root)
        assert mtime == os.stat(root / "m.py").st_mtime_ns
        assert [(AttemptStatus.APPLIED, 2), (AttemptStatus.ALREADY_APPLIED, 0)] == _attempts(root)
        assert any((first.attempt_id or "?") in note for note in second.notes)

    def test_changed_file_is_not_already_applied(self, root: Path) -> None:
        """When a result file changed since, the proposal is not taken as applied."""
        propose(proposal(), root)
        (root / "notes.md").write_bytes(b"edited by hand\n")

        again = propose(proposal(), root)

        assert ApplyStatus.REFUSED == again.status
        assert FailureCode.PRECONDITION_FAILED in {e.code for e in again.errors}

    def test_other_proposal_id_is_not_already_applied(self, root: Path) -> None:
        """Only the same proposal id counts; another id with the same edit is refused."""
        propose(proposal(), root)

        other = propose(proposal("p-2", preconditions=[]), root)

        assert ApplyStatus.REFUSED == other.status

    def test_checked_attempt_does_not_count(self, root: Path) -> None:
        """A dry run is not an application: the real run that follows applies."""
        propose(proposal(), root, check=True)

        report = propose(proposal(), root)

        assert ApplyStatus.APPLIED == report.status

    def test_unrecorded_apply_cannot_be_recognised(self, root: Path) -> None:
        """Without a record (record=False) the second run is judged afresh and refused."""
        propose(proposal(), root, record=False)

        again = propose(proposal(), root, record=False)

        assert ApplyStatus.REFUSED == again.status
        assert not (root / ".patchsmith" / "patchsmith.db").exists()

    def test_recognised_even_when_not_recording(self, root: Path) -> None:
        """A recorded application is recognised by a later run that records nothing."""
        propose(proposal(), root)

        again = propose(proposal(), root, record=False)

        assert (ApplyStatus.ALREADY_APPLIED, None) == (again.status, again.attempt_id)
        assert [(AttemptStatus.APPLIED, 2)] == _attempts(root)

    def test_headerless_patch_is_already_applied(self, root: Path) -> None:
        """A patch naming no file (path inferred) is matched through the record's files."""
        headerless = {"type": "patch", "text": "@@\n a = 1\n-b = 2\n+b = 3\n", "format": "udiff"}
        first = propose(proposal(operations=[headerless], preconditions=[]), root)
        after_first = snapshot_tree(root)

        again = propose(proposal(operations=[headerless], preconditions=[]), root)

        assert ApplyStatus.APPLIED == first.status
        assert ApplyStatus.ALREADY_APPLIED == again.status
        assert after_first == snapshot_tree(root)

    def test_headerless_patch_with_its_precondition_is_already_applied(self, root: Path) -> None:
        """Re-sent as it was first sent (FILE_HASH_MATCH on the old text): already applied,
        not a failed precondition (issue 13, item 7)."""
        headerless = {"type": "patch", "text": "@@\n a = 1\n-b = 2\n+b = 3\n", "format": "udiff"}
        first = propose(proposal(operations=[headerless]), root)
        after_first = snapshot_tree(root)

        again = propose(proposal(operations=[headerless]), root)

        assert (ApplyStatus.APPLIED, ApplyStatus.ALREADY_APPLIED) == (first.status, again.status)
        assert [] == [e.code for e in again.errors]
        assert after_first == snapshot_tree(root)

    def test_headerless_reply_sent_twice_to_apply_is_already_applied(self, root: Path) -> None:
        """The same for `apply`: a path-less diff re-sent answers already_applied."""
        from patchsmith import apply

        reply = "@@\n a = 1\n-b = 2\n+b = 3\n"
        first = apply(reply, root)
        after_first = snapshot_tree(root)

        again = apply(reply, root)

        assert (ApplyStatus.APPLIED, ApplyStatus.ALREADY_APPLIED) == (first.status, again.status)
        assert after_first == snapshot_tree(root)

    def test_headerless_patch_after_a_hand_edit_is_judged_afresh(self, root: Path) -> None:
        """The other side: the file changed since, so the record no longer vouches for it."""
        headerless = {"type": "patch", "text": "@@\n a = 1\n-b = 2\n+b = 3\n", "format": "udiff"}
        propose(proposal(operations=[headerless], preconditions=[]), root)
        (root / "m.py").write_bytes(b"a = 1\nb = 3\nc = 4\n")

        again = propose(proposal(operations=[headerless], preconditions=[]), root)

        assert ApplyStatus.REFUSED == again.status


class TestReplay:
    def test_recorded_propose_replays_identically(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`patchsmith replay` re-applies a proposal's recorded diff to a fresh checkout."""
        import patchsmith.cli

        report = propose(proposal(), root)
        target = make_tree(tmp_path / "target", {"m.py": SOURCE})

        code = patchsmith.cli.main(
            ["replay", report.attempt_id or "", "-C", str(target), "--from", str(root)]
        )

        assert 0 == code
        assert "identical" in capsys.readouterr().out
        assert snapshot_tree(root).files() == snapshot_tree(target).files()
