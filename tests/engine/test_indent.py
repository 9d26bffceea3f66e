"""Indentation shifts and file styles: `patchsmith.engine.indent`."""

from __future__ import annotations

import pytest

from patchsmith.engine.indent import (
    IndentMode,
    IndentShift,
    IndentStyle,
    indent_shift,
    indent_style,
    indent_unit,
    indent_width,
    leading_ws,
)


class TestIndentWidth:
    @pytest.mark.parametrize(
        ("ws", "tab", "width"),
        [("", 4, 0), ("    ", 4, 4), ("\t", 4, 4), ("  \t", 4, 4), ("\t  ", 8, 10), ("\t\t", 2, 4)],
    )
    def test_columns(self, ws: str, tab: int, width: int) -> None:
        """Tabs advance to the next tab stop; spaces count one each."""
        assert width == indent_width(ws, tab)


class TestLeadingWs:
    def test_spaces_and_tabs(self) -> None:
        """Leading spaces and tabs only, not other whitespace."""
        assert " \t" == leading_ws(" \tx = 1 ")

    def test_blank(self) -> None:
        """A whitespace-only line is all leading whitespace."""
        assert "  " == leading_ws("  ")


class TestIndentShiftPrefix:
    def test_added_prefix(self) -> None:
        """Block lines four columns short of the file's get a four-space prefix."""
        shift = indent_shift(["a", "  b"], ["    a", "      b"], IndentMode.PREFIX)

        assert IndentShift(IndentMode.PREFIX, remove="", add="    ") == shift

    def test_removed_prefix(self) -> None:
        """Block lines indented deeper than the file's lose the extra prefix."""
        shift = indent_shift(["\t\ta", "\t\t\tb"], ["\ta", "\t\tb"], IndentMode.PREFIX)

        assert shift is not None
        assert ("\t", "") == (shift.remove, shift.add)

    def test_inconsistent_is_none(self) -> None:
        """Lines shifted by different amounts have no prefix shift."""
        assert indent_shift(["a", "b"], ["  a", "    b"], IndentMode.PREFIX) is None

    def test_unchanged_is_none(self) -> None:
        """Identical indentation is no shift."""
        assert indent_shift(["  a"], ["  a"], IndentMode.PREFIX) is None

    def test_tab_space_swap_is_not_a_prefix(self) -> None:
        """Swapping tabs for spaces is a change of columns, not of prefix."""
        assert indent_shift(["\ta"], ["    a"], IndentMode.PREFIX) is None

    def test_blank_lines_carry_no_evidence(self) -> None:
        """Only lines non-blank on both sides are compared; none at all is no shift."""
        assert indent_shift(["", "  "], ["x", ""], IndentMode.PREFIX) is None


class TestIndentShiftColumns:
    def test_tabs_for_spaces(self) -> None:
        """Four-space indentation against a tab file is zero columns, written with tabs."""
        shift = indent_shift(["    a", "        b"], ["\ta", "\t\tb"], IndentMode.COLUMNS)

        assert IndentShift(IndentMode.COLUMNS, columns=0, tab=4, use_tabs=True) == shift

    def test_two_space_tabs(self) -> None:
        """A tab width of 2 is tried when 4 does not fit."""
        shift = indent_shift(["  a", "    b"], ["\ta", "\t\tb"], IndentMode.COLUMNS)

        assert shift is not None
        assert (0, 2) == (shift.columns, shift.tab)

    def test_smallest_delta_wins(self) -> None:
        """Among fitting tab widths the smallest column change is chosen."""
        shift = indent_shift(["a"], ["\t  a"], IndentMode.COLUMNS)

        assert shift is not None
        assert (4, 2) == (shift.columns, shift.tab)

    def test_inconsistent_is_none(self) -> None:
        """No tab width makes the deltas agree: no shift."""
        assert indent_shift(["a", "b"], ["  a", "   b"], IndentMode.COLUMNS) is None

    def test_identical_is_none(self) -> None:
        """The same indentation is no shift."""
        assert indent_shift(["\ta"], ["\ta"], IndentMode.COLUMNS) is None


class TestIndentShiftRewrite:
    def test_prefix_add(self) -> None:
        """PREFIX prepends what the file adds."""
        assert "    x" == IndentShift(IndentMode.PREFIX, add="  ").rewrite("  x")

    def test_prefix_remove(self) -> None:
        """PREFIX removes what the block had extra."""
        assert "\tx" == IndentShift(IndentMode.PREFIX, remove="\t").rewrite("\t\tx")

    def test_prefix_remove_partial(self) -> None:
        """A line shallower than the removed prefix loses what it has of it."""
        assert "x" == IndentShift(IndentMode.PREFIX, remove="    ").rewrite("  x")

    def test_columns_with_tabs(self) -> None:
        """COLUMNS re-indents to the new width, tabs first when the file uses them."""
        shift = IndentShift(IndentMode.COLUMNS, columns=4, tab=4, use_tabs=True)

        assert "\t\t  x" == shift.rewrite("      x")

    def test_columns_with_spaces(self) -> None:
        """Without tabs, COLUMNS writes spaces."""
        assert "  x" == IndentShift(IndentMode.COLUMNS, columns=-2).rewrite("    x")

    def test_columns_never_negative(self) -> None:
        """A shift past column 0 stops at 0."""
        assert "x" == IndentShift(IndentMode.COLUMNS, columns=-8).rewrite("  x")

    def test_blank_untouched(self) -> None:
        """Whitespace-only lines are not re-indented."""
        assert "   " == IndentShift(IndentMode.PREFIX, add="\t").rewrite("   ")


class TestIndentStyle:
    def test_tabs(self) -> None:
        """A file indented only with tabs is a tab file."""
        assert IndentStyle(tabs=True, spaces=False) == indent_style(["a", "\tb", "\t\tc", "\td"])

    def test_spaces_with_unit(self) -> None:
        """A space file records its indentation unit."""
        assert IndentStyle(tabs=False, spaces=True, unit=2) == indent_style(
            ["a", "  b", "    c", "  d"]
        )

    def test_mixed(self) -> None:
        """Both styles present: mixed."""
        style = indent_style(["\ta", "  b", "\tc", "  d"])

        assert (True, True) == (style.tabs, style.spaces)

    def test_whitespace_only_lines_ignored(self) -> None:
        """A whitespace-only line is not indentation (regression: a lone tab made a tab file)."""
        assert IndentStyle(tabs=False, spaces=False) == indent_style(["\t", "  ", "x"])


class TestAppliesTo:
    TABS = IndentStyle(tabs=True, spaces=False)
    SPACES = IndentStyle(tabs=False, spaces=True)

    def test_mixed_file_never(self) -> None:
        """No style is imposed from a mixed file."""
        assert not IndentStyle(tabs=True, spaces=True).applies_to(["    x"])

    def test_old_lines_in_other_style(self) -> None:
        """A block whose old lines use spaces in a tab file is conformed."""
        assert self.TABS.applies_to(["def f():", "    x"])

    def test_old_lines_in_file_style(self) -> None:
        """A block whose old lines use tabs in a tab file keeps its added lines."""
        assert not self.TABS.applies_to(["\tx"])

    def test_old_lines_unindented(self) -> None:
        """A block with no indented old line is conformed."""
        assert self.TABS.applies_to(["def f():", ""])

    def test_space_file(self) -> None:
        """In a space file, only tab-indented old lines trigger conformance."""
        assert (True, False) == (self.SPACES.applies_to(["\tx"]), self.SPACES.applies_to(["  x"]))


class TestConform:
    def test_spaces_to_tabs(self) -> None:
        """In a tab file, space indentation becomes tabs by the block's unit."""
        style = IndentStyle(tabs=True, spaces=False)

        assert "\t\t  x" == style.conform("          x", 4)

    def test_tabs_to_spaces(self) -> None:
        """In a space file, tabs become the file's unit of spaces."""
        style = IndentStyle(tabs=False, spaces=True, unit=2)

        assert "    x" == style.conform("\t\tx", 4)

    def test_unindented_and_blank_untouched(self) -> None:
        """Lines with no indentation, and blank lines, stay as they are."""
        style = IndentStyle(tabs=True, spaces=False)

        assert ("x", "    ") == (style.conform("x", 4), style.conform("    ", 4))

    def test_same_style_untouched(self) -> None:
        """A line already in the file's style is unchanged."""
        assert "\tx" == IndentStyle(tabs=True, spaces=False).conform("\tx", 4)


class TestIndentUnit:
    def test_gcd(self) -> None:
        """The unit is the gcd of the indentations."""
        assert 3 == indent_unit(["a", "   b", "      c"])

    def test_steps_when_gcd_too_small(self) -> None:
        """An odd single space is outvoted by the common step."""
        assert 4 == indent_unit(["a", "    b", "        c", "     d", "x", "    y"])

    def test_default(self) -> None:
        """No indentation at all: 4."""
        assert 4 == indent_unit(["a", "", "\tb"])
