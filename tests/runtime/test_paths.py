"""Path checking: every way out of the workspace is refused, ordinary paths are normalised."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.paths import canonical_path, locate_path, resolve_path


def _code(result: str | PatchFailure) -> FailureCode | None:
    return result.code if isinstance(result, PatchFailure) else None


class TestResolvePath:
    @pytest.mark.parametrize(
        ("user_path", "expected"),
        [
            ("a.py", "a.py"),
            ("./a.py", "a.py"),
            ("src/pkg/mod.py", "src/pkg/mod.py"),
            ("src//pkg/./mod.py", "src/pkg/mod.py"),
            ("src\\pkg\\mod.py", "src/pkg/mod.py"),
            ("...", "..."),
            ("a..b/c", "a..b/c"),
            ("foo%20bar.txt", "foo%20bar.txt"),
            (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
            (".gitignore", ".gitignore"),
            ("my.git/x", "my.git/x"),
        ],
    )
    def test_accepts_and_normalises(self, tmp_path: Path, user_path: str, expected: str) -> None:
        """Ordinary relative paths come back as POSIX paths without `./` or empty parts."""

        assert expected == resolve_path(tmp_path, user_path)

    @pytest.mark.parametrize(
        "user_path",
        [
            "",
            "   ",
            ".",
            "./",
            "/etc/passwd",
            "\\etc\\passwd",
            "C:\\Windows\\win.ini",
            "c:/windows",
            "C:relative",
            "\\\\host\\share\\x",
            "//host/share/x",
            "~",
            "~/.ssh/id_rsa",
            "~root/x",
            "..",
            "../x",
            "a/../../x",
            "a/..",
            "..\\x",
            "a\\..\\..\\x",
            "%2e%2e/x",
            "%2E%2E/x",
            "a/%2e%2e/%2e%2e/x",
            "%252e%252e/x",
            "..%2fx",
            "a%2F..%2Fx",
            "..%5cx",
            "%2fetc/passwd",
            "a\x00b",
            "a%00b",
            ".git/config",
            ".git/hooks/x",
            ".GIT/hooks/x",
            ".Git/HEAD",
            "sub/.git/config",
            ".git./config",
            ".git",
            ".patchsmith/journal/x",
            ".PatchSmith/store.db",
            "%2egit/config",
            "~%2f.ssh",
            " .. /x",
        ],
    )
    def test_refuses_outside_paths(self, tmp_path: Path, user_path: str) -> None:
        """Absolute, home, drive, UNC, traversal, NUL, empty and protected paths are refused."""

        assert FailureCode.PATH_OUTSIDE_WORKSPACE == _code(resolve_path(tmp_path, user_path))

    def test_message_names_refused_component(self, tmp_path: Path) -> None:
        """The message says which component was refused."""
        result = resolve_path(tmp_path, "src/.git/hooks/pre-commit")

        assert isinstance(result, PatchFailure)
        assert "'.git'" in result.message
        assert "src/.git/hooks/pre-commit" == result.file

    def test_traversal_message_names_component(self, tmp_path: Path) -> None:
        """A `..` refusal names the `..` component."""
        result = resolve_path(tmp_path, "a/../b")

        assert isinstance(result, PatchFailure)
        assert "'..'" in result.message

    def test_symlinked_directory_outside_is_refused(self, tmp_path: Path) -> None:
        """A parent directory that is a symlink to outside the root is SYMLINK_ESCAPE."""
        root, outside = tmp_path / "root", tmp_path / "outside"
        root.mkdir()
        outside.mkdir()
        (outside / "secret.txt").write_text("x")
        (root / "link").symlink_to(outside, target_is_directory=True)
        result = resolve_path(root, "link/secret.txt")

        assert FailureCode.SYMLINK_ESCAPE == _code(result)
        assert isinstance(result, PatchFailure)
        assert "'link'" in result.message
        assert "directory" in result.message

    def test_symlinked_file_outside_is_refused(self, tmp_path: Path) -> None:
        """A file that is a symlink to a file outside the root is SYMLINK_ESCAPE."""
        root = tmp_path / "root"
        root.mkdir()
        (tmp_path / "passwd").write_text("x")
        (root / "innocent.txt").symlink_to(tmp_path / "passwd")
        result = resolve_path(root, "innocent.txt")

        assert FailureCode.SYMLINK_ESCAPE == _code(result)
        assert isinstance(result, PatchFailure)
        assert "symlinked file" in result.message

    def test_dangling_symlink_outside_is_refused(self, tmp_path: Path) -> None:
        """A dangling symlink whose target would be outside is refused before anything is made."""
        root = tmp_path / "root"
        root.mkdir()
        (root / "new.txt").symlink_to(tmp_path / "does-not-exist")

        assert FailureCode.SYMLINK_ESCAPE == _code(resolve_path(root, "new.txt"))

    def test_absolute_symlink_chain_outside_is_refused(self, tmp_path: Path) -> None:
        """A symlink to a symlink that leaves the root is refused at the first link."""
        root = tmp_path / "root"
        root.mkdir()
        (tmp_path / "out").mkdir()
        (root / "b").symlink_to(tmp_path / "out")
        (root / "a").symlink_to(root / "b")

        assert FailureCode.SYMLINK_ESCAPE == _code(resolve_path(root, "a/x.txt"))

    def test_symlink_inside_is_followed(self, tmp_path: Path) -> None:
        """Symlinks that stay inside the root are accepted; the user's path is returned."""
        (tmp_path / "real").mkdir()
        (tmp_path / "real" / "f.txt").write_text("x")
        (tmp_path / "alias").symlink_to("real")
        (tmp_path / "f-link.txt").symlink_to("real/f.txt")

        assert "alias/f.txt" == resolve_path(tmp_path, "alias/f.txt")
        assert "f-link.txt" == resolve_path(tmp_path, "f-link.txt")

    def test_symlink_into_git_is_refused(self, tmp_path: Path) -> None:
        """A symlink inside the root that leads into `.git/` is refused like `.git/` itself."""
        (tmp_path / ".git" / "hooks").mkdir(parents=True)
        (tmp_path / "hooks").symlink_to(".git/hooks")
        result = resolve_path(tmp_path, "hooks/pre-commit")

        assert FailureCode.PATH_OUTSIDE_WORKSPACE == _code(result)
        assert isinstance(result, PatchFailure)
        assert "protected" in result.message

    def test_root_behind_symlink_is_fine(self, tmp_path: Path) -> None:
        """A workspace root reached through a symlink does not make its files escape."""
        (tmp_path / "real").mkdir()
        (tmp_path / "real" / "a.txt").write_text("x")
        (tmp_path / "root-link").symlink_to(tmp_path / "real")

        assert "a.txt" == resolve_path(tmp_path / "root-link", "a.txt")

    @given(st.lists(st.sampled_from(["a", "b", "..", ".", "", "%2e%2e", "c.txt"]), max_size=6))
    def test_accepted_paths_stay_inside(self, parts: list[str]) -> None:
        """Whatever the parts, an accepted path has no `..` and is relative."""
        result = resolve_path(Path("/nonexistent-root"), "/".join(parts))

        if isinstance(result, str):
            assert ".." not in result.split("/")
            assert not result.startswith("/")
            assert "" not in result.split("/")


class TestCanonicalPath:
    def test_follows_parent_symlinks(self, tmp_path: Path) -> None:
        """Symlinked parents are replaced by their real directory."""
        (tmp_path / "real").mkdir()
        (tmp_path / "alias").symlink_to("real")

        assert "real/x.txt" == canonical_path(tmp_path, "alias/x.txt", follow_final=False)

    def test_follow_final_only_when_asked(self, tmp_path: Path) -> None:
        """The last component's symlink is followed only with `follow_final`."""
        (tmp_path / "target.txt").write_text("x")
        (tmp_path / "link.txt").symlink_to("target.txt")

        assert "link.txt" == canonical_path(tmp_path, "link.txt", follow_final=False)
        assert "target.txt" == canonical_path(tmp_path, "link.txt", follow_final=True)

    def test_plain_path_unchanged(self, tmp_path: Path) -> None:
        """A path without symlinks is its own canonical path."""
        os.makedirs(tmp_path / "a" / "b")

        assert "a/b/c.txt" == canonical_path(tmp_path, "a/b/c.txt", follow_final=True)

    @given(
        links=st.lists(st.sampled_from(["a", "a/b", "c", "a/f.txt"]), unique=True, max_size=2),
        path=st.lists(st.sampled_from(["a", "b", "c", "f.txt", "new"]), min_size=1, max_size=4),
        follow_final=st.booleans(),
    )
    def test_same_as_realpath(self, links: list[str], path: list[str], follow_final: bool) -> None:
        """The no-link shortcut answers what `realpath` answers, links or not on the way."""
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            os.makedirs(root / "a" / "b")
            os.makedirs(root / "real" / "b")
            (root / "a" / "f.txt").write_text("x")
            (root / "real" / "f.txt").write_text("x")
            for link in links:
                target = root / link
                if target.is_dir():
                    os.rename(target, root / f"moved-{link.replace('/', '-')}")
                    target.symlink_to(root / "real", target_is_directory=True)
                elif target.exists():
                    target.unlink()
                    target.symlink_to(root / "real" / "f.txt")
            relative = "/".join(path)
            real_root = os.path.realpath(root)
            joined = os.path.join(real_root, *path)
            if follow_final:
                expected = os.path.realpath(joined)
            else:
                parent = os.path.realpath(os.path.dirname(joined))
                expected = os.path.join(parent, os.path.basename(joined))

            assert Path(os.path.relpath(expected, real_root)).as_posix() == canonical_path(
                root, relative, follow_final=follow_final
            )


class TestDirectoryNames:
    def test_trailing_slash_is_refused(self, tmp_path: Path) -> None:
        """A path ending with a separator names a directory, never a file to write."""
        for spelled in ("newdir/", "a\\b\\"):
            failure = resolve_path(tmp_path, spelled)

            assert isinstance(failure, PatchFailure)
            assert FailureCode.MALFORMED_PATCH == failure.code


class TestLocatePath:
    """`locate_path` answers exactly as `canonical_path(resolve_path(...))`, in one walk."""

    @staticmethod
    def tree(base: Path) -> Path:
        outside = base / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("s")
        root = base / "root"
        (root / "src" / "pkg").mkdir(parents=True)
        (root / "src" / "pkg" / "a.py").write_text("a")
        (root / "docs").mkdir()
        (root / "docs" / "b.md").write_text("b")
        (root / "linked").symlink_to("src")  # a folder link inside the root
        (root / "a_link.py").symlink_to("src/pkg/a.py")  # a file link inside the root
        (root / "escape").symlink_to(outside)  # a folder link out of the root
        (root / "secret.txt").symlink_to(outside / "secret.txt")
        (root / "dangling.py").symlink_to("missing.py")
        (base / "root-link").symlink_to(root)  # the root reached through a link
        return base

    @given(
        st.lists(
            st.sampled_from(
                [
                    "src",
                    "pkg",
                    "a.py",
                    "docs",
                    "b.md",
                    "linked",
                    "a_link.py",
                    "escape",
                    "secret.txt",
                    "dangling.py",
                    "new.py",
                    "..",
                    ".git",
                    ".",
                ]
            ),
            min_size=1,
            max_size=4,
        ),
        st.booleans(),
        st.booleans(),
    )
    def test_same_answer_as_resolve_then_canonical(
        self, parts: list[str], follow_final: bool, through_link: bool
    ) -> None:
        """Links in the root, out of it and dangling, `..`, `.git`, the root itself a link."""
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            base = self.tree(Path(folder))
            root = base / ("root-link" if through_link else "root")
            path = "/".join(parts)

            resolved = resolve_path(root, path)
            expected: str | FailureCode | None = (
                resolved.code
                if isinstance(resolved, PatchFailure)
                else canonical_path(root, resolved, follow_final=follow_final)
            )
            located = locate_path(root, path, follow_final=follow_final)

            assert expected == (located.code if isinstance(located, PatchFailure) else located)
