"""Parity of findDiffs, file names included: `parity_finddiffs.json` (10 records)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.parity import by_name, golden_cases

from patchsmith.engine.compat import find_diffs_compat


class TestFindDiffsCompat:
    @pytest.mark.parametrize("case", golden_cases("parity_finddiffs.json", by_name))
    def test_matches_reference(self, case: dict[str, Any]) -> None:
        """The groups, their old/new names and raw hunk lines equal the reference's."""
        actual = [
            {
                "old": group.old_path,
                "new": group.new_path,
                "hunks": [list(h.lines) for h in group.hunks],
            }
            for group in find_diffs_compat(case["content"])
        ]

        assert case["result"] == actual
