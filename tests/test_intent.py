"""Intent boundaries: diff headers must name one file, and excerpts never carry secrets."""

from __future__ import annotations

from pathlib import Path

from tests.workspace_snapshot import snapshot_tree

from patchsmith import apply
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus

AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"


def _root(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


class TestPathMismatch:
    def test_different_paths_without_rename_are_refused(self, tmp_path: Path) -> None:
        """`--- a/src/x.py` with `+++ b/secrets/prod.env` patches neither file."""
        root = _root(tmp_path, {"src/x.py": "a = 1\n"})
        before = snapshot_tree(root)

        report = apply("--- a/src/x.py\n+++ b/secrets/prod.env\n@@\n-a = 1\n+a = 2\n", root)

        assert [FailureCode.PATH_MISMATCH] == [e.code for e in report.errors]
        assert "secrets/prod.env" in report.errors[0].message
        assert before == snapshot_tree(root)

    def test_git_section_without_rename_lines_is_refused(self, tmp_path: Path) -> None:
        """In a git diff, differing ---/+++ paths need 'rename from'/'rename to'."""
        root = _root(tmp_path, {"x.py": "a = 1\n"})
        text = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/y.py\n@@\n-a = 1\n+a = 2\n"

        report = apply(text, root)

        assert [FailureCode.PATH_MISMATCH] == [e.code for e in report.errors]

    def test_git_rename_is_a_move(self, tmp_path: Path) -> None:
        """With git's rename lines the same headers are a move."""
        root = _root(tmp_path, {"x.py": "a = 1\n"})
        text = (
            "diff --git a/x.py b/y.py\nsimilarity index 50%\nrename from x.py\nrename to y.py\n"
            "--- a/x.py\n+++ b/y.py\n@@\n-a = 1\n+a = 2\n"
        )

        report = apply(text, root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert "a = 2\n" == (root / "y.py").read_text(encoding="utf-8")

    def test_dev_null_side_is_a_create(self, tmp_path: Path) -> None:
        """One side /dev/null is a create, not a mismatch."""
        root = _root(tmp_path, {})

        report = apply("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+a = 1\n", root, record=False)

        assert ApplyStatus.APPLIED == report.status

    def test_diff_u_old_new_patches_the_old_file(self, tmp_path: Path) -> None:
        """`diff -u t/1-original.txt t/1-modified.txt` patches the original."""
        root = _root(tmp_path, {"t/1-original.txt": "a\nb\n"})
        text = "--- t/1-original.txt\n+++ t/1-modified.txt\n@@\n a\n-b\n+c\n"

        report = apply(text, root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert "a\nc\n" == (root / "t/1-original.txt").read_text(encoding="utf-8")

    def test_backup_suffix_patches_the_real_file(self, tmp_path: Path) -> None:
        """`--- x.py.orig` / `+++ x.py` patches x.py."""
        root = _root(tmp_path, {"x.py": "a = 1\n"})

        report = apply("--- x.py.orig\n+++ x.py\n@@\n-a = 1\n+a = 2\n", root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert "a = 2\n" == (root / "x.py").read_text(encoding="utf-8")

    def test_same_directory_other_extension_is_refused(self, tmp_path: Path) -> None:
        """Two files of one directory with different extensions are not two versions."""
        root = _root(tmp_path, {"config.py": "a = 1\n"})

        report = apply("--- config.py\n+++ secrets.env\n@@\n-a = 1\n+a = 2\n", root)

        assert [FailureCode.PATH_MISMATCH] == [e.code for e in report.errors]


class TestExcerptMasking:
    def test_secret_in_the_file_is_masked(self, tmp_path: Path) -> None:
        """A credential near a failed hunk is masked in the excerpt, the rest is shown."""
        source = f'import os\n\nKEY = "{AWS_KEY}"\nNAME = "demo"\n'
        root = _root(tmp_path, {"c.py": source})

        report = apply("--- a/c.py\n+++ b/c.py\n@@\n NAME = 'demo'\n-x = 1\n+x = 2\n", root)

        excerpt = report.errors[0].excerpt or ""
        assert AWS_KEY not in excerpt
        assert "KEY = [masked]" in excerpt
        assert 'NAME = "demo"' in excerpt
        assert AWS_KEY not in report.feedback()

    def test_ordinary_lines_are_not_masked(self, tmp_path: Path) -> None:
        """Without a credential the excerpt is the file's text."""
        root = _root(tmp_path, {"c.py": 'TOKEN_NAME = "session"\nx = 1\n'})

        report = apply("--- a/c.py\n+++ b/c.py\n@@\n-x = 3\n+x = 2\n", root)

        assert "[masked]" not in (report.errors[0].excerpt or "")
        assert 'TOKEN_NAME = "session"' in (report.errors[0].excerpt or "")
