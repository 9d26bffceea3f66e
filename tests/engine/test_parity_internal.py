"""Step-by-step parity with the reference's functions: `parity_internal.json` (29 hunks).

Every intermediate step is compared, because the fallback chain hides a wrong
step behind a right end result.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.parity import by_name, golden_cases

from patchsmith.engine import compat
from patchsmith.engine.dmp import diff_lines

CASES = golden_cases("parity_internal.json", by_name)


def _js_result(ok: bool, value: str) -> str | None:
    """The golden's (ok, value) pair as the reference's `string | undefined`."""
    return value if ok else None


class TestInternalSteps:
    @pytest.mark.parametrize("case", CASES)
    def test_hunk_to_before_after(self, case: dict[str, Any]) -> None:
        """hunkToBeforeAfter gives the reference's before and after texts."""
        assert (case["before"], case["after"]) == compat.hunk_to_before_after(case["hunk"])

    @pytest.mark.parametrize("case", CASES)
    def test_hunk_to_before_after_lines(self, case: dict[str, Any]) -> None:
        """hunkToBeforeAfter(hunk, true) gives the reference's line lists."""
        expected = (case["before_lines"] or [], case["after_lines"] or [])

        assert expected == compat.hunk_to_before_after_lines(case["hunk"])

    @pytest.mark.parametrize("case", CASES)
    def test_directly_apply_hunk(self, case: dict[str, Any]) -> None:
        """directlyApplyHunk succeeds and fails where the reference does, with its text."""
        expected = _js_result(case["directly_apply_ok"], case["directly_apply"])

        assert expected == compat.directly_apply_hunk(case["content"], case["hunk"])

    @pytest.mark.parametrize("case", CASES)
    def test_flexi_just_search_and_replace(self, case: dict[str, Any]) -> None:
        """flexiJustSearchAndReplace on (before, after, content) matches the reference."""
        expected = _js_result(case["flexi_ok"], case["flexi"])
        actual = compat.flexi_just_search_and_replace(
            case["before"], case["after"], case["content"]
        )

        assert expected == actual

    @pytest.mark.parametrize("case", CASES)
    def test_dmp_diff_lines(self, case: dict[str, Any]) -> None:
        """The line-mode diff-match-patch diff of before against content matches."""
        assert case["dmp_diff_lines"] == diff_lines(case["before"], case["content"])

    @pytest.mark.parametrize("case", CASES)
    def test_make_new_lines_explicit(self, case: dict[str, Any]) -> None:
        """makeNewLinesExplicit rewrites the hunk exactly as the reference does."""
        actual = compat.make_new_lines_explicit(case["content"], case["hunk"])

        assert case["made_explicit"] == actual

    @pytest.mark.parametrize("case", CASES)
    def test_apply_hunk(self, case: dict[str, Any]) -> None:
        """applyHunks returns the reference's result, including its empty-string results."""
        expected = _js_result(case["apply_hunks_ok"], case["apply_hunks"])

        assert expected == compat.apply_hunk(case["content"], case["hunk"])
