"""Changed spans: composed across edits, turned into opcodes that are a valid edit script."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import pairwise
from typing import AnyStr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.engine.engine_strategies import clean_diff, text_pairs

from patchsmith.engine import EngineOptions, find_diffs
from patchsmith.engine.hunks import apply_hunk_list
from patchsmith.engine.linediff import Opcode
from patchsmith.engine.linespans import LineIndex, LineSpan, SpanLog, span_opcodes


def _split(text: AnyStr, keepends: bool) -> list[AnyStr]:
    return LineIndex(text).lines(0, len(LineIndex(text)), keepends=keepends)


def assert_valid(codes: Sequence[Opcode], old: Sequence[object], new: Sequence[object]) -> None:
    """`codes` cover both sides in order, `equal` pairs equal lines, and replaying them on
    `old` gives `new`."""
    i = j = 0
    rebuilt: list[object] = []
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j)
        assert i2 >= i1 and j2 >= j1
        if tag == "equal":
            assert list(old[i1:i2]) == list(new[j1:j2])
            rebuilt.extend(old[i1:i2])
        else:
            assert i2 - i1 or j2 - j1
            rebuilt.extend(new[j1:j2])
        i, j = i2, j2
    assert (i, j) == (len(old), len(new))
    assert rebuilt == list(new)


_LINES = st.lists(st.sampled_from(["a", "b", "", "a ", "é", "}", "x\r"]), max_size=30)


@st.composite
def _edited(draw: st.DrawFn) -> tuple[list[str], list[str], tuple[LineSpan, ...]]:
    """Random lines, random replacements one after another, and the log of them."""
    old = draw(_LINES)
    current = list(old)
    log = SpanLog()
    for _ in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, len(current)))
        stop = draw(st.integers(start, min(start + 4, len(current))))
        added = draw(st.lists(st.sampled_from(["a", "b", "new", "", "é"]), max_size=4))
        current[start:stop] = added
        log.edit(start, stop, len(added))
    return old, current, log.spans


def _text(lines: Sequence[str], final: bool = True) -> str:
    return "".join(f"{line}\n" for line in lines) if final else "\n".join(lines)


def _linear_edit(spans: list[LineSpan], start: int, stop: int, count: int) -> None:
    """The log's edit as first written (a scan from the top, every later span renumbered):
    the reference the binary-searching `SpanLog.edit` must agree with."""
    i = 0
    while i < len(spans) and spans[i].new_stop < start:
        i += 1
    j = i
    while j < len(spans) and spans[j].new_start <= stop:
        j += 1
    shift_before = spans[i - 1].new_stop - spans[i - 1].old_stop if i else 0
    merged = spans[i:j]
    shift_after = merged[-1].new_stop - merged[-1].old_stop if merged else shift_before
    new_start = min(start, merged[0].new_start) if merged else start
    new_stop = max(stop, merged[-1].new_stop) if merged else stop
    grown = count - (stop - start)
    span = LineSpan(new_start - shift_before, new_stop - shift_after, new_start, new_stop + grown)
    later = [LineSpan(a, b, c + grown, d + grown) for a, b, c, d in spans[j:]]
    spans[i:] = [span, *later]


@st.composite
def _edit_runs(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, int]]]:
    """A text's line count and many replacements one after another, in any order."""
    size = draw(st.integers(0, 60))
    current = size
    edits = []
    for _ in range(draw(st.integers(0, 40))):
        start = draw(st.integers(0, current))
        stop = draw(st.integers(start, min(start + 3, current)))
        count = draw(st.integers(0, 3))
        edits.append((start, stop, count))
        current += count - (stop - start)
    return size, edits


class TestSpanLog:
    @settings(max_examples=300)
    @given(_edit_runs())
    def test_same_spans_as_the_linear_log(
        self, run: tuple[int, list[tuple[int, int, int]]]
    ) -> None:
        _, edits = run
        log, reference = SpanLog(), []
        for start, stop, count in edits:
            log.edit(start, stop, count)
            _linear_edit(reference, start, stop, count)
        assert log.spans == tuple(reference)

    @settings(max_examples=200)
    @given(_edit_runs(), _edit_runs())
    def test_then_is_the_steps_edits_bottom_up(
        self,
        first: tuple[int, list[tuple[int, int, int]]],
        second: tuple[int, list[tuple[int, int, int]]],
    ) -> None:
        """Composing a step top first (each span at its new start) is editing its spans
        from the bottom up, where the lines above keep their numbers."""
        log, step = SpanLog(), SpanLog()
        for edit in first[1]:
            log.edit(*edit)
        for edit in second[1]:
            step.edit(*edit)
        assert step.spans is not None
        reference = list(log.spans or ())
        if reference:
            for span in reversed(step.spans):
                _linear_edit(
                    reference, span.old_start, span.old_stop, span.new_stop - span.new_start
                )
        else:
            reference = list(step.spans)

        log.then(step.spans)

        assert log.spans == tuple(reference)

    def test_a_long_run_from_the_bottom_up_gives_up(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Each edit above many spans renumbers them all; past the budget the log says
        it no longer knows (`None`) instead of going quadratic."""
        monkeypatch.setattr("patchsmith.engine.linespans._RENUMBER_BUDGET", 50)
        log = SpanLog()
        for line in range(40, 0, -2):  # bottom up, each edit adding a line
            log.edit(line, line + 1, 2)
        assert log.spans is None
        log.edit(0, 1, 0)  # and stays so
        log.then([LineSpan(0, 1, 0, 1)])
        assert log.spans is None

    def test_a_diff_in_reverse_still_applies(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Hunks given from the bottom up past the budget: the text is right, the spans
        unknown (the line diff then aligns the whole texts)."""
        monkeypatch.setattr("patchsmith.engine.linespans._RENUMBER_BUDGET", 10)
        source = "".join(f"line {n}\n" for n in range(100))
        diff = "--- a/f\n+++ b/f\n" + "".join(
            f"@@ -{n + 1} +{n + 1} @@\n-line {n}\n+line {n}\n+added {n}\n"
            for n in range(90, 0, -10)
        )
        (found,) = find_diffs(diff)
        result = apply_hunk_list(source, found.hunks, EngineOptions(), fast=False)
        expected = "".join(
            f"line {n}\n" + (f"added {n}\n" if n % 10 == 0 and n else "") for n in range(100)
        )
        assert result.text == expected
        assert result.spans is None

    @settings(max_examples=300)
    @given(_edited())
    def test_composed_spans_give_a_valid_script(
        self, case: tuple[list[str], list[str], tuple[LineSpan, ...]]
    ) -> None:
        old, new, spans = case
        for a, b in pairwise(spans):
            assert a.old_stop < b.old_start and a.new_stop < b.new_start  # disjoint, apart
        codes = span_opcodes(LineIndex(_text(old)), LineIndex(_text(new)), spans)
        assert codes is not None
        assert_valid(codes, old, new)

    def test_edits_bottom_up_and_top_down_agree(self) -> None:
        top_down, bottom_up = SpanLog(), SpanLog()
        top_down.edit(2, 3, 2)  # line 2 -> two lines: line 8 is now 9
        top_down.edit(9, 10, 0)
        bottom_up.edit(8, 9, 0)
        bottom_up.edit(2, 3, 2)
        assert top_down.spans == bottom_up.spans == (LineSpan(2, 3, 2, 4), LineSpan(8, 9, 9, 9))

    def test_then_composes_a_later_step(self) -> None:
        log = SpanLog()
        log.edit(5, 6, 3)
        log.then([LineSpan(0, 1, 0, 0), LineSpan(6, 7, 5, 5)])  # inside the first span
        assert log.spans == (LineSpan(0, 1, 0, 0), LineSpan(5, 6, 4, 6))


class TestLineIndex:
    @settings(max_examples=200)
    @given(
        lines=st.lists(st.text(alphabet="ab\r é", max_size=12), max_size=400),
        final=st.booleans(),
        asked=st.lists(st.integers(0, 410), max_size=8),
    )
    def test_offsets_and_lines_match_a_split(
        self, lines: list[str], final: bool, asked: list[int]
    ) -> None:
        text = _text(lines, final)
        index = LineIndex(text)
        expected = text.split("\n")
        if expected[-1] == "":
            expected.pop()
        assert len(index) == len(expected)
        starts = [0]
        for line in expected:
            starts.append(starts[-1] + len(line) + 1)
        for line in asked:
            want = starts[line] if line < len(expected) else len(text)
            assert index.offset(line) == want
        assert index.lines(0, len(index)) == expected
        data = text.encode()
        assert _split(data, True) == data.splitlines(keepends=True) or "\r" in text

    def test_far_lines_are_found_by_counting(self) -> None:
        text = "".join(
            f"line {n}\n" if n % 7 else f"a much longer line {n} {'x' * 90}\n" for n in range(5000)
        )
        index = LineIndex(text)
        for line in (4999, 64, 65, 1000, 3, 2500, 0):
            assert text[index.offset(line) :].startswith(text.split("\n")[line] + "\n")
        assert index.offset(5000) == len(text)

    @settings(max_examples=50)
    @given(
        lines=st.lists(st.text(alphabet="ab\r é", max_size=6), min_size=100, max_size=300),
        final=st.booleans(),
        order=st.randoms(use_true_random=False),
    )
    def test_lines_asked_all_over_are_listed_at_once(
        self, lines: list[str], final: bool, order: random.Random
    ) -> None:
        """Past one line in `_DENSE` asked for, every line's start is listed at once; the
        answers stay those of a split, for text and bytes."""
        for text in (_text(lines, final), _text(lines, final).encode()):
            index = LineIndex(text)
            expected = _split(text, False)
            asked = list(range(len(expected) + 2))
            order.shuffle(asked)
            for line in asked:
                start = index.offset(line)
                if line < len(expected):
                    assert index.lines(line, line + 1) == [expected[line]]
                else:
                    assert start == len(text)
            assert index._table is not None

    def test_same_compares_by_chunks(self) -> None:
        big = "x" * 3_000_000 + "\n"
        other = "x" * 2_999_999 + "y\n"
        assert LineIndex(big).same(0, 1, LineIndex(big + "z\n"), 0)
        assert not LineIndex(big).same(0, 1, LineIndex(other), 0)


class TestSpanOpcodes:
    def test_wrong_spans_are_refused(self) -> None:
        old, new = LineIndex("a\nb\nc\n"), LineIndex("a\nB\nc\n")
        assert span_opcodes(old, new, [LineSpan(0, 1, 0, 1)]) is None  # line 1 differs
        assert span_opcodes(old, new, [LineSpan(1, 2, 1, 3)]) is None  # counts disagree
        assert span_opcodes(old, new, [LineSpan(2, 4, 2, 4)]) is None  # past the end
        codes = span_opcodes(old, new, [LineSpan(1, 2, 1, 2)])
        assert codes == [("equal", 0, 1, 0, 1), ("replace", 1, 2, 1, 2), ("equal", 2, 3, 2, 3)]

    def test_no_spans_is_all_equal(self) -> None:
        same = LineIndex("a\nb\n")
        assert span_opcodes(same, LineIndex("a\nb\n"), []) == [("equal", 0, 2, 0, 2)]
        assert span_opcodes(LineIndex(""), LineIndex(""), []) == [("equal", 0, 0, 0, 0)]

    def test_lines_compared_with_or_without_their_newline(self) -> None:
        old, new = LineIndex(b"a\nb"), LineIndex(b"a\nb\n")
        spans = [LineSpan(1, 2, 1, 2)]
        assert span_opcodes(old, new, spans, keepends=True) == [
            ("equal", 0, 1, 0, 1),
            ("replace", 1, 2, 1, 2),
        ]
        assert span_opcodes(old, new, spans) == [("equal", 0, 2, 0, 2)]


class TestEngineSpans:
    @pytest.mark.parametrize("fast", [True, False])
    @settings(max_examples=250, deadline=None)
    @given(pair=text_pairs(), data=st.data())
    def test_applied_hunks_describe_the_change(
        self, fast: bool, pair: object, data: st.DataObject
    ) -> None:
        """For random hunk sets, the spans the engine returns turn the source into the
        result (text lines and byte lines alike)."""
        from tests.engine.engine_strategies import TextPair

        assert isinstance(pair, TextPair)
        hunks = [
            h
            for f in find_diffs(clean_diff(pair.source, pair.target, pair.context))
            for h in f.hunks
        ]
        if hunks and data.draw(st.booleans()):
            hunks = data.draw(st.lists(st.sampled_from(hunks), min_size=1, max_size=len(hunks)))
        result = apply_hunk_list(pair.source, hunks, EngineOptions.default(), fast=fast)
        if result.spans is None:
            return
        old_text, new_text = pair.source, result.text
        codes = span_opcodes(LineIndex(old_text), LineIndex(new_text), result.spans)
        assert codes is not None
        assert_valid(codes, _split(old_text, False), _split(new_text, False))
        old_bytes, new_bytes = old_text.encode(), new_text.encode()
        raw = span_opcodes(LineIndex(old_bytes), LineIndex(new_bytes), result.spans, keepends=True)
        assert raw is not None
        assert_valid(raw, _split(old_bytes, True), _split(new_bytes, True))

    def test_exact_and_line_paths_record_spans(self) -> None:
        source = "".join(f"line {n}\n" for n in range(40))
        diff = "--- a/f\n+++ b/f\n@@ -10,3 +10,3 @@\n line 9\n-line 10\n+LINE 10\n line 11\n"
        hunks = [h for f in find_diffs(diff) for h in f.hunks]
        for fast in (True, False):
            result = apply_hunk_list(source, hunks, EngineOptions.default(), fast=fast)
            assert result.spans is not None
            assert any(s.old_start <= 10 < s.old_stop for s in result.spans)

    def test_lf_rewrite_of_a_crlf_file_has_no_spans(self) -> None:
        source = "a\r\nb\r\nc\r\n"
        diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        options = EngineOptions.compat()
        hunks = [h for f in find_diffs(diff) for h in f.hunks]
        result = apply_hunk_list(source, hunks, options)
        assert result.ok and result.spans is None


class TestRebuiltText:
    @settings(max_examples=300, deadline=None)
    @given(pair=text_pairs())
    def test_rebuilt_from_spans_is_the_joined_text(self, pair: object) -> None:
        """A big file's new text, rebuilt from the source and the spans, is the line-based
        path's joined text."""
        from tests.engine.engine_strategies import TextPair

        from patchsmith.engine import hunks as hunks_module

        assert isinstance(pair, TextPair)
        diff = clean_diff(pair.source, pair.target, pair.context)
        found = [h for f in find_diffs(diff) for h in f.hunks]
        joined = apply_hunk_list(pair.source, found, EngineOptions.default(), fast=False)
        saved = hunks_module.REBUILD_CHARS
        hunks_module.REBUILD_CHARS = 0
        try:
            rebuilt = apply_hunk_list(pair.source, found, EngineOptions.default(), fast=False)
        finally:
            hunks_module.REBUILD_CHARS = saved
        assert rebuilt == joined
        assert rebuilt.text == joined.text

    def test_a_big_file_is_rebuilt(self) -> None:
        source = "".join(f"value {n}\n" for n in range(200_000))
        diff = "".join(
            f"@@ -{n + 1},3 +{n + 1},3 @@\n value {n}\n"
            f"-value {n + 1}\n+VALUE {n + 1}\n value {n + 2}\n"
            for n in range(1000, 200_000, 9000)
        )
        found = [h for f in find_diffs("--- a/f\n+++ b/f\n" + diff) for h in f.hunks]
        result = apply_hunk_list(source, found, EngineOptions.default(), fast=False)
        assert result.ok and len(found) == result.applied
        expected = source
        for n in range(1000, 200_000, 9000):
            expected = expected.replace(f"\nvalue {n + 1}\n", f"\nVALUE {n + 1}\n", 1)
        assert expected == result.text
