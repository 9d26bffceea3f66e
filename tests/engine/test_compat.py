"""Unit tests of the compat engine's steps in `patchsmith.engine.compat`.

Expected values of the quirky cases were recorded by running llm-diff-patcher
0.2.1 under node.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine import compat
from patchsmith.engine.model import SkipReason, Strategy

SOURCE = "alpha line one\nINSERTED\nbeta line two\ngamma line three\n"
HUNK = [" alpha line one\n", " beta line two\n", "-gamma line three\n", "+GAMMA\n"]


class TestNormalizeLineEndings:
    def test_one_pass_only(self) -> None:
        """`\\r\\r\\n` keeps one `\\r`: the replacement is a single pass."""
        assert "a\r\n" == compat.normalize_line_endings("a\r\r\n")

    def test_none_is_empty(self) -> None:
        """A missing text normalises to the empty string."""
        assert "" == compat.normalize_line_endings(None)


class TestHunkToBeforeAfter:
    def test_odd_lines(self) -> None:
        """Short lines are context; an astral first character or `\\` drops the line."""
        hunk = ["🎉", " x", "-y", "+z", "\\ No newline", "q"]

        assert ("xyq", "xzq") == compat.hunk_to_before_after(hunk)

    def test_lines_form(self) -> None:
        """The lines form keeps each side's lines separately."""
        assert (["a\n", "b\n"], ["a\n", "c\n"]) == compat.hunk_to_before_after_lines(
            [" a\n", "-b\n", "+c\n"]
        )


class TestSearchAndReplace:
    def test_first_occurrence_only(self) -> None:
        """Only the first occurrence is replaced."""
        assert "X b a" == compat.search_and_replace("a", "X", "a b a")

    def test_absent_is_none(self) -> None:
        """A search text that does not occur gives None."""
        assert compat.search_and_replace("zz", "X", "a b a") is None


class TestFlexibleSearchAndReplace:
    def test_strip_trims_the_whole_file(self) -> None:
        """The strip-blank-lines retry trims the original too: leading blank lines are lost."""
        actual = compat.flexi_just_search_and_replace("\nfoo\n\n\n", "\nFOO\n", "\n\na\nfoo\n\n")

        assert "a\nFOO\n" == actual

    def test_no_match_is_none(self) -> None:
        """When no preprocessing finds the text the result is None."""
        assert compat.flexible_search_and_replace("zz\n", "y\n", "a\n") is None

    def test_preprocs_are_the_references_four(self) -> None:
        """Four preprocessing rows are tried, relative indent included though unimplemented."""
        assert 4 == len(compat.PREPROCS)


class TestDirectlyApplyHunk:
    def test_short_repeated_context_refused(self) -> None:
        """Under 10 units of trimmed context that occurs twice is refused."""
        assert compat.directly_apply_hunk("x\nx\n", ["-x\n", "+y\n"]) is None

    def test_threshold_is_ten_units(self) -> None:
        """9 units that occur twice are refused; 10 are enough (mutant C01 moves the line)."""
        assert (
            compat.directly_apply_hunk("012345678\n012345678\n", ["-012345678\n", "+y\n"]) is None
        )
        assert "y\n0123456789\n" == compat.directly_apply_hunk(
            "0123456789\n0123456789\n", ["-0123456789\n", "+y\n"]
        )

    def test_long_repeated_context_replaces_first(self) -> None:
        """Long enough context that occurs twice replaces the first occurrence."""
        content = "0123456789\n0123456789\n"

        assert "changed\n0123456789\n" == compat.directly_apply_hunk(
            content, ["-0123456789\n", "+changed\n"]
        )

    def test_pure_insertion_is_none(self) -> None:
        """A hunk with nothing before is never applied directly."""
        assert compat.directly_apply_hunk("a\n", ["+b\n"]) is None


class TestDirectlyApplyBackDiff:
    def test_rebuilds_context_and_additions(self) -> None:
        """Context and `+` lines are kept, `-` lines dropped."""
        assert "a\nc\n" == compat.directly_apply_back_diff("a\nb\n", [" a\n", "-b\n", "+c\n"])

    def test_past_the_end_is_none(self) -> None:
        """Walking past the text's lines gives None."""
        assert compat.directly_apply_back_diff("a", [" a\n", " b\n", " c\n"]) is None

    def test_walk_may_reach_one_past_the_last_line(self) -> None:
        """`split` leaves an empty last piece: one step onto it is allowed, two are not."""
        assert "a\nb\n" == compat.directly_apply_back_diff("a\n", [" a\n", " b\n"])
        assert compat.directly_apply_back_diff("a\n", [" a\n", " b\n", " c\n"]) is None


class TestMakeNewLinesExplicit:
    def test_adds_the_files_extra_line(self) -> None:
        """A line the hunk's context skipped is written into the regenerated hunk."""
        expected = [
            " alpha line one\n",
            " \n",
            " beta line two\n",
            " \n",
            "-gamma line three\n",
            "+GAMMA\n",
            " \n",
            " \n",
            " \n",
        ]

        assert expected == compat.make_new_lines_explicit(SOURCE, HUNK)

    def test_short_rebuild_keeps_hunk(self) -> None:
        """Under 10 units of rebuilt context, the hunk comes back unchanged."""
        assert ["-a\n", "+b\n"] == compat.make_new_lines_explicit("a\n", ["-a\n", "+b\n"])

    def test_unidiff_refusal_is_none(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Where unidiff would throw, the result is None."""
        monkeypatch.setattr(compat, "format_lines", lambda changes, context: None)

        assert compat.make_new_lines_explicit(SOURCE, HUNK) is None


class TestApplyPartialHunk:
    def test_drops_wrong_context(self) -> None:
        """Wrong preceding context is dropped until the change applies."""
        actual = compat.apply_partial_hunk(
            "first line here\nsecond line here\n",
            ["WRONG context here\n"],
            ["-second line here\n", "+SECOND\n"],
            [],
        )

        assert "first line here\nSECOND\n" == actual

    def test_never_found_is_none(self) -> None:
        """Changes that cannot be found even without context give None."""
        assert compat.apply_partial_hunk("a\n", [" b\n"], ["-zzzzzzzzzzzz\n"], []) is None


class TestApplyHunk:
    def test_via_new_lines_explicit(self) -> None:
        """A hunk missing a file line still applies after the context is rebuilt."""
        assert "alpha line one\nINSERTED\nbeta line two\nGAMMA\n" == compat.apply_hunk(SOURCE, HUNK)

    def test_wrong_context_reference_result(self) -> None:
        """The reference's (odd) answer for a wrong context line is reproduced."""
        content = "first line here\nsecond line here\nthird line here\n"
        hunk = [" WRONG context\n", "-second line here\n", "+SECOND\n", " third line here\n"]

        assert "first line here\nWRONG context\n\nSECOND\nthird line here\n" == compat.apply_hunk(
            content, hunk
        )

    def test_context_only_returns_content(self) -> None:
        """A context-only hunk that does not match leaves fewer than 3 sections: content back."""
        assert "abc\n" == compat.apply_hunk("abc\n", [" nothing here at all\n"])

    def test_empty_content_gives_empty_string(self) -> None:
        """On empty content the (JS-falsy) empty string comes back, not None."""
        assert "" == compat.apply_hunk("", [" nothing here at all\n"])

    def test_unplaceable_is_none(self) -> None:
        """A change whose lines are nowhere in the file gives None."""
        assert compat.apply_hunk("a\nb\n", [" a\n", "-zzzzzzzzzzzzz\n", "+y\n", " b\n"]) is None


class TestProcessFencedBlock:
    def test_header_pair_splits_files(self) -> None:
        """A `---`/`+++` pair ends the hunk before it; a blank line before it goes too."""
        lines = ["--- a/x\n", "+++ b/x\n", "-a\n", "+b\n", "\n", "--- a/y\n", "+++ b/y\n"]
        lines += [" c\n", "-d\n", "```\n"]

        expected = (10, [("b/x", ["-a\n", "+b\n"]), ("b/y", [" c\n", "-d\n"])])

        assert expected == compat.process_fenced_block(lines, 0)

    def test_hunk_without_change_dropped(self) -> None:
        """A hunk with no `-`/`+` line before the next `@@` is discarded."""
        lines = ["--- a\n", "+++ b\n", " ctx\n", "@@ @@\n", "-x\n"]

        assert (6, [("b", ["-x\n"])]) == compat.process_fenced_block(lines, 0)


class TestFindDiffsCompat:
    def test_empty_old_name_is_unknown(self) -> None:
        """An empty `---` name is falsy, so the old path is `unknown`."""
        (group,) = compat.find_diffs_compat("```diff\n--- \n+++ b/x\n@@ @@\n-a\n+b\n```")

        assert ("unknown", "x", (("-a\n", "+b\n"),)) == (
            group.old_path,
            group.new_path,
            tuple(h.lines for h in group.hunks),
        )

    def test_proto_file_finds_nothing(self) -> None:
        """A `__proto__` file name makes the reference throw: nothing is found."""
        assert [] == compat.find_diffs_compat("```diff\n--- a\n+++ __proto__\n@@ @@\n-a\n+b\n```")

    def test_same_file_twice_is_one_group(self) -> None:
        """Hunks for the same file in two fences join one group, in order."""
        text = "```diff\n--- a/f\n+++ b/f\n-x\n```\n```diff\n--- a/f\n+++ b/f\n-y\n```"

        (group,) = compat.find_diffs_compat(text)

        assert (("-x\n",), ("-y\n",)) == tuple(h.lines for h in group.hunks)


class TestNormaliseModelText:
    def test_prose_before_first_hunk_dropped(self) -> None:
        """Text before the first `@@` is dropped and a placeholder header added."""
        assert "```diff\n--- source\n+++ source\n@@\n-a\n```" == compat.normalise_model_text(
            "Here:\n--- a/x\n+++ b/x\n@@\n-a"
        )

    def test_headers_kept_without_hunk_marker(self) -> None:
        """A text starting with a header pair and no `@@` keeps its own header."""
        assert "```diff\n--- a\n+++ b\n-x\n```" == compat.normalise_model_text("--- a\n+++ b\n-x")

    def test_single_line_gets_placeholder(self) -> None:
        """A one-line text cannot start with a header pair."""
        assert "```diff\n--- source\n+++ source\n--- a\n```" == compat.normalise_model_text("--- a")


class TestApplyHunksCompat:
    def test_direct_reports_line(self) -> None:
        """A hunk found verbatim is applied directly, at its 1-based line."""
        result = compat.apply_hunks_compat("x\na\nfoo\n\nb\n", "@@\n a\n-foo\n+bar\n")

        assert "x\na\nbar\n\nb\n" == result.text
        assert (Strategy.DIRECT, 2) == (result.outcomes[0].strategy, result.outcomes[0].line)

    def test_stripped_blank_lines(self) -> None:
        """The pipeline's trailing blank line makes most hunks apply after stripping."""
        result = compat.apply_hunks_compat("a\nfoo\n", "@@\n-foo\n+bar\n")

        assert ("a\nbar\n", 1) == (result.text, result.applied)
        assert (Strategy.DIRECT_STRIPPED, 2) == (
            result.outcomes[0].strategy,
            result.outcomes[0].line,
        )

    def test_new_lines_explicit(self) -> None:
        """A hunk applied after its context was rebuilt reports NEW_LINES_EXPLICIT."""
        result = compat.apply_hunks_compat("x = 1\n{\ndef f(x):\n\n", "@@\n x = 1\n def f(x):\n+\n")

        assert "x = 1\n{\ndef f(x):\n" == result.text
        assert Strategy.NEW_LINES_EXPLICIT == result.outcomes[0].strategy

    def test_partial_context(self) -> None:
        """A hunk applied with part of its context dropped reports PARTIAL_CONTEXT."""
        result = compat.apply_hunks_compat(
            SOURCE, "@@\n alpha line one\n beta line two\n-gamma line three\n+GAMMA\n"
        )

        assert "alpha line one\nINSERTED\nbeta line two\nGAMMA\n" == result.text
        assert (True, Strategy.PARTIAL_CONTEXT) == (
            result.outcomes[0].applied,
            result.outcomes[0].strategy,
        )

    def test_no_change_is_not_applied(self) -> None:
        """A truthy result equal to the input counts as NO_CHANGE, not applied."""
        result = compat.apply_hunks_compat("a\nfoo\n", "@@\n-foo\n+foo\n")

        assert (0, 1, SkipReason.NO_CHANGE) == (
            result.applied,
            result.total,
            result.outcomes[0].reason,
        )

    def test_no_match_keeps_text_and_continues(self) -> None:
        """An unplaceable hunk is skipped and the next one still applies."""
        diff = "@@\n a\n-zzzzzzzzzzzzzzz\n+y\n foo\n@@\n-foo\n+bar\n"

        result = compat.apply_hunks_compat("a\nfoo\n", diff)

        assert ("a\nbar\n", 1, 2) == (result.text, result.applied, result.total)
        assert SkipReason.NO_MATCH == result.outcomes[0].reason

    def test_nothing_found(self) -> None:
        """Without any hunk, total is 0 and the source comes back as it was."""
        result = compat.apply_hunks_compat("a\r\n", "just prose")

        assert ("a\r\n", 0, ()) == (result.text, result.total, result.outcomes)

    def test_reference_throw_is_malformed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Where the reference would throw, the hunk is skipped as MALFORMED."""
        monkeypatch.setattr(compat, "format_lines", lambda changes, context: None)

        result = compat.apply_hunks_compat(
            SOURCE, "@@\n alpha line one\n beta line two\n-gamma line three\n+GAMMA\n"
        )

        assert (SOURCE, SkipReason.MALFORMED) == (result.text, result.outcomes[0].reason)


DIFF_LINES = st.lists(
    st.one_of(
        st.sampled_from(["@@\n", "@@ -1 +1 @@\n", "--- a/x\n", "+++ b/x\n", "```diff\n", "```\n"]),
        st.builds(
            lambda op, body: op + body + "\n", st.sampled_from(" -+\\"), st.text(max_size=12)
        ),
        st.text(max_size=20),
    ),
    max_size=15,
).map("".join)


class TestNeverRaises:
    @settings(max_examples=150, deadline=None)
    @given(st.text(max_size=200), DIFF_LINES)
    def test_apply_hunks_compat(self, source: str, diff: str) -> None:
        """Arbitrary source and model text give a result whose counts are consistent."""
        result = compat.apply_hunks_compat(source, diff)

        assert result.total == len(result.outcomes)
        assert 0 <= result.applied <= result.total

    @settings(max_examples=150, deadline=None)
    @given(st.one_of(st.text(max_size=300), DIFF_LINES))
    def test_find_diffs_compat(self, text: str) -> None:
        """Arbitrary text gives groups that each name a file."""
        for group in compat.find_diffs_compat(text):
            assert group.new_path
