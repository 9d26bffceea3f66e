"""The exact fast path (`engine.exact`) gives the line-based path's result, field for field.

`apply_hunk_list(..., fast=False)` forces the line-based path; the property below draws files
and hunks built to sit on the fast path's edges (near-duplicate lines, whitespace and
punctuation variants, CRLF and mixed endings, a missing final newline, `\\ No newline`
markers, context-only and unprefixed lines, line numbers near and far, section headers and
anchors) and asserts that both paths return equal `HunkResult`s: text, counts and every
outcome's reason, detail, line, strategy, candidates and notes. The refusal shortcuts of
`locate` (`cannot_place`) and `hunks` (the already-applied pre-test) are held to the plain
computations the same way.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine import EngineOptions, Hunk, apply_hunks, find_diffs
from patchsmith.engine.blocks import Op, block_from_hunk
from patchsmith.engine.exact import apply_exact
from patchsmith.engine.hunks import _already_applied, apply_hunk_list
from patchsmith.engine.locate import (
    LineKeys,
    _has_blank_line,
    _loosest,
    absent_from,
    cannot_place,
    place_block,
)
from patchsmith.engine.textlines import split_lines

# Lines that equal one another once whitespace, punctuation or indentation is ignored.
LINES = (
    "x",
    "x ",
    " x",
    "\tx",
    "y",
    "",
    " ",
    "def f():",
    "    return 1",
    "\treturn 1",
    "it's",
    "it\u2019s",
    "a-b",
    "a\u2014b",
    "z\u200b",
    "...",
    "# ... existing code ...",
    "}",
)

# Lines no file holds, loosely or not: hunks that cannot be placed.
FOREIGN = ("gone", "  gone  ", "it\u2019s gone")

OPTIONS = (
    EngineOptions.default(),
    EngineOptions.strict(),
    EngineOptions(indent_tolerant=False),
    EngineOptions(keep_line_endings=False),
    EngineOptions(honour_no_newline_marker=False),
    EngineOptions(check_anchors=False),
)


@st.composite
def sources(draw: st.DrawFn) -> str:
    # Tabs let the file's indentation style re-indent added lines: only in some files.
    alphabet = LINES if draw(st.integers(0, 3)) == 0 else [t for t in LINES if "\t" not in t]
    lines = draw(st.lists(st.sampled_from(alphabet), max_size=14))
    if draw(st.booleans()):
        # Mostly distinct lines, so that hunks often match at one place (the fast path's
        # domain), with some near-duplicates left among them.
        lines = [f"{t}#{i}" if draw(st.integers(0, 3)) else t for i, t in enumerate(lines)]
    if not lines:
        return draw(st.sampled_from(["", "\n", "x"]))
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "mixed"]))
    endings = [draw(st.sampled_from(["\n", "\r\n"])) if eol == "mixed" else eol for _ in lines]
    if not draw(st.booleans()):
        endings[-1] = ""
    text = "".join(c + e for c, e in zip(lines, endings, strict=True))
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("y", "y\r")  # a stray CR inside a line
    return text


@st.composite
def hunks(draw: st.DrawFn, source: str) -> Hunk:
    contents = split_lines(source).contents
    # Half the hunks are clean (the file's own lines, LF, no header text): the fast path's
    # domain; the rest add misquoted lines, odd lines, CRLF, section headers and anchors.
    clean = draw(st.booleans())
    body: list[str] = []
    if contents and (clean or draw(st.integers(0, 3))):
        first = draw(st.integers(0, len(contents) - 1))
        last = draw(st.integers(first + clean, min(len(contents), first + 5)))
        for text in contents[first:last]:
            if not clean and draw(st.integers(0, 9)) == 0:
                text = draw(st.sampled_from([*LINES, *FOREIGN]))  # a misquoted line
            body.append(draw(st.sampled_from([" ", " ", "-"])) + text)
        start = first
    else:
        body.extend(
            draw(st.sampled_from([" ", "-"])) + text
            for text in draw(st.lists(st.sampled_from([*LINES, *FOREIGN]), max_size=4))
        )
        start = draw(st.integers(0, 20))
    for _ in range(draw(st.integers(clean, 3))):
        at = draw(st.integers(0, len(body)))
        body.insert(at, "+" + draw(st.sampled_from([*LINES, "new", "x", f"new {at}"])))
    odd = draw(st.integers(0, 14))
    if odd == 0 and body:
        body.insert(draw(st.integers(0, len(body))), "\\ No newline at end of file")
    elif odd == 1 and not clean:
        body.append("")  # an empty line: blank context
    elif odd == 2 and not clean:
        body.append(draw(st.sampled_from(LINES)))  # an unprefixed line
    ending = "\n" if clean else draw(st.sampled_from(["\n", "\n", "\n", "\r\n"]))
    raw = [line + ending for line in body]
    if raw and draw(st.integers(0, 5)) == 0:
        raw[-1] = raw[-1].rstrip("\r\n")
    numbered = draw(st.integers(0, 3))
    old_start = old_count = None
    if numbered:
        # Near the place, or far from it (the rival check at the named place runs).
        old_start = max(start + 1 + draw(st.sampled_from([0, 0, 1, -2, 25, -25, 60])), 0)
        old_count = draw(st.sampled_from([0, 1, sum(1 for x in body if x[:1] in " -")]))
    section = anchors = None
    if clean:
        section, anchors = "", ()
    else:
        section = draw(st.sampled_from(["", "", "", "def f():", "x", "nowhere at all"]))
        anchors = draw(st.sampled_from([(), (), (), ("def f():",), ("absent anchor",)]))
    return Hunk(
        lines=tuple(raw),
        old_start=old_start,
        old_count=old_count,
        new_start=old_start,
        new_count=old_count,
        section=section,
        anchors=anchors,
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[Hunk], EngineOptions]:
    source = draw(sources())
    count = draw(st.integers(0, 3))
    return source, [draw(hunks(source)) for _ in range(count)], draw(st.sampled_from(OPTIONS))


@settings(max_examples=600)
@given(cases())
def test_fast_path_gives_the_line_based_result(case: tuple[str, list[Hunk], EngineOptions]) -> None:
    source, hunk_list, options = case
    fast = apply_hunk_list(source, hunk_list, options)
    slow = apply_hunk_list(source, hunk_list, options, fast=False)
    assert fast == slow


@settings(max_examples=300)
@given(cases())
def test_refusal_shortcuts_change_no_placement(
    case: tuple[str, list[Hunk], EngineOptions],
) -> None:
    source, hunk_list, options = case
    contents = split_lines(source).contents
    for hunk in hunk_list:
        block = block_from_hunk(hunk)
        joined = "\n".join(contents)  # the text at hand, so that the shortcuts run
        shortcut = place_block(contents, block, options, LineKeys(contents, joined))
        with mock.patch("patchsmith.engine.locate.cannot_place", return_value=False):
            plain = place_block(contents, block, options, LineKeys(contents, joined))
        assert shortcut == plain
        lines = split_lines(source)
        shortcut_applied = _already_applied(lines, block, LineKeys(lines.contents, joined))
        assert shortcut_applied == _already_applied(lines, block, None)


def _diff(*body: str, header: str = "@@ -2,3 +2,3 @@") -> str:
    return "--- a/f\n+++ b/f\n" + header + "\n" + "".join(line + "\n" for line in body)


def _both(source: str, diff: str) -> None:
    """The fast path answers this case, and answers what the line-based path does."""
    parsed = [h for f in find_diffs(diff) for h in f.hunks]
    options = EngineOptions.default()
    exact = apply_exact(source, parsed, options)
    assert exact is not None
    assert exact == apply_hunk_list(source, parsed, options, fast=False)


def test_fast_path_answers_crlf_files() -> None:
    _both("a\r\nb\r\nc\r\nd\r\n", _diff(" b", "-c", "+C", " d"))


def test_fast_path_keeps_a_missing_final_newline() -> None:
    _both("a\nb\nc\nd", _diff(" b", " c", "-d", "+D"))
    _both("a\nb\nc\nd", _diff(" a", "-b", "+B", " c"))


def test_fast_path_follows_the_no_newline_marker() -> None:
    _both("a\nb\nc\nd\n", _diff(" c", "-d", "+D", "\\ No newline at end of file"))
    _both("a\nb\nc\nd", _diff(" c", "-d", "\\ No newline at end of file", "+D"))


def test_fast_path_deleting_the_last_lines_of_a_file_without_final_newline() -> None:
    _both("a\nb\nc\nd", _diff("-c", "-d", header="@@ -3,2 +2,0 @@"))


def test_fast_path_far_line_number_without_a_rival() -> None:
    source = "".join(f"line {i}\n" for i in range(80))
    _both(source, _diff(" line 60", "-line 61", "+LINE", header="@@ -2,2 +2,2 @@"))


def test_fast_path_hands_back_a_rival_at_the_named_place() -> None:
    # The exact match is far from line 2; a trailing-space variant sits at line 2.
    source = "a\nb \nc\n" + "".join(f"pad {i}\n" for i in range(40)) + "a\nb\nc\n"
    parsed = [
        h
        for f in find_diffs(_diff(" a", "-b", "+B", " c", header="@@ -1,3 +1,3 @@"))
        for h in f.hunks
    ]
    assert apply_exact(source, parsed, EngineOptions.default()) is None
    assert apply_hunks(source, parsed).outcomes[0].reason == "ambiguous"


def test_fast_path_hands_back_what_it_cannot_prove() -> None:
    options = EngineOptions.default()
    cases = [
        ("a\nb\na\nb\n", _diff("-a", "+A", " b")),  # twice: a tie to break
        ("a\r\nb\n", _diff("-a", "+A", " b")),  # mixed endings
        ("\tx\ny\n", _diff(" \tx", "-y", "+z")),  # tabs: the indentation style may apply
        ("a\nb\n", _diff("-a", "+a")),  # no change
        ("a\nb\nab\n", _diff("-a", "+ab")),  # the new side is already in the file
        ("a\nb\n", _diff("-a", "+A", header="@@ -1 +1 @@ def f():")),  # a section header
    ]
    for source, diff in cases:
        parsed = [h for f in find_diffs(diff) for h in f.hunks]
        assert apply_exact(source, parsed, options) is None, (source, diff)


def test_fast_path_refuses_a_hunk_whose_removed_line_is_nowhere() -> None:
    _both("a\nb\nc\n", _diff(" a", "-gone", "+B", " c"))
    _both("a\nb\nc\n", _diff(" a", "-b", "+B", " c") + "@@ -9 +9 @@\n-gone\n+new\n")


def test_fast_path_hands_back_a_refusal_that_may_be_already_applied() -> None:
    # The removed line is nowhere, but every new line is in the file: the already-applied
    # check must run.
    parsed = [h for f in find_diffs(_diff(" a", "-gone", "+b")) for h in f.hunks]
    assert apply_exact("a\nb\n", parsed, EngineOptions.default()) is None


# Pieces of lines that folding changes (or removes), and words that occur inside others.
PIECES = ("x", "it's", "it\u2019s", "a\u2014b", "a-b", "\u00a0", " ", "\t", "\u200b", "...")


@settings(max_examples=400)
@given(
    st.lists(st.lists(st.sampled_from(PIECES), max_size=4).map("".join), max_size=8),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join),
    st.sampled_from(["\n", "\r\n"]),
)
def test_absent_means_no_line_has_the_key(lines: list[str], line: str, eol: str) -> None:
    """`absent_from` never calls present a line some file line equals once normalised."""
    text = eol.join(lines)
    if absent_from(text, line):
        key = _loosest(line)
        assert all(_loosest(other) != key for other in lines)


def test_many_hunks_on_a_big_file_go_line_by_line() -> None:
    source = "".join(f"line {i}\n" for i in range(100_000))
    hunks = [Hunk(lines=(f"-line {i}\n", f"+LINE {i}\n")) for i in range(0, 85_000, 5_000)]
    assert apply_exact(source, hunks, EngineOptions.default()) is None
    assert apply_exact(source, hunks[:16], EngineOptions.default()) is not None


def test_a_key_inside_many_longer_lines_is_not_called_absent() -> None:
    # Past a few occurrences inside longer lines the search gives up: "maybe present".
    text = "\n".join(f"call(x) + {i}" for i in range(20))
    assert not absent_from(text, "call(x)")
    assert absent_from("\n".join(f"call(x) + {i}" for i in range(3)), "call(x)")


@given(st.lists(st.sampled_from(["", " ", "\t", "x", " x", "\x0c", "\u00a0", "\r"]), max_size=6))
def test_blank_line_test_never_misses_a_blank_line(lines: list[str]) -> None:
    if any(not line.strip() for line in lines):
        assert _has_blank_line("\n".join(lines))


def test_cannot_place_without_removed_lines() -> None:
    ctx, add = Op.CONTEXT, Op.ADD
    text = "a\nb\nc"
    # Two solid context lines absent: nothing can place it.
    assert cannot_place([ctx, ctx, ctx, add], ["gone", "away", "a", "new"], text)
    # One of three missing: partial context might.
    assert not cannot_place([ctx, ctx, ctx, add], ["gone", "b", "a", "new"], text)
    # A single solid line, absent: the exact levels need it.
    assert cannot_place([ctx, add], ["gone", "new"], text)
    assert not cannot_place([ctx, add], ["a", "new"], text)
