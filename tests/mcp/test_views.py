"""mcp/views.py: numbered lines within a character bound, whole lines only."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.mcp.views import bounded_lines

LINES = st.lists(st.text(alphabet="ab \t", max_size=40).map(lambda t: t + "\n"), max_size=60)


@given(LINES, st.integers(min_value=20, max_value=3000))
def test_bounded_and_in_order(lines: list[str], max_chars: int) -> None:
    """Within the bound, from line 1, lines whole; truncated says whether any is left out."""
    if not lines:
        return
    view = bounded_lines(lines, 1, len(lines), max_chars)

    assert view.lines, "at least one line is shown"
    if len(view.lines) > 1 or not view.truncated:
        assert sum(len(line) + 1 for line in view.lines) <= max_chars
        for number, line in enumerate(view.lines, 1):
            assert line.split(" | ", 1)[1] == lines[number - 1].rstrip("\n")
    assert view.truncated == (len(view.lines) < len(lines) or "[line cut at" in view.lines[-1])


def test_a_range_is_numbered_from_its_start() -> None:
    lines = [f"line {n}\n" for n in range(1, 13)]

    view = bounded_lines(lines, 9, 12, 10_000)

    assert (" 9 | line 9", "12 | line 12") == (view.lines[0], view.lines[-1])
    assert not view.truncated


def test_a_first_line_longer_than_the_bound_is_cut() -> None:
    view = bounded_lines(["x" * 500 + "\n", "y\n"], 1, 2, 100)

    assert 1 == len(view.lines)
    assert view.truncated
    assert "[line cut at" in view.lines[0]
