"""`read_file` and `write_file`: hash-checked single-file access."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import FileView, read_file, write_file
from patchsmith.errors import FailureCode, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.model.report import ApplyStatus
from patchsmith.policy import Policy
from patchsmith.store import AttemptKind, Store

SOURCE = b"def f():\n    return 1\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"a.py": SOURCE, "bin.dat": b"\x00\x01"})


class TestReadFile:
    def test_content_hash_and_numbered_lines(self, root: Path) -> None:
        """read_file returns the text, the sha256 of the bytes and `n | line` lines."""
        view = read_file(root, "a.py")

        assert FileView("a.py", SOURCE.decode(), sha(SOURCE), "utf-8") == view
        assert "1 | def f():\n2 |     return 1" == view.numbered
        assert {"path", "content", "sha256", "encoding", "numbered"} == set(view.to_json())

    def test_numbered_width_grows(self, tmp_path: Path) -> None:
        """Line numbers are right-aligned to the widest one."""
        root = make_tree(tmp_path, {"t.txt": b"x\n" * 10})

        assert read_file(root, "t.txt").numbered.splitlines()[0] == " 1 | x"

    @pytest.mark.parametrize(
        ("path", "code"),
        [
            ("missing.py", FailureCode.FILE_NOT_FOUND),
            ("../outside.py", FailureCode.PATH_OUTSIDE_WORKSPACE),
            ("bin.dat", FailureCode.BINARY_FILE),
        ],
    )
    def test_unreadable_raises_refusal(self, root: Path, path: str, code: FailureCode) -> None:
        """A path that cannot be read as text raises PatchRefused with the reason."""
        with pytest.raises(PatchRefused) as caught:
            read_file(root, path)

        assert [code] == [f.code for f in caught.value.failures]

    def test_missing_root(self, tmp_path: Path) -> None:
        """A root that is not a directory is FILE_NOT_FOUND."""
        with pytest.raises(PatchRefused) as caught:
            read_file(tmp_path / "nope", "a.py")

        assert FailureCode.FILE_NOT_FOUND == caught.value.failures[0].code


class TestWriteFile:
    def test_write_with_the_read_hash(self, root: Path) -> None:
        """Writing with the hash read_file gave replaces the file and records a write."""
        view = read_file(root, "a.py")

        report = write_file(root, "a.py", "def f():\n    return 2\n", view.sha256, "bump")

        assert ApplyStatus.APPLIED == report.status
        assert b"def f():\n    return 2\n" == (root / "a.py").read_bytes()
        assert [("a.py", Action.UPDATE)] == [(f.path, f.action) for f in report.files]
        with Store.open(root / ".patchsmith") as store:
            rec = store.get(report.attempt_id or "")
        assert rec is not None
        assert (AttemptKind.WRITE, "write:a.py", "bump") == (
            rec.kind,
            rec.proposal_id,
            rec.input_text,
        )

    def test_stale_hash_names_both(self, root: Path) -> None:
        """A file changed since it was read is STALE_FILE naming the expected and actual hash."""
        old = sha(SOURCE)
        (root / "a.py").write_bytes(b"changed = True\n")
        before = snapshot_tree(root)

        report = write_file(root, "a.py", "x = 1\n", old, "r")

        assert [FailureCode.STALE_FILE] == [e.code for e in report.errors]
        assert old in report.errors[0].message
        assert sha(b"changed = True\n") in report.errors[0].message
        assert sha(b"changed = True\n") == report.errors[0].current_sha256
        assert before == snapshot_tree(root)

    def test_hash_prefix_and_case_are_accepted(self, root: Path) -> None:
        """`sha256:` prefixes and upper-case hex are the same hash."""
        report = write_file(root, "a.py", "y = 1\n", "sha256:" + sha(SOURCE).upper(), "r")

        assert ApplyStatus.APPLIED == report.status

    def test_create_needs_allow_create(self, root: Path) -> None:
        """A new file is FILE_NOT_FOUND without allow_create, created with it."""
        refused = write_file(root, "new/b.py", "b = 1\n", None, "r")
        created = write_file(root, "new/b.py", "b = 1\n", None, "r", allow_create=True)

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in refused.errors]
        assert ApplyStatus.APPLIED == created.status
        assert b"b = 1\n" == (root / "new" / "b.py").read_bytes()

    def test_expected_hash_for_a_missing_file_is_stale(self, root: Path) -> None:
        """Expecting a hash for a file that is gone is STALE_FILE."""
        report = write_file(root, "gone.py", "x\n", sha(b"x"), "r", allow_create=True)

        assert [FailureCode.STALE_FILE] == [e.code for e in report.errors]
        assert "does not exist" in report.errors[0].message

    def test_no_hash_for_an_existing_file(self, root: Path) -> None:
        """Writing an existing file without its hash is FILE_ALREADY_EXISTS with the hash."""
        report = write_file(root, "a.py", "x\n", None, "r", allow_create=True)

        assert [FailureCode.FILE_ALREADY_EXISTS] == [e.code for e in report.errors]
        assert sha(SOURCE) == report.errors[0].current_sha256

    def test_same_content_is_no_change(self, root: Path) -> None:
        """Writing the content the file already has is NO_CHANGE."""
        report = write_file(root, "a.py", SOURCE.decode(), sha(SOURCE), "r")

        assert [FailureCode.NO_CHANGE] == [e.code for e in report.errors]

    def test_guard_violation_rolls_back(self, root: Path) -> None:
        """A write that breaks the syntax is refused by the guard and nothing changes."""
        before = snapshot_tree(root)

        report = write_file(root, "a.py", "def f(:\n", sha(SOURCE), "r")

        assert [FailureCode.SYNTAX_ERROR] == [e.code for e in report.errors]
        assert before == snapshot_tree(root)

    def test_empty_write_is_refused(self, root: Path) -> None:
        """Emptying a file through write_file is EMPTY_WRITE."""
        report = write_file(root, "a.py", "", sha(SOURCE), "r")

        assert [FailureCode.EMPTY_WRITE] == [e.code for e in report.errors]

    def test_policy_scope_applies(self, root: Path) -> None:
        """The policy's write scope applies to direct writes."""
        report = write_file(root, "a.py", "x\n", sha(SOURCE), "r", policy=Policy(include=("src/",)))

        assert [FailureCode.OUT_OF_SCOPE] == [e.code for e in report.errors]

    def test_check_writes_nothing(self, root: Path) -> None:
        """check=True reports the diff and leaves the file."""
        report = write_file(root, "a.py", "x = 1\n", sha(SOURCE), "r", check=True)

        assert (ApplyStatus.APPLIED, True) == (report.status, report.check)
        assert "+x = 1" in report.diff
        assert SOURCE == (root / "a.py").read_bytes()

    @pytest.mark.parametrize(
        ("path", "code"),
        [
            ("../x.py", FailureCode.PATH_OUTSIDE_WORKSPACE),
            (".git/hooks/pre-commit", FailureCode.PATH_OUTSIDE_WORKSPACE),
            (".patchsmith/patchsmith.db", FailureCode.PATH_OUTSIDE_WORKSPACE),
            ("bin.dat", FailureCode.BINARY_FILE),
        ],
    )
    def test_refused_paths(self, root: Path, path: str, code: FailureCode) -> None:
        """Paths outside the workspace, reserved ones, and binary files are refused."""
        report = write_file(root, path, "x\n", sha(b"\x00\x01"), "r", allow_create=True)

        assert code in {e.code for e in report.errors}
        assert not (root.parent / "x.py").exists()

    def test_missing_root_and_bad_policy(self, root: Path, tmp_path: Path) -> None:
        """A missing root is FILE_NOT_FOUND; a bad policy file is INVALID_POLICY."""
        missing = write_file(tmp_path / "nope", "a.py", "x\n", None, "r")
        (root / "patchsmith.toml").write_text("[policy]\nbogus = 1\n")
        bad = write_file(root, "a.py", "x\n", sha(SOURCE), "r")

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in missing.errors]
        assert [FailureCode.INVALID_POLICY] == [e.code for e in bad.errors]

    @given(content=st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40))
    def test_any_text_round_trips_or_is_refused(
        self, tmp_path_factory: pytest.TempPathFactory, content: str
    ) -> None:
        """Any text either lands exactly (read back equal) or is refused leaving the file."""
        root = make_tree(tmp_path_factory.mktemp("ws"), {"t.txt": b"seed\n"})

        report = write_file(root, "t.txt", content, sha(b"seed\n"), "r", record=False)

        expected = content if report.ok else "seed\n"
        assert expected == read_file(root, "t.txt").content


class TestCommitTimeStaleness:
    def test_change_after_staging_is_stale_with_both_hashes(
        self, root: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A file rewritten between staging and commit is STALE_FILE naming both hashes."""
        from patchsmith.runtime.transaction import Transaction

        real_commit = Transaction.commit

        def racing_commit(self: Transaction, **kwargs: object) -> object:
            (root / "a.py").write_bytes(b"raced = 1\n")
            return real_commit(self)

        monkeypatch.setattr(Transaction, "commit", racing_commit)

        report = write_file(root, "a.py", "x = 2\n", sha(SOURCE), "r")

        assert [FailureCode.STALE_FILE] == [e.code for e in report.errors]
        assert sha(SOURCE) in report.errors[0].message
        assert sha(b"raced = 1\n") in report.errors[0].message
        assert b"raced = 1\n" == (root / "a.py").read_bytes()
