"""Hypothesis strategies for the default-mode engine: pairs of texts and the clean diff of them.

`text_pairs()` draws a source and a target as line lists that share one indentation unit (two
spaces, four spaces or a tab), so that the engine's indentation-style conformance, a deliberate
rewrite, never applies; `mixed_style_pairs()` draws the opposite on purpose.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from hypothesis import strategies as st

__all__ = ["TextPair", "clean_diff", "distinct_pairs", "join", "mixed_style_pairs", "text_pairs"]

_BODIES = (
    "",
    "x",
    "x",
    "y",
    "return x",
    "pass",
    "é",
    "😀",
    "}",
    "a b",
    "x ",
    "a\tb",
    "中文",
    "'q'",
    "...",
)


@dataclass(frozen=True)
class TextPair:
    """A source and a target, as line contents and as text, and the diff context width."""

    source_lines: tuple[str, ...]
    target_lines: tuple[str, ...]
    source: str
    target: str
    context: int

    @property
    def distinct(self) -> bool:
        """Both sides' lines are non-blank and each side's lines are distinct."""
        return all(
            len(set(side)) == len(side) and all(x.strip() for x in side)
            for side in (self.source_lines, self.target_lines)
        )


def join(contents: list[str] | tuple[str, ...], newline: str, final_newline: bool) -> str:
    """Lines joined with `newline`, with or without one after the last."""
    if not contents:
        return ""
    return newline.join(contents) + (newline if final_newline else "")


def clean_diff(source: str, target: str, context: int = 3) -> str:
    """difflib's unified diff, with git's marker after a last line that has no newline."""
    out: list[str] = []
    for line in difflib.unified_diff(
        source.splitlines(keepends=True), target.splitlines(keepends=True), "a/f", "b/f", n=context
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.extend([line + "\n", "\\ No newline at end of file\n"])
    return "".join(out)


@st.composite
def _line(draw: st.DrawFn, unit: str) -> str:
    body = draw(
        st.one_of(
            st.sampled_from(_BODIES),
            st.text(alphabet="ab \t中😀\\-+@", max_size=5).map(lambda s: s.lstrip(" \t")),
        )
    )
    return unit * draw(st.integers(0, 2)) + body


@st.composite
def _pair(draw: st.DrawFn, source_unit: str, target_unit: str) -> TextPair:
    source = draw(st.lists(_line(source_unit), max_size=12))
    if draw(st.booleans()):
        target = draw(st.lists(_line(target_unit), max_size=12))
    else:
        target = list(source)
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(target)))
            cut = draw(st.integers(0, 2))
            target[at : at + cut] = draw(st.lists(_line(target_unit), max_size=3))
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return TextPair(
        tuple(source),
        tuple(target),
        join(source, newline, draw(st.booleans())),
        join(target, newline, draw(st.booleans())),
        draw(st.sampled_from([0, 1, 2, 3])),
    )


def text_pairs() -> st.SearchStrategy[TextPair]:
    """A source and a target indented with one unit: unicode, CRLF, tabs, blanks, repeats."""
    return st.sampled_from(["  ", "    ", "\t"]).flatmap(lambda unit: _pair(unit, unit))


def mixed_style_pairs() -> st.SearchStrategy[TextPair]:
    """A tab-indented source whose target adds space-indented lines, or the other way round."""
    return st.sampled_from([("\t", "    "), ("    ", "\t")]).flatmap(lambda u: _pair(*u))


def _distinct_line(prefix: str, unit: str) -> st.SearchStrategy[str]:
    return st.tuples(
        st.sampled_from(["", unit, unit * 2]),
        st.integers(0, 999),
        st.sampled_from(["", " é", " 😀", " '中'", " x ", "\t# c"]),
    ).map(lambda t: f"{t[0]}{prefix} {t[1]}{t[2]}")


@st.composite
def distinct_pairs(draw: st.DrawFn) -> TextPair:
    """A source of distinct non-blank lines and a real edit of it, its lines distinct too.

    Like `text_pairs()`, one indentation unit per example.
    """
    unit = draw(st.sampled_from(["  ", "    ", "\t"]))
    source = draw(st.lists(_distinct_line("old", unit), min_size=1, max_size=12, unique=True))
    fresh = iter(draw(st.lists(_distinct_line("new", unit), min_size=9, max_size=9, unique=True)))
    target = list(source)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(target)))
        cut = draw(st.integers(0, 2))
        target[at : at + cut] = [next(fresh) for _ in range(draw(st.integers(0 if cut else 1, 3)))]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    pair = TextPair(
        tuple(source),
        tuple(target),
        join(source, newline, draw(st.booleans())),
        join(target, newline, draw(st.booleans())),
        draw(st.sampled_from([0, 1, 2, 3])),
    )
    return pair
