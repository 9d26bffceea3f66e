"""Edges of the exact fast path that only a wrong answer shows (mutants E05, E07 of
`bench/mutate_engine.py`): the fast path must hand these back to the line-based path."""

from __future__ import annotations

from patchsmith.engine import EngineOptions, apply_hunks, find_diffs
from patchsmith.engine.exact import apply_exact


def _hunks(diff: str) -> list:  # type: ignore[type-arg]
    return [h for f in find_diffs(diff) for h in f.hunks]


def test_mostly_lf_file_with_crlf_lines_gives_added_lines_lf() -> None:
    """Mixed endings: the added line takes the file's dominant ending (LF), not the CRLF of
    the lines around it, so the fast path (one ending per file) must not answer."""
    source = "a\nb\nc\nd\r\ne\r\n"
    hunks = _hunks("--- a/f\n+++ b/f\n@@ -4,2 +4,3 @@\n d\n+X\n e\n")

    assert apply_exact(source, hunks, EngineOptions.default()) is None
    assert "a\nb\nc\nd\r\nX\ne\r\n" == apply_hunks(source, hunks).text


def test_rival_above_the_named_line_is_seen() -> None:
    """A whitespace variant 9 lines above the named line and an exact copy far below: the
    rival window reaches 20 lines above the named line, so this is AMBIGUOUS_MATCH."""
    pad = "".join(f"pad {i}\n" for i in range(10))
    far = "".join(f"far {i}\n" for i in range(60))
    source = pad + "a\nb \nc\n" + pad.replace("pad", "gap") + far + "a\nb\nc\n"
    hunks = _hunks("--- a/f\n+++ b/f\n@@ -20,3 +20,3 @@\n a\n-b\n+B\n c\n")

    assert apply_exact(source, hunks, EngineOptions.default()) is None
    assert "ambiguous" == apply_hunks(source, hunks).outcomes[0].reason
