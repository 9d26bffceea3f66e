"""The engine façade (`apply_hunks`, `apply_hunks_strict`, `find_diffs`): examples, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.engine.engine_strategies import (
    TextPair,
    clean_diff,
    distinct_pairs,
    mixed_style_pairs,
    text_pairs,
)

from patchsmith.engine import (
    EngineOptions,
    Hunk,
    Mode,
    SkipReason,
    Strategy,
    apply_hunks,
    apply_hunks_strict,
    find_diffs,
)
from patchsmith.errors import FailureCode, PartialApplyError

SOURCE = "def f():\n    a = 1\n    b = 2\n    return a + b\n"
DIFF = "--- a/f.py\n+++ b/f.py\n@@ -1,4 +1,4 @@\n def f():\n     a = 1\n-    b = 2\n+    b = 3\n"
TARGET = "def f():\n    a = 1\n    b = 3\n    return a + b\n"


class TestApplyHunks:
    def test_diff_text(self) -> None:
        """A clean diff as text applies and reports where and how."""
        result = apply_hunks(SOURCE, DIFF)

        assert (TARGET, True) == (result.text, result.ok)
        assert (Strategy.DIRECT, 1) == (result.outcomes[0].strategy, result.outcomes[0].line)

    def test_parsed_hunks(self) -> None:
        """Parsed hunks give the same result as the text they came from."""
        hunks = [h for f in find_diffs(DIFF) for h in f.hunks]

        assert TARGET == apply_hunks(SOURCE, hunks).text

    def test_mode_as_string(self) -> None:
        """The mode may be given as its string value."""
        assert TARGET == apply_hunks(SOURCE, DIFF, mode="default").text

    def test_compat_mode_with_hunks(self) -> None:
        """Compat mode accepts parsed hunks too (rendered back to diff text)."""
        hunk = Hunk((" a = 1\n", "-b = 2\n", "+b = 3\n"))

        assert "a = 1\nb = 3\n" == apply_hunks("a = 1\nb = 2\n", [hunk], mode=Mode.COMPAT).text

    def test_unknown_mode_is_misuse(self) -> None:
        """An unknown mode is a programmer error, raised as ValueError."""
        with pytest.raises(ValueError):
            apply_hunks(SOURCE, DIFF, mode="fast")

    def test_indent_tolerant_override(self) -> None:
        """`indent_tolerant=False` turns only that switch off."""
        diff = "@@\n def f():\n \ta = 1\n-\tb = 2\n+\tb = 3\n"

        assert apply_hunks(SOURCE, diff).ok
        assert not apply_hunks(SOURCE, diff, indent_tolerant=False).ok

    def test_indent_tolerant_override_in_compat(self) -> None:
        """An override in compat mode runs the switchable engine with compat options."""
        result = apply_hunks("a\r\nb\r\n", "@@\n-a\n+A\n b\n", mode="compat", indent_tolerant=True)

        assert "A\nb\n" == result.text

    def test_partial_result(self) -> None:
        """One applied hunk and one refused one give a partial, never ok, result."""
        diff = "@@\n a = 1\n-    b = 2\n+    b = 3\n@@\n-nowhere\n+x\n"
        result = apply_hunks(SOURCE.replace("    a = 1", "a = 1"), diff)

        assert (1, 2, True, False) == (result.applied, result.total, result.partial, result.ok)
        assert SkipReason.NO_MATCH == result.outcomes[1].reason


class TestApplyHunksStrict:
    def test_returns_text(self) -> None:
        """Every hunk applied: the new text is returned."""
        assert TARGET == apply_hunks_strict(SOURCE, DIFF)

    def test_raises_on_refusal(self) -> None:
        """A refused hunk raises PartialApplyError carrying a context-mismatch failure."""
        with pytest.raises(PartialApplyError) as caught:
            apply_hunks_strict(SOURCE, "@@\n-nowhere\n+x\n")

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [f.code for f in caught.value.failures]

    def test_raises_on_empty_diff(self) -> None:
        """A diff without hunks raises with a malformed-patch failure."""
        with pytest.raises(PartialApplyError) as caught:
            apply_hunks_strict(SOURCE, "")

        assert [FailureCode.MALFORMED_PATCH] == [f.code for f in caught.value.failures]


class TestFindDiffs:
    def test_default(self) -> None:
        """A unified diff splits into one file with its hunk."""
        files = find_diffs(DIFF)

        assert [("f.py", 1)] == [(f.new_path, len(f.hunks)) for f in files]

    def test_compat_needs_a_fence(self) -> None:
        """Compat mode, like the reference, reads diffs only inside a markdown fence."""
        fenced = f"```diff\n{DIFF}```\n"

        assert ([], 1) == (find_diffs(DIFF, mode="compat"), len(find_diffs(fenced, mode="compat")))


class TestBadInput:
    @pytest.mark.parametrize("diff", ["", "   \n\t\n", "hello\nworld\n"])
    def test_no_hunks(self, diff: str) -> None:
        """Empty, whitespace-only or prose input: no hunk, not ok, text unchanged."""
        result = apply_hunks(SOURCE, diff)

        assert (SOURCE, 0, False) == (result.text, result.total, result.ok)

    def test_binary_looking(self) -> None:
        """NUL bytes in the diff and the file give a structured outcome."""
        result = apply_hunks("a\x00b\n", "@@\n-a\x00b\n+c\x00\n")

        assert "c\x00\n" == result.text

    @pytest.mark.parametrize(
        "diff",
        [
            "--- a/f\n+++ b/f\n@@ -x,y +z @@\n-nope\n",
            "--- a/f\n+++\n@@ -99999999999999999999 +1 @@\n-nope\n+x\n",
            "+++ b/f\n--- a/f\n@@\n",
            "@@ -1,2 +1,2\n",
            "*** Begin Patch\n*** Update File: f\n@@\n-nope\n",
        ],
    )
    def test_malformed_headers(self, diff: str) -> None:
        """Malformed headers are refused as values, the text unchanged."""
        result = apply_hunks(SOURCE, diff)

        assert (SOURCE, False) == (result.text, result.ok)

    def test_only_context(self) -> None:
        """A hunk of only context lines is NO_CHANGE."""
        result = apply_hunks(SOURCE, "@@\n def f():\n     a = 1\n")

        assert [SkipReason.NO_CHANGE] == [o.reason for o in result.outcomes]

    @pytest.mark.slow
    def test_fifty_megabytes(self) -> None:
        """A 50 MB diff of one huge hunk is parsed and refused without raising."""
        body = "".join(f"-line {i} of the removed text, padded out\n" for i in range(1_200_000))
        diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n" + body + "+x\n"
        assert len(diff) > 50_000_000

        result = apply_hunks("short\n", diff)

        assert ("short\n", SkipReason.NO_MATCH) == (result.text, result.outcomes[0].reason)

    @pytest.mark.slow
    def test_fifty_megabyte_source(self) -> None:
        """A 50 MB file with a small hunk at its end applies."""
        source = "".join(f"row {i}\n" for i in range(5_500_000))
        assert len(source) > 50_000_000
        diff = "@@\n row 5499998\n-row 5499999\n+last\n"

        result = apply_hunks(source, diff)

        assert result.text.endswith("row 5499998\nlast\n")


class TestProperties:
    @settings(max_examples=300)
    @given(text_pairs())
    def test_clean_diff_target_or_refusal(self, pair: TextPair) -> None:
        """A clean diff gives exactly the target, or is not ok; a full refusal keeps the text."""
        diff = clean_diff(pair.source, pair.target, pair.context)

        result = apply_hunks(pair.source, diff)

        if result.ok:
            assert pair.target == result.text
        elif not result.partial:
            assert pair.source == result.text

    @settings(max_examples=300)
    @given(distinct_pairs().filter(lambda p: p.source != p.target))
    def test_distinct_lines_apply(self, pair: TextPair) -> None:
        """When every line is distinct and non-blank the clean diff always applies."""
        diff = clean_diff(pair.source, pair.target, pair.context)

        result = apply_hunks(pair.source, diff)

        assert (True, pair.target) == (result.ok, result.text)

    @settings(max_examples=300)
    @given(distinct_pairs().filter(lambda p: p.source != p.target and p.context > 0))
    def test_second_apply_refused(self, pair: TextPair) -> None:
        """Applying a diff with context to its own result is refused, the text unchanged."""
        diff = clean_diff(pair.source, pair.target, pair.context)

        again = apply_hunks(pair.target, diff)

        assert (False, pair.target) == (again.ok, again.text)

    @settings(max_examples=300)
    @given(text_pairs())
    def test_second_apply_never_other_text_when_refused(self, pair: TextPair) -> None:
        """A second application that refuses leaves the text exactly as it was."""
        diff = clean_diff(pair.source, pair.target, pair.context)

        again = apply_hunks(pair.target, diff)

        assert again.ok or again.partial or pair.target == again.text

    @settings(max_examples=200)
    @given(mixed_style_pairs())
    def test_other_indent_style_only_reindents(self, pair: TextPair) -> None:
        """Where the target mixes indentation styles, only leading whitespace may differ."""
        diff = clean_diff(pair.source, pair.target, pair.context)

        result = apply_hunks(pair.source, diff)

        def bodies(text: str) -> list[str]:
            return [line.lstrip(" \t") for line in text.splitlines(keepends=True)]

        if result.ok:
            assert bodies(pair.target) == bodies(result.text)
        elif not result.partial:
            assert pair.source == result.text

    @given(st.text(), st.text(), st.sampled_from(list(Mode)))
    def test_apply_never_raises(self, source: str, diff: str, mode: Mode) -> None:
        """Arbitrary text as file and diff gives a result in either mode."""
        result = apply_hunks(source, diff, mode=mode)

        assert len(result.outcomes) == result.total

    @given(st.text(alphabet=" -+@\\\n\r\tab*:/EndofFil"), st.sampled_from(list(Mode)))
    def test_find_diffs_never_raises(self, text: str, mode: Mode) -> None:
        """Arbitrary diff-like text splits into files in either mode without raising."""
        files = find_diffs(text, mode=mode)

        assert all(isinstance(h, Hunk) for f in files for h in f.hunks)

    @given(text_pairs())
    def test_unchanged_options_match_default(self, pair: TextPair) -> None:
        """Explicit default options behave exactly like the default mode."""
        diff = clean_diff(pair.source, pair.target, pair.context)

        assert apply_hunks(pair.source, diff) == apply_hunks(
            pair.source, diff, options=EngineOptions.default()
        )
