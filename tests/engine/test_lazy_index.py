"""The lazy merge's indexed anchor lookup answers exactly as the plain scan it replaced.

`_scan_anchor` is the scan `engine/lazy.py` used before the index (every chunk filtered the
places of its first or last line, line by line); the properties draw files and chunks from a
few repeated lines so that anchors are often shared, missing or unique only late.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.lazy import (
    SnippetMerge,
    SnippetRefusal,
    SnippetRefused,
    _Ambiguous,
    _anchor,
    _LineIndex,
    merge_snippet,
)

_LINES = st.sampled_from(["a", "b", "c", "", "}", "x = 1", "y"])


def _scan_anchor(
    keys: Sequence[str], wanted: Sequence[str], number: int, *, from_end: bool
) -> tuple[int, int] | SnippetRefused:
    where: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        where.setdefault(key, []).append(index)
    side = "last" if from_end else "first"
    if from_end:
        candidates = [i + 1 for i in where.get(wanted[-1], [])]
    else:
        candidates = list(where.get(wanted[0], []))
    previous: list[int] = []
    for length in range(1, len(wanted) + 1):
        if length > 1:
            previous = candidates
            if from_end:
                line = wanted[-length]
                candidates = [c for c in candidates if c - length >= 0 and keys[c - length] == line]
            else:
                line = wanted[length - 1]
                candidates = [
                    c
                    for c in candidates
                    if c + length <= len(keys) and keys[c + length - 1] == line
                ]
        if not candidates and previous:
            candidates = previous
            length -= 1
            break
        if not candidates:
            return SnippetRefused(
                SnippetRefusal.NO_ANCHOR,
                f"chunk {number}'s {side} lines do not occur in the file",
                tuple(wanted),
            )
        if len(candidates) == 1:
            return candidates[0], length
    else:
        length = len(wanted)
    starts = tuple(c - length if from_end else c for c in candidates)
    return SnippetRefused(
        SnippetRefusal.AMBIGUOUS,
        f"chunk {number}'s {side} lines occur {len(candidates)} times in the file and "
        "nothing in the snippet tells the places apart",
        tuple(wanted),
        starts,
        length,
    )


def _indexed(
    keys: list[str], wanted: list[str], *, from_end: bool
) -> tuple[int, int] | SnippetRefused:
    found = _anchor(_LineIndex(keys), wanted, 3, from_end=from_end)
    return found.refusal() if isinstance(found, _Ambiguous) else found


@settings(max_examples=400)
@given(
    keys=st.lists(_LINES, max_size=40),
    wanted=st.lists(_LINES, min_size=1, max_size=8),
    from_end=st.booleans(),
)
def test_indexed_anchor_equals_the_scan(keys: list[str], wanted: list[str], from_end: bool) -> None:
    assert _indexed(keys, wanted, from_end=from_end) == _scan_anchor(
        keys, wanted, 3, from_end=from_end
    )


@settings(max_examples=200)
@given(
    keys=st.lists(_LINES, min_size=1, max_size=40),
    start=st.integers(min_value=0, max_value=39),
    size=st.integers(min_value=1, max_value=6),
    from_end=st.booleans(),
)
def test_a_chunk_cut_from_the_file_is_found_as_by_the_scan(
    keys: list[str], start: int, size: int, from_end: bool
) -> None:
    """Chunks copied from the file always have an anchor; where it is matches the scan."""
    start %= len(keys)
    wanted = keys[start : start + size]
    assert _indexed(keys, wanted, from_end=from_end) == _scan_anchor(
        keys, wanted, 3, from_end=from_end
    )


@settings(max_examples=200)
@given(
    keys=st.lists(_LINES, max_size=40),
    pattern=st.lists(_LINES, min_size=1, max_size=4),
    floor=st.integers(min_value=0, max_value=45),
    limit=st.one_of(st.none(), st.integers(min_value=1, max_value=3)),
)
def test_places_from_a_line_on_are_the_first_of_all_places(
    keys: list[str], pattern: list[str], floor: int, limit: int | None
) -> None:
    index = _LineIndex(keys)
    counts = [index.count(line) for line in pattern]
    rarest = counts.index(min(counts))
    every = [
        s for s in range(len(keys) - len(pattern) + 1) if keys[s : s + len(pattern)] == pattern
    ]
    later = [s for s in every if s >= floor]
    assert index.starts(pattern, rarest, floor=floor, limit=limit) == later[:limit]


def test_many_chunks_with_common_edges_merge_in_order() -> None:
    """Chunks whose first and last lines (`}` and blanks) occur thousands of times still
    merge, each at the one place its rarer lines name."""
    blocks = [f"function f{i}() {{\n  let v = 0;\n  return v + {i};\n}}\n\n" for i in range(3000)]
    snippet = "".join(
        "// ... existing code ...\n}\n\n"
        f"function f{i}() {{\n  let v = 1;\n  return v + {i};\n}}\n\n"
        for i in range(1, 3000, 30)
    )
    result = merge_snippet("".join(blocks), snippet + "// ... existing code ...\n", "m.js")

    assert isinstance(result, SnippetMerge), result
    expected = "".join(
        b.replace("let v = 0;", "let v = 1;") if i % 30 == 1 else b for i, b in enumerate(blocks)
    )
    assert result.text == expected
