"""Parity of the JavaScript string primitives: `js_semantics.json` (every record)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.parity import semantics_cases

from patchsmith.engine import _js


def _evaluate(primitive: str, record: dict[str, Any]) -> object:
    """Run our counterpart of `primitive` on the record's inputs."""
    if primitive == "trim":
        return _js.js_trim(record["in"])
    if primitive == "trimEnd":
        return _js.js_trim_end(record["in"])
    if primitive == "length":
        return _js.utf16_len(record["in"])
    if primitive == "firstUnit":
        return _js.first_unit_code(record["in"])
    if primitive == "replaceFirst":
        return _js.replace_first(record["s"], record["search"], record["replace"])
    if primitive == "indexOf":
        return _js.index_of(record["s"], record["v"], record["from"])
    if primitive == "lastIndexOf":
        return _js.last_index_of(record["s"], record["v"], record["from"])
    if primitive == "substring":
        return _js.substring(record["s"], record["start"], record["end"])
    if primitive == "tokenizeLines":
        return _js.tokenize_lines(record["in"])
    raise AssertionError(f"golden has a primitive this test does not know: {primitive}")


class TestJsSemantics:
    @pytest.mark.parametrize("case", semantics_cases())
    def test_matches_js_engine(self, case: tuple[str, dict[str, Any]]) -> None:
        """Each primitive returns what a real JavaScript engine returned."""
        primitive, record = case

        assert record["out"] == _evaluate(primitive, record)
