"""Recorded diffs played backwards and forwards at exactly their lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.formats.script import Action
from patchsmith.pipeline.recorded import apply_exact, parse_sections, split_lines
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.gitdiff import render_git_diff_bytes

_LINES = st.sampled_from(
    [b"a\n", b"b\n", b"\n", b"x = 1\r\n", b"caf\xc3\xa9\n", b"\xe9t\xe9\n", b"  }\n", b"\tret\n"]
)
_TAIL = st.sampled_from([b"", b"end", b"\r", b"last\r"])


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    return b"".join(draw(st.lists(_LINES, max_size=30))) + draw(_TAIL)


def update(old: bytes, new: bytes, path: str = "f.txt") -> FileChange:
    return FileChange(path, Action.UPDATE, path, old, new, old_mode=0o644, new_mode=0o644)


class TestSplitLines:
    def test_splits_after_newlines_only(self) -> None:
        """A lone carriage return ends no line, as in git."""
        assert [b"a\r\n", b"b\rc\n", b"d"] == split_lines(b"a\r\nb\rc\nd")

    def test_empty(self) -> None:
        assert [] == split_lines(b"")


class TestRoundTrip:
    @given(contents(), contents())
    def test_backwards_and_forwards(self, old: bytes, new: bytes) -> None:
        """Any update's recorded diff gives back the old bytes backwards, the new forwards."""
        diff = render_git_diff_bytes([update(old, new)])
        sections = parse_sections(diff, [("f.txt", "f.txt")])

        assert sections is not None
        hunks = sections[0].hunks if 0 in sections else ()
        assert old == apply_exact(new, hunks, reverse=True)
        assert new == apply_exact(old, hunks)

    def test_created_and_deleted_files(self) -> None:
        """A creation undone leaves nothing; a deletion undone gives the whole file back."""
        text = b"one\ntwo"
        created = FileChange("n.txt", Action.CREATE, None, None, text, new_mode=0o755)
        deleted = FileChange("d.txt", Action.DELETE, "d.txt", text, None, old_mode=0o644)
        diff = render_git_diff_bytes([created, deleted])

        sections = parse_sections(diff, [("n.txt", "n.txt"), ("d.txt", "d.txt")])

        assert sections is not None
        assert "100755" == sections[0].new_mode
        assert sections[0].new_executable() is True
        assert "100644" == sections[1].old_mode
        assert sections[1].old_executable() is False
        assert b"" == apply_exact(text, sections[0].hunks, reverse=True)
        assert text == apply_exact(b"", sections[1].hunks, reverse=True)

    def test_mode_lines(self) -> None:
        change = FileChange(
            "s.sh", Action.UPDATE, "s.sh", b"x\n", b"x\n", old_mode=0o644, new_mode=0o755
        )
        sections = parse_sections(render_git_diff_bytes([change]), [("s.sh", "s.sh")])

        assert sections is not None
        assert (False, True) == (sections[0].old_executable(), sections[0].new_executable())
        assert () == sections[0].hunks

    def test_binary_section(self) -> None:
        change = update(b"\x00\x01", b"\x00\x02", "b.bin")
        sections = parse_sections(render_git_diff_bytes([change]), [("b.bin", "b.bin")])

        assert sections is not None
        assert sections[0].binary

    def test_quoted_names(self) -> None:
        """Names git quotes (spaces, non-ASCII) are matched by the header patchsmith wrote."""
        names = [("dir/é x.txt", "dir/é x.txt")]
        diff = render_git_diff_bytes([update(b"a\n", b"b\n", "dir/é x.txt")])

        sections = parse_sections(diff, names)

        assert sections is not None
        assert b"a\n" == apply_exact(b"b\n", sections[0].hunks, reverse=True)


class TestRefusals:
    def test_lines_not_where_the_header_says(self) -> None:
        """A region that moved or changed is `None`, never searched for."""
        diff = render_git_diff_bytes([update(b"a\nb\nc\n", b"a\nB\nc\n")])
        sections = parse_sections(diff, [("f.txt", "f.txt")])
        assert sections is not None
        hunks = sections[0].hunks

        assert apply_exact(b"new\na\nB\nc\n", hunks, reverse=True) is None
        assert apply_exact(b"a\nX\nc\n", hunks, reverse=True) is None

    def test_unknown_section(self) -> None:
        diff = render_git_diff_bytes([update(b"a\n", b"b\n", "other.txt")])

        assert parse_sections(diff, [("f.txt", "f.txt")]) is None

    def test_text_before_the_first_section(self) -> None:
        assert parse_sections(b"garbage\n", []) is None

    def test_duplicate_section(self) -> None:
        one = render_git_diff_bytes([update(b"a\n", b"b\n")])

        assert parse_sections(one + one, [("f.txt", "f.txt")]) is None

    def test_truncated_hunk(self) -> None:
        diff = render_git_diff_bytes([update(b"a\nb\n", b"a\nc\n")])

        assert parse_sections(diff[:-4], [("f.txt", "f.txt")]) is None

    def test_bad_hunk_line(self) -> None:
        diff = render_git_diff_bytes([update(b"a\n", b"b\n")]).replace(b"\n-a\n", b"\n?a\n")

        assert parse_sections(diff, [("f.txt", "f.txt")]) is None

    def test_no_hunk_header(self) -> None:
        diff = render_git_diff_bytes([update(b"a\n", b"b\n")]).replace(b"@@ -1 +1 @@", b"@@ x")

        assert parse_sections(diff, [("f.txt", "f.txt")]) is None

    def test_header_without_plus_line(self) -> None:
        diff = b"diff --git a/f.txt b/f.txt\n--- a/f.txt\n"

        assert parse_sections(diff, [("f.txt", "f.txt")]) is None

    def test_empty_diff(self) -> None:
        assert {} == parse_sections(b"", [("f.txt", "f.txt")])
