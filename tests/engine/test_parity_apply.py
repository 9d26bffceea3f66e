"""End-to-end parity with llm-diff-patcher 0.2.1: `parity_apply.json` (409 records)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.parity import by_name, golden_cases

from patchsmith.engine.compat import apply_hunks_compat


class TestApplyHunksCompat:
    @pytest.mark.parametrize("case", golden_cases("parity_apply.json", by_name))
    def test_matches_reference(self, case: dict[str, Any]) -> None:
        """The pipeline finds hunks exactly when the reference does and returns its text."""
        result = apply_hunks_compat(case["source"], case["diff"])
        # The golden leaves `out` empty when no hunk was found: the source is kept.
        expected = case["out"] if case["ok"] else case["source"]

        assert case["ok"] == (result.total > 0)
        assert expected == result.text
