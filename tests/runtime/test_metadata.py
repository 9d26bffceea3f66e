"""Finding 10: what an atomic replace must keep (owner, set-id safety, xattrs, umask), the
read-only and hard-link decisions, and temp files that are never a user's file."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.runtime.conftest import MakeTree
from tests.workspace_snapshot import snapshot_tree

from patchsmith import apply
from patchsmith.errors import FailureCode
from patchsmith.policy import GuardSwitches, Policy
from patchsmith.runtime import atomic, journal, statedir
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"


def _update(root: Path, path: str = "a.txt", text: str = "new\n") -> None:
    txn = Transaction(Workspace(root))
    assert txn.update(path, text) is None
    assert txn.commit() is None


@pytest.fixture(name="umask")
def _umask() -> Iterator[None]:
    before = os.umask(0o022)
    yield
    os.umask(before)


class TestOwnership:
    @ROOT_ONLY
    def test_owner_group_and_setuid_kept_as_root(self, make_workspace: MakeTree) -> None:
        """Run as root, an edited 4755 file of uid 1234 keeps its owner, group and mode."""
        root = make_workspace({"a.txt": b"old\n"})
        os.chown(root / "a.txt", 1234, 2345)
        os.chmod(root / "a.txt", 0o4755)
        _update(root)

        info = (root / "a.txt").stat()
        assert (1234, 2345, 0o4755) == (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
        assert b"new\n" == (root / "a.txt").read_bytes()

    def test_setid_dropped_when_owner_cannot_be_kept(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """When the owner cannot be given back, setuid/setgid never pass to the new owner."""
        root = make_workspace({"a.txt": b"old\n"})
        os.chmod(root / "a.txt", 0o6755)
        info = (root / "a.txt").stat()
        meta = atomic.FileMeta(info.st_uid + 1, info.st_gid + 1)

        def refuse(*_args: object) -> None:
            raise PermissionError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(atomic.os, "fchown", refuse)
        atomic.write_atomically(root / "a.txt", b"new\n", 0o6755, meta=meta)

        assert 0o755 == stat.S_IMODE((root / "a.txt").stat().st_mode)

    def test_xattrs_kept(self, make_workspace: MakeTree) -> None:
        """User extended attributes survive the replace (where the file system has them)."""
        root = make_workspace({"a.txt": b"old\n", "b.txt": b"b\n"})
        try:
            os.setxattr(root / "a.txt", "user.origin", b"review")
        except OSError as exc:
            pytest.skip(f"no user xattrs here: {exc.strerror}")
        txn = Transaction(Workspace(root))
        assert txn.update("a.txt", "new\n") is None
        assert txn.update("b.txt", "B\n") is None  # a journaled commit too
        assert txn.commit() is None

        assert b"review" == os.getxattr(root / "a.txt", "user.origin")

    @pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
    def test_created_files_honour_umask(
        self, make_workspace: MakeTree, umask: None, mask: int, mode: int
    ) -> None:
        """A created file gets 0o666 less the umask, like any new file."""
        root = make_workspace({})
        os.umask(mask)
        txn = Transaction(Workspace(root))
        assert txn.create("n.txt", "n\n") is None
        assert txn.create("d/m.sh", "m\n", 0o755) is None
        assert txn.commit() is None

        assert mode == stat.S_IMODE((root / "n.txt").stat().st_mode)
        assert 0o755 & ~mask == stat.S_IMODE((root / "d" / "m.sh").stat().st_mode)

    def test_umask_read_without_proc(self, monkeypatch: pytest.MonkeyPatch, umask: None) -> None:
        """Where /proc is missing the umask is still read (and left as it was)."""
        os.umask(0o027)
        real_open = open

        def no_proc(path: str, *args: object, **kwargs: object) -> object:
            if path == "/proc/self/status":
                raise FileNotFoundError(path)
            return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr("builtins.open", no_proc)
        assert 0o027 == atomic.current_umask()
        assert 0o027 == atomic.current_umask()


class TestReadOnlyAndHardLinks:
    def test_read_only_file_refused(self, make_workspace: MakeTree) -> None:
        """A 0444 file is READ_ONLY_FILE by default; nothing changes."""
        root = make_workspace({"a.txt": (b"old\n", 0o444)})
        before = snapshot_tree(root)
        report = apply(DIFF, root, record=False)

        assert [FailureCode.READ_ONLY_FILE] == [f.code for f in report.errors]
        assert before == snapshot_tree(root)

    def test_read_only_file_written_when_allowed(self, make_workspace: MakeTree) -> None:
        """With the guard off the file is written and stays 0444."""
        root = make_workspace({"a.txt": (b"old\n", 0o444)})
        policy = Policy(guards=GuardSwitches(read_only=False))
        report = apply(DIFF, root, record=False, policy=policy)

        assert report.ok, report.errors
        assert b"new\n" == (root / "a.txt").read_bytes()
        assert 0o444 == stat.S_IMODE((root / "a.txt").stat().st_mode)

    def test_read_only_delete_refused(self, make_workspace: MakeTree) -> None:
        """Deleting a read-only file is refused too."""
        root = make_workspace({"a.txt": (b"old\n", 0o444)})
        report = apply("--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n", root, record=False)

        assert [FailureCode.READ_ONLY_FILE] == [f.code for f in report.errors]
        assert (root / "a.txt").exists()

    def test_hardlinked_file_refused(self, make_workspace: MakeTree) -> None:
        """Editing one name of a hard-linked file is HARDLINKED_FILE by default."""
        root = make_workspace({"a.txt": b"old\n"})
        os.link(root / "a.txt", root / "twin.txt")
        before = snapshot_tree(root)
        report = apply(DIFF, root, record=False)

        assert [FailureCode.HARDLINKED_FILE] == [f.code for f in report.errors]
        assert before == snapshot_tree(root)

    def test_hardlink_split_when_allowed(self, make_workspace: MakeTree) -> None:
        """With the guard off, the edited name gets the new content and the twin keeps the old."""
        root = make_workspace({"a.txt": b"old\n"})
        os.link(root / "a.txt", root / "twin.txt")
        policy = Policy(guards=GuardSwitches(hard_links=False))
        report = apply(DIFF, root, record=False, policy=policy)

        assert report.ok, report.errors
        assert (b"new\n", b"old\n") == (
            (root / "a.txt").read_bytes(),
            (root / "twin.txt").read_bytes(),
        )

    def test_moving_hardlinked_file_unchanged_passes(self, make_workspace: MakeTree) -> None:
        """A pure rename of a hard-linked file splits nothing and is allowed."""
        root = make_workspace({"a.txt": b"old\n"})
        os.link(root / "a.txt", root / "twin.txt")
        moved = (
            "diff --git a/a.txt b/b.txt\nsimilarity index 100%\n"
            "rename from a.txt\nrename to b.txt\n"
        )
        report = apply(moved, root, record=False)

        assert report.ok, report.errors
        assert b"old\n" == (root / "b.txt").read_bytes()


class TestTempFiles:
    def test_user_file_at_old_temp_name_survives(self, make_workspace: MakeTree) -> None:
        """A user file named like the old fixed temp (`.a.txt.single.tmp`) is never touched."""
        root = make_workspace({"a.txt": b"old\n", ".a.txt.single.tmp": b"mine\n"})
        _update(root)

        assert b"mine\n" == (root / ".a.txt.single.tmp").read_bytes()
        assert {".a.txt.single.tmp", "a.txt"} == set(snapshot_tree(root).files())

    @pytest.mark.parametrize("count", [1, 2])
    def test_names_near_255_bytes(self, make_workspace: MakeTree, count: int) -> None:
        """Files whose names use the whole 255 bytes can be edited, alone or journaled."""
        names = [("x" * 250) + f"{n}.txt"[-5:].rjust(5, "_") for n in range(count)]
        assert all(len(name.encode()) == 255 for name in names)
        root = make_workspace({name: b"old\n" for name in names})
        txn = Transaction(Workspace(root))
        for name in names:
            assert txn.update(name, "new\n") is None
        assert txn.commit() is None

        assert {name: b"new\n" for name in names} == snapshot_tree(root).files()

    def test_sigkill_leaves_no_temp_after_recovery(self, make_workspace: MakeTree) -> None:
        """A single-file commit killed before its rename leaves a temp the next open removes."""
        root = make_workspace({"sub/a.txt": b"old\n"})
        _killed_before_rename(root, 'txn.update("sub/a.txt", "new\\n")')
        # an existing file's new content waits in the journal directory, not beside it
        assert ["a.txt"] == os.listdir(root / "sub")
        leftovers = os.listdir(root / ".patchsmith" / "journal")
        assert 1 == len(leftovers) and leftovers[0].startswith(".patchsmith-")

        Workspace(root)

        assert ["a.txt"] == os.listdir(root / "sub")
        assert b"old\n" == (root / "sub" / "a.txt").read_bytes()
        assert [] == os.listdir(root / ".patchsmith" / "journal")

    def test_sigkill_of_a_creation_leaves_no_temp_after_recovery(
        self, make_workspace: MakeTree
    ) -> None:
        """A new file's temp is made beside it (its folder's defaults apply), with a note
        that lets the next open remove it after a crash."""
        root = make_workspace({"sub/a.txt": b"old\n"})
        _killed_before_rename(root, 'txn.create("sub/b.txt", "new\\n")')
        assert 2 == len(os.listdir(root / "sub"))

        Workspace(root)

        assert ["a.txt"] == os.listdir(root / "sub")
        assert [] == os.listdir(root / ".patchsmith" / "journal")

    def test_another_filesystem_falls_back_to_a_temp_beside_the_file(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A file the journal directory cannot be renamed onto (EXDEV) is replaced through
        a temp beside it; nothing is left anywhere."""
        root = make_workspace({"sub/a.txt": b"old\n"})
        real_replace = os.replace
        journal = str(root / ".patchsmith" / "journal")

        def no_crossing(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
            if str(src).startswith(journal):
                raise OSError(errno.EXDEV, "Invalid cross-device link")
            real_replace(src, dst)

        monkeypatch.setattr("patchsmith.runtime.atomic.os.replace", no_crossing)
        txn = Transaction(Workspace(root))
        assert txn.update("sub/a.txt", "new\n") is None

        assert txn.commit() is None

        assert b"new\n" == (root / "sub" / "a.txt").read_bytes()
        assert ["a.txt"] == os.listdir(root / "sub")
        assert [] == os.listdir(root / ".patchsmith" / "journal")

    def test_first_journal_syncs_root_and_state_dir(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Making `.patchsmith/` and its journal directory syncs their parents."""
        root = make_workspace({"a.txt": b"a", "b.txt": b"b"})
        synced: list[Path] = []
        real_sync = atomic.fsync_directory

        def spy(path: Path) -> None:
            synced.append(Path(path))
            real_sync(path)

        for module in (statedir, journal):
            monkeypatch.setattr(module, "fsync_directory", spy)
        txn = Transaction(Workspace(root))
        assert txn.update("a.txt", "A") is None
        assert txn.update("b.txt", "B") is None
        assert txn.commit() is None

        real_root = Path(os.path.realpath(root))
        state = real_root / ".patchsmith"
        assert {real_root, state, state / "journal"} <= set(synced)


def _killed_before_rename(root: Path, call: str) -> None:
    """Run `call` on a transaction of `root` in a child killed at the commit's rename."""
    child = textwrap.dedent(
        f"""
        import os, sys
        from patchsmith.runtime import atomic
        from patchsmith.runtime.transaction import Transaction
        from patchsmith.runtime.workspace import Workspace

        def die(*_args):
            os._exit(17)

        atomic.os.replace = die
        txn = Transaction(Workspace(sys.argv[1]))
        {call}
        txn.commit()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", child, str(root)], check=False, timeout=60, capture_output=True
    )
    assert 17 == done.returncode, done.stderr
