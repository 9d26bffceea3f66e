"""Bare regions of other packages' code (`bench/gen_region_unmarked.py`'s reporting half): merged.

`tests/data/generated/region-unmarked.jsonl.gz` holds a few cases of that half, from
permissively licensed packages (each case's `notes` name the package, version and licence),
three of them over a third of their file: the length the guard used to read as a whole file.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from tests.shared_data import VENDORED
from tests.workspace_snapshot import make_tree

from patchsmith import apply

SAMPLE = VENDORED / "generated" / "region-unmarked.jsonl.gz"


def _cases() -> list[Any]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle if line.strip()]
    return [pytest.param(case, id=case["id"]) for case in cases]


@pytest.mark.parametrize("case", _cases())
def test_region_replaces_its_stretch(case: dict[str, Any], tmp_path: Path) -> None:
    root = make_tree(tmp_path / "ws", {p: t.encode() for p, t in case["files"].items()})

    report = apply(case["patch"], root, record=False)

    assert report.ok, [e.message for e in report.errors]
    assert case["expected"] == {p: (root / p).read_text(encoding="utf-8") for p in case["files"]}


def test_sample_states_its_provenance() -> None:
    cases = [p.values[0] for p in _cases()]

    assert len(cases) >= 8
    assert all("licence" in case["notes"] and case["package"] for case in cases)
    assert sum(case["share"] > 1 / 3 for case in cases) >= 2
