"""Tests for `patchsmith.engine.diffparse`: splitting model text into file sections."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.diffparse import DiffParse, find_diffs, parse_diff, split_lines
from patchsmith.engine.model import FileDiff, Hunk


def only(text: str) -> FileDiff:
    parsed = parse_diff(text)
    assert parsed.problems == ()
    assert len(parsed.files) == 1
    return parsed.files[0]


class TestSplitLines:
    def test_keeps_endings(self) -> None:
        """Every line keeps its "\\n"; the last may have none."""
        assert ["a\n", "b"] == split_lines("a\nb")

    def test_crlf_text_read_as_lf(self) -> None:
        """Text whose every line ends in CRLF is read as LF."""
        assert ["a\n", "b\n"] == split_lines("a\r\nb\r\n")

    def test_mixed_endings_kept(self) -> None:
        """Mixed endings are left alone."""
        assert ["a\r\n", "b\n"] == split_lines("a\r\nb\n")

    def test_other_separators_are_not_line_breaks(self) -> None:
        """Only "\\n" splits lines (no form feeds or unicode separators)."""
        assert ["a\x0cb\u2028c\n"] == split_lines("a\x0cb\u2028c\n")


class TestGitHeaders:
    def test_clean_git_diff(self) -> None:
        """A git diff gives stripped paths, numbers, section and body lines."""
        text = (
            "diff --git a/src/x.py b/src/x.py\nindex 1234..5678 100644\n"
            "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,3 +1,3 @@ def f():\n a\n-b\n+c\n d\n"
        )

        diff = only(text)

        assert ("src/x.py", "src/x.py") == (diff.old_path, diff.new_path)
        assert (1, 3, 1, 3) == (
            diff.hunks[0].old_start,
            diff.hunks[0].old_count,
            diff.hunks[0].new_start,
            diff.hunks[0].new_count,
        )
        assert "def f():" == diff.hunks[0].section
        assert (" a\n", "-b\n", "+c\n", " d\n") == diff.hunks[0].lines
        assert (0, 9) == (diff.start_line, diff.end_line)

    def test_new_file(self) -> None:
        """`new file mode` and `/dev/null` give old_path None and the mode."""
        diff = only(
            "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n"
            "@@ -0,0 +1 @@\n+hi\n"
        )

        assert (None, "n.txt", "100644") == (diff.old_path, diff.new_path, diff.new_mode)

    def test_deleted_file(self) -> None:
        """`deleted file mode` gives new_path None."""
        diff = only(
            "diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n"
            "@@ -1 +0,0 @@\n-bye\n"
        )

        assert ("d.txt", None, "100644") == (diff.old_path, diff.new_path, diff.old_mode)

    def test_empty_new_file_without_hunks(self) -> None:
        """A git create of an empty file needs no hunk."""
        diff = only("diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n")

        assert (None, "e", ()) == (diff.old_path, diff.new_path, diff.hunks)

    def test_pure_rename(self) -> None:
        """`rename from/to` without hunks is a rename."""
        diff = only(
            "diff --git a/old.py b/new.py\nsimilarity index 100%\n"
            "rename from old.py\nrename to new.py\n"
        )

        assert ("old.py", "new.py", ()) == (diff.old_path, diff.new_path, diff.hunks)

    def test_rename_with_hunk(self) -> None:
        """A rename with an edit keeps both paths and the hunk."""
        diff = only(
            "diff --git a/a/x.py b/b/y.py\nsimilarity index 90%\nrename from a/x.py\n"
            "rename to b/y.py\n--- a/a/x.py\n+++ b/b/y.py\n@@ -1 +1 @@\n-a\n+b\n"
        )

        assert ("a/x.py", "b/y.py") == (diff.old_path, diff.new_path)

    def test_mode_change(self) -> None:
        """A mode change alone is a file section."""
        diff = only("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n")

        assert ("100644", "100755", ()) == (diff.old_mode, diff.new_mode, diff.hunks)

    def test_binary(self) -> None:
        """`Binary files ... differ` marks the section binary."""
        diff = only("diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n")

        assert diff.binary

    def test_git_binary_patch_data_skipped(self) -> None:
        """The data of a `GIT binary patch` is not read as anything else."""
        parsed = parse_diff(
            "diff --git a/i.png b/i.png\nGIT binary patch\nliteral 5\nMcmZ?\n\n"
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
        )

        assert [True, False] == [f.binary for f in parsed.files]

    def test_quoted_paths(self) -> None:
        """C-quoted paths (with octal UTF-8 escapes) are decoded."""
        diff = only(
            'diff --git "a/caf\\303\\251 x.txt" "b/caf\\303\\251 x.txt"\n'
            '--- "a/caf\\303\\251 x.txt"\n+++ "b/caf\\303\\251 x.txt"\n@@ -1 +1 @@\n-a\n+b\n'
        )

        assert "café x.txt" == diff.old_path == diff.new_path

    def test_git_line_with_spaces(self) -> None:
        """A git line's paths are split where both halves name the same file."""
        diff = only("diff --git a/my file b/my file\nold mode 100644\nnew mode 100755\n")

        assert "my file" == diff.old_path == diff.new_path

    def test_copy_is_a_problem(self) -> None:
        """Git copies cannot be expressed and are reported."""
        parsed = parse_diff("diff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\n")

        assert () == parsed.files
        assert "cop" in parsed.problems[0].message

    def test_git_header_without_anything_is_a_problem(self) -> None:
        """A git header that changes nothing is reported."""
        parsed = parse_diff("diff --git a/x b/x\n")

        assert (1, 1) == (parsed.problems[0].start_line, parsed.problems[0].end_line)


class TestPlainHeaders:
    def test_prefixes_and_timestamps(self) -> None:
        """Tab timestamps are dropped; plain old/new names patch the old file."""
        diff = only(
            "--- test_files/1-original.txt\t2025-03-07 19:06:12\n"
            "+++ test_files/1-modified.txt\t2025-03-07 19:06:12\n@@ -1 +1 @@\n-a\n+b\n"
        )

        assert ("test_files/1-original.txt",) * 2 == (diff.old_path, diff.new_path)

    def test_space_timestamp(self) -> None:
        """A timestamp after spaces is dropped too."""
        diff = only("--- x.py 2024-01-01 10:00:00 +0000\n+++ x.py 2024-01-01 10:00:00\n@@\n-a\n")

        assert "x.py" == diff.old_path

    def test_mixed_prefixes(self) -> None:
        """`--- path` with `+++ b/path` strips only the conventional prefix."""
        assert "h/u.py" == only("--- h/u.py\n+++ b/h/u.py\n@@\n-a\n+b\n").new_path
        assert "h/u.py" == only("--- a/h/u.py\n+++ h/u.py\n@@\n-a\n+b\n").old_path

    def test_dot_slash(self) -> None:
        """One leading `./` is dropped."""
        assert "x.py" == only("--- ./x.py\n+++ ./x.py\n@@\n-a\n+b\n").old_path

    def test_a_prefix_kept_when_not_paired(self) -> None:
        """`a/` on both sides is a directory, not git's prefix."""
        assert "a/x.py" == only("--- a/x.py\n+++ a/x.py\n@@\n-a\n+b\n").old_path

    def test_dev_null_sides(self) -> None:
        """Plain `/dev/null` creates and deletes strip the other side's prefix."""
        created = only("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n")
        deleted = only("--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")

        assert (None, "n.txt", "d.txt", None) == (
            created.old_path,
            created.new_path,
            deleted.old_path,
            deleted.new_path,
        )

    def test_header_without_hunks_is_a_problem(self) -> None:
        """An update header with no hunk is reported with its lines."""
        parsed = parse_diff("intro\n--- a/x\n+++ b/x\nprose\n")

        assert () == parsed.files
        assert (2, 3) == (parsed.problems[0].start_line, parsed.problems[0].end_line)

    def test_body_without_at_at(self) -> None:
        """Body lines right after a header form a numberless hunk."""
        diff = only("--- a/x\n+++ b/x\n-a\n+b\n")

        assert ("-a\n", "+b\n") == diff.hunks[0].lines
        assert diff.hunks[0].old_start is None

    def test_repeated_file_kept_separate(self) -> None:
        """The same file named twice gives two sections, in order."""
        parsed = parse_diff("--- a/x\n+++ b/x\n@@\n-a\n+b\n--- a/x\n+++ b/x\n@@\n-c\n+d\n")

        assert [("-a\n", "+b\n"), ("-c\n", "+d\n")] == [f.hunks[0].lines for f in parsed.files]

    def test_several_files(self) -> None:
        """Several files in one text are split in order."""
        parsed = parse_diff("--- a/x\n+++ b/x\n@@\n-a\n--- a/y\n+++ b/y\n@@\n-b\n")

        assert ["x", "y"] == [f.old_path for f in parsed.files]


class TestHunkHeaders:
    def test_bare_forms(self) -> None:
        """`@@`, `@@ @@` and `@@ ... @@` have no numbers."""
        for header in ("@@", "@@ @@", "@@ ... @@"):
            hunk = only(f"--- a/x\n+++ b/x\n{header}\n-a\n+b\n").hunks[0]

            assert (None, None) == (hunk.old_start, hunk.new_count)

    def test_omitted_counts_are_one(self) -> None:
        """`@@ -3 +3 @@` means one line on each side."""
        hunk = only("--- a/x\n+++ b/x\n@@ -3 +3 @@\n-a\n+b\n").hunks[0]

        assert (3, 1, 3, 1) == (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count)

    def test_several_hunks(self) -> None:
        """Hunks of one file are read in order, blank lines between them skipped."""
        diff = only("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\n@@ -9 +9 @@\n-c\n+d\n")

        assert [1, 9] == [h.old_start for h in diff.hunks]

    def test_empty_hunk_is_a_problem(self) -> None:
        """An `@@` line without body lines is reported."""
        parsed = parse_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n@@ -5 +5 @@\n-a\n+b\n")

        assert 1 == len(parsed.files[0].hunks)
        assert (3, 3) == (parsed.problems[0].start_line, parsed.problems[0].end_line)


class TestHunkBodies:
    def test_no_newline_marker_kept(self) -> None:
        """`\\ No newline at end of file` stays a line of the hunk."""
        hunk = only("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n").hunks[
            0
        ]

        assert "\\ No newline at end of file\n" == hunk.lines[1]

    def test_empty_line_inside_is_blank_context(self) -> None:
        """An empty line between body lines is a blank context line."""
        hunk = only("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n").hunks[0]

        assert (" a\n", " \n", "-b\n", "+c\n") == hunk.lines

    def test_trailing_blank_then_prose_ends_hunk(self) -> None:
        """Blank lines after a complete hunk, then prose, are not part of it."""
        hunk = only("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\n\nThat is all.\n").hunks[0]

        assert (" a\n", "-b\n", "+c\n") == hunk.lines

    def test_counts_claim_trailing_blank(self) -> None:
        """A trailing blank line the counts need is blank context."""
        hunk = only("```diff\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n\n```\n").hunks[0]

        assert (" a\n", "-b\n", "+c\n", " \n") == hunk.lines

    def test_numberless_trailing_blank_dropped(self) -> None:
        """Without counts, trailing blank lines before a fence are dropped."""
        hunk = only("```diff\n--- a/x\n+++ b/x\n@@\n a\n-b\n+c\n\n```\n").hunks[0]

        assert (" a\n", "-b\n", "+c\n") == hunk.lines

    def test_bullet_after_complete_hunk_is_prose(self) -> None:
        """A markdown bullet after a blank line ends a complete hunk."""
        hunk = only("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\n- Renamed the thing\n").hunks[0]

        assert ("-a\n", "+b\n") == hunk.lines

    def test_wrong_counts_do_not_cut_hunks(self) -> None:
        """Body lines past the counts still belong to the hunk."""
        hunk = only("--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n d\n").hunks[0]

        assert 4 == len(hunk.lines)

    def test_removed_dashes_when_counts_need_them(self) -> None:
        """`--- x` + `+++ y` inside an incomplete hunk are removed and added lines."""
        hunk = only("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n--- x\n+++ y\n").hunks[0]

        assert (" a\n", "--- x\n", "+++ y\n") == hunk.lines

    def test_header_pair_followed_by_hunk_wins(self) -> None:
        """A `---`/`+++`/`@@` run is a new file even if counts are too large."""
        parsed = parse_diff("--- a/x\n+++ b/x\n@@ -1,9 +1,9 @@\n-a\n--- a/y\n+++ b/y\n@@\n-b\n")

        assert ["x", "y"] == [f.old_path for f in parsed.files]

    def test_last_line_without_newline(self) -> None:
        """The text's last line keeps having no newline."""
        assert "+b" == only("--- a/x\n+++ b/x\n@@\n-a\n+b").hunks[0].lines[-1]

    def test_crlf_input(self) -> None:
        """A CRLF diff parses like its LF twin."""
        text = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"

        assert parse_diff(text) == parse_diff(text.replace("\n", "\r\n"))


class TestHeaderless:
    def test_headerless_hunks(self) -> None:
        """`@@` blocks without a header give one section with no paths."""
        diff = only("@@ -5,2 +5,2 @@\n a\n-b\n+c\n@@ -9 +9 @@\n-d\n+e\n")

        assert (None, None, False, 2) == (
            diff.old_path,
            diff.new_path,
            diff.has_header,
            len(diff.hunks),
        )

    def test_prose_and_fences(self) -> None:
        """Prose and fences around and between diffs are skipped."""
        text = (
            "Change x:\n\n```diff\n--- a/x\n+++ b/x\n@@\n-a\n+b\n```\n\nThen y:\n\n"
            "```patch\n--- a/y\n+++ b/y\n@@\n-c\n+d\n```\nDone.\n"
        )

        assert ["x", "y"] == [f.new_path for f in find_diffs(text)]

    def test_pure_prose_is_not_a_problem(self) -> None:
        """Text without any diff gives nothing and no problem."""
        assert DiffParse() == parse_diff("Hello.\n- a bullet\n+ another\n--- rule\n")


class TestEnvelope:
    def test_all_operations(self) -> None:
        """Add, Delete, Update with Move, anchors and End of File are read."""
        text = (
            "*** Begin Patch\n*** Add File: n.txt\n+hi\n+\n*** Delete File: d.txt\n"
            "*** Update File: a.txt\n*** Move to: b.txt\n@@ class A\n@@ def f\n x\n-y\n+z\n"
            "*** End of File\n*** End Patch\n"
        )

        added, deleted, moved = parse_diff(text).files

        assert (None, "n.txt", ("+hi\n", "+\n")) == (
            added.old_path,
            added.new_path,
            added.hunks[0].lines,
        )
        assert ("d.txt", None, ()) == (deleted.old_path, deleted.new_path, deleted.hunks)
        assert ("a.txt", "b.txt") == (moved.old_path, moved.new_path)
        assert (
            Hunk((" x\n", "-y\n", "+z\n"), anchors=("class A", "def f"), at_eof=True)
            == (moved.hunks[0])
        )

    def test_several_hunks_and_blank_context(self) -> None:
        """`@@` separates hunks; an empty line is blank context; trailing ones are dropped."""
        diff = only(
            "*** Begin Patch\n*** Update File: m.txt\n@@\n a\n\n-b\n@@\n-c\n+d\n\n*** End Patch\n"
        )

        assert [(" a\n", " \n", "-b\n"), ("-c\n", "+d\n")] == [h.lines for h in diff.hunks]

    def test_missing_end_in_heredoc(self) -> None:
        """A heredoc with no `*** End Patch` ends at `EOF`."""
        text = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\nEOF\n"

        assert ("-a\n", "+b\n") == only(text).hunks[0].lines

    def test_missing_end_in_fence(self) -> None:
        """A fence closes an envelope with no end marker."""
        diff = only("```\n*** Begin Patch\n*** Add File: x\n+a\n```\nmore prose\n")

        assert ("+a\n",) == diff.hunks[0].lines

    def test_padded_markers(self) -> None:
        """Whitespace around markers is tolerated."""
        diff = only(" *** Begin Patch\n  *** Update File: f\n@@\n-a\n+b\n *** End Patch \n")

        assert "f" == diff.old_path

    def test_without_begin(self) -> None:
        """File operations without `*** Begin Patch` are still read."""
        assert "f" == only("*** Update File: f\n@@\n-a\n+b\n").new_path

    def test_first_hunk_without_at_at(self) -> None:
        """Body lines right after Update File form the first hunk."""
        assert ("-a\n", "+b\n") == only("*** Update File: f\n-a\n+b\n").hunks[0].lines

    def test_numbered_hunk_header(self) -> None:
        """A numbered `@@` line inside an envelope keeps its numbers."""
        assert 4 == only("*** Update File: f\n@@ -4,1 +4,1 @@\n-a\n+b\n").hunks[0].old_start

    def test_empty_envelope_is_a_problem(self) -> None:
        """An envelope without operations is reported."""
        assert (
            "without any file operation"
            in parse_diff("*** Begin Patch\n*** End Patch\n").problems[0].message
        )

    def test_update_without_hunks_is_a_problem(self) -> None:
        """An Update with no hunk (and no move) is reported."""
        parsed = parse_diff("*** Begin Patch\n*** Update File: f\n*** End Patch\n")

        assert () == parsed.files
        assert "without hunks" in parsed.problems[0].message

    def test_empty_at_at_is_a_problem(self) -> None:
        """An `@@` with no body before End of File is reported."""
        parsed = parse_diff("*** Update File: f\n@@\n-a\n@@\n*** End of File\n*** End Patch\n")

        assert "without body" in parsed.problems[0].message

    def test_unknown_marker_is_a_problem(self) -> None:
        """An unknown `***` operation is reported with its line."""
        parsed = parse_diff("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n")

        assert (2, 2) == (parsed.problems[0].start_line, parsed.problems[0].end_line)

    def test_empty_path_is_a_problem(self) -> None:
        """An operation without a path is reported."""
        assert "without a path" in parse_diff("*** Add File:\n+a\n").problems[0].message

    def test_trailing_prose_after_unterminated_envelope(self) -> None:
        """Prose after the last marker of an unterminated envelope is not a problem."""
        assert () == parse_diff("*** Add File: x\n+a\n\nThis adds x.\n").problems

    def test_unprefixed_line_after_last_marker(self) -> None:
        """A stray line right after an unterminated Add is a problem, not a silent cut."""
        parsed = parse_diff("*** Add File: x\n+a\n b\n")

        assert (3, 3) == (parsed.problems[0].start_line, parsed.problems[0].end_line)

    def test_delete_listing_lines(self) -> None:
        """A Delete File followed by the removed lines is still a delete."""
        diff = only("*** Begin Patch\n*** Delete File: d\n-a\n-b\n*** End Patch\n")

        assert ("d", None) == (diff.old_path, diff.new_path)


class TestHostile:
    def test_ten_thousand_hunks(self) -> None:
        """10k hunks in one file are all read."""
        text = "--- a/x\n+++ b/x\n" + "@@ -1,2 +1,2 @@\n a\n-b\n+c\n" * 10_000

        assert 10_000 == len(only(text).hunks)

    def test_ten_megabytes_of_prose(self) -> None:
        """10 MB of prose parses (quickly) to nothing."""
        text = "Some prose - with + signs and --- dashes in it, and @ signs.\n" * 170_000

        assert DiffParse() == parse_diff(text)

    def test_long_blank_runs(self) -> None:
        """A huge count with a million blank lines stays linear."""
        text = "@@ -1,1000000 +1,1000000 @@\n" + "\n" * 1_000_000 + "x"

        assert 1_000_000 == len(only(text).hunks[0].lines)

    def test_many_empty_hunks(self) -> None:
        """Many empty `@@` lines give one problem each."""
        assert 1000 == len(parse_diff("@@\n" * 1000).problems)


class TestNeverRaises:
    @settings(max_examples=300)
    @given(
        st.lists(
            st.sampled_from(
                [
                    "--- a/x",
                    "+++ b/x",
                    "--- /dev/null",
                    "@@",
                    "@@ -1,2 +1,2 @@",
                    "@@ x",
                    " a",
                    "-b",
                    "+c",
                    "",
                    "\\ No newline at end of file",
                    "```",
                    "diff --git a/x b/x",
                    "new file mode 100644",
                    "rename from q",
                    "*** Begin Patch",
                    "*** Update File: f",
                    "*** Add File: g",
                    "*** Move to: h",
                    "*** End of File",
                    "*** End Patch",
                    "prose",
                    '"',
                ]
            ),
            max_size=30,
        ).map("\n".join)
    )
    def test_structured_noise(self, text: str) -> None:
        """Any mix of diff-like lines parses with valid line ranges."""
        parsed = parse_diff(text)
        count = max(1, len(split_lines(text)))

        assert all(1 <= p.start_line <= p.end_line <= count for p in parsed.problems)
        assert all(0 <= f.start_line < f.end_line <= count for f in parsed.files)

    @given(st.text())
    def test_arbitrary_text(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(parse_diff(text), DiffParse)
