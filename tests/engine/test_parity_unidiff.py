"""Parity of jsdiff's Myers diff + unidiff's formatter: `parity_unidiff.json` (56 records)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.parity import golden_cases

from patchsmith.engine.jsdiff import format_lines, unidiff_diff_lines


def _ident(_index: int, record: dict[str, Any]) -> str:
    return f"{record['name']}/ctx{record['context']}"


class TestUnidiffFormat:
    @pytest.mark.parametrize("case", golden_cases("parity_unidiff.json", _ident))
    def test_matches_reference(self, case: dict[str, Any]) -> None:
        """formatLines(diffLines(a, b), {context}) gives the reference's text or its error."""
        actual = format_lines(unidiff_diff_lines(case["a"], case["b"]), case["context"])

        assert case["err"] == (actual is None)
        if not case["err"]:
            assert case["out"] == actual
