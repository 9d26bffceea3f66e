"""Tests for `Transaction.stage_generated`: a command's output staged byte for byte."""

from __future__ import annotations

from pathlib import Path

from patchsmith.errors import FailureCode
from patchsmith.formats.script import Action
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace


def _workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "lock.json").write_bytes(b"{}\r\n")
    return Workspace(tmp_path)


class TestStageGenerated:
    def test_update_create_delete_are_marked_generated(self, tmp_path: Path) -> None:
        """Each kind of change is staged with the exact bytes and marked generated."""
        with Transaction(_workspace(tmp_path)) as tx:
            assert tx.stage_generated("lock.json", b'{"v": 1}\r\n') is None
            assert tx.stage_generated("new/out.txt", b"x", 0o600) is None
            assert tx.stage_generated("a.txt", None) is None
            changes = {c.path: c for c in tx.changes}
            assert tx.commit() is None

        assert {Action.UPDATE, Action.CREATE, Action.DELETE} == {c.action for c in changes.values()}
        assert all(c.generated_by_command for c in changes.values())
        assert '{"v": 1}\r\n' == changes["lock.json"].new_text
        assert b'{"v": 1}\r\n' == (tmp_path / "lock.json").read_bytes()
        assert 0o600 == (tmp_path / "new" / "out.txt").stat().st_mode & 0o777
        assert not (tmp_path / "a.txt").exists()

    def test_output_over_a_hand_edit_stays_a_hand_edit(self, tmp_path: Path) -> None:
        """A file already edited in the transaction takes the command's bytes, unmarked."""
        with Transaction(_workspace(tmp_path)) as tx:
            assert tx.update("a.txt", "edited\n") is None
            assert tx.stage_generated("a.txt", b"formatted\n") is None
            (change,) = tx.changes

        assert (b"a\n", b"formatted\n") == (change.old_bytes, change.new_bytes)
        assert not change.generated_by_command

    def test_creating_or_deleting_a_staged_file_conflicts(self, tmp_path: Path) -> None:
        """A command may not delete a file the transaction edits, nor revive a deleted one."""
        with Transaction(_workspace(tmp_path)) as tx:
            assert tx.update("a.txt", "edited\n") is None
            assert tx.delete("lock.json") is None
            deleted = tx.stage_generated("a.txt", None)
            revived = tx.stage_generated("lock.json", b"{}")

        assert deleted is not None and FailureCode.CONFLICTING_EDITS == deleted.code
        assert revived is not None and FailureCode.CONFLICTING_EDITS == revived.code

    def test_paths_are_checked(self, tmp_path: Path) -> None:
        """A path escaping the workspace, or a file in place of a directory, is refused."""
        with Transaction(_workspace(tmp_path)) as tx:
            escape = tx.stage_generated("../x", b"x")
            under_file = tx.stage_generated("a.txt/x", b"x")

        assert escape is not None and FailureCode.PATH_OUTSIDE_WORKSPACE == escape.code
        assert under_file is not None and FailureCode.FILE_ALREADY_EXISTS == under_file.code

    def test_output_for_a_linked_file_updates_the_file_it_names(self, tmp_path: Path) -> None:
        """A formatter that renamed its output over `link.py` changed `real.py`: the link stays."""
        workspace = _workspace(tmp_path)
        (tmp_path / "real.py").write_text("x=1\n")
        (tmp_path / "link.py").symlink_to("real.py")

        with Transaction(workspace) as tx:
            assert tx.stage_generated("link.py", b"x = 1\n") is None
            (change,) = tx.changes
            assert tx.commit() is None

        assert ("real.py", Action.UPDATE) == (change.path, change.action)
        assert (tmp_path / "link.py").is_symlink()
        assert b"x = 1\n" == (tmp_path / "real.py").read_bytes()

    def test_output_for_a_dangling_link_is_refused(self, tmp_path: Path) -> None:
        """A link naming no file cannot be written through: NOT_SUPPORTED_YET, nothing staged."""
        workspace = _workspace(tmp_path)
        (tmp_path / "link.py").symlink_to("missing.py")

        with Transaction(workspace) as tx:
            refused = tx.stage_generated("link.py", b"x = 1\n")
            assert () == tx.changes

        assert refused is not None and FailureCode.NOT_SUPPORTED_YET == refused.code
        assert (tmp_path / "link.py").is_symlink() and not (tmp_path / "missing.py").exists()
