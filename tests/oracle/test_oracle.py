"""Differential oracle: compat mode against llm-diff-patcher 0.2.1 running live under node."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from tests.oracle.node_reference import (
    NodeReference,
    OracleUnavailable,
    ReferenceResult,
)
from tests.shared_data import parity_dir
from tests.strategies import DiffCase, model_diffs

from patchsmith.engine import HunkResult, apply_hunks

pytestmark = pytest.mark.oracle

PARITY_APPLY = parity_dir() / "parity_apply.json"
"""From `../shared/parity/` when present, else the copy vendored in `tests/data/parity/`."""

Apply = Callable[[str, str], HunkResult]


@pytest.fixture(name="reference", scope="module")
def _reference() -> Iterator[NodeReference]:
    try:
        oracle = NodeReference.start()
    except OracleUnavailable as why:
        pytest.skip(f"live oracle unavailable: {why}")
    with oracle:
        yield oracle


@pytest.fixture(name="compat_apply", scope="module")
def _compat_apply() -> Apply:
    def compat(source: str, diff: str) -> HunkResult:
        return apply_hunks(source, diff, mode="compat")

    return compat


def _parity_records() -> list[dict[str, object]]:
    if not PARITY_APPLY.is_file():
        pytest.skip(f"{PARITY_APPLY} is absent")
    records = json.loads(PARITY_APPLY.read_text(encoding="utf-8"))
    assert isinstance(records, list)
    return records


def _mismatch(source: str, diff: str, js: ReferenceResult, py: HunkResult) -> str:
    return (
        "compat mode differs from llm-diff-patcher 0.2.1\n"
        f"source:    {source!r}\n"
        f"diff:      {diff!r}\n"
        f"JS ok:     {js.ok}\nPython ok: {py.total > 0}\n"
        f"JS out:    {js.out!r}\n"
        f"Py out:    {py.text!r}"
    )


def _same(js: ReferenceResult, py: HunkResult) -> bool:
    return js.ok == (py.total > 0) and js.out == py.text


class TestDriver:
    """The node driver reproduces the reference pipeline."""

    def test_replays_parity_goldens(self, reference: NodeReference) -> None:
        """Every parity_apply.json record comes back from the live driver as recorded."""
        records = _parity_records()
        wrong = []
        for record in records:
            source, diff = str(record["source"]), str(record["diff"])
            got = reference.apply(source, diff)
            # The goldens store "" as out when nothing was found; the pipeline returns the source.
            expected_out = record["out"] if record["ok"] else source
            if got != ReferenceResult(ok=bool(record["ok"]), out=str(expected_out)):
                wrong.append(record["name"])

        assert wrong == []
        assert len(records) >= 400

    def test_no_hunk_returns_source(self, reference: NodeReference) -> None:
        """Prose without a hunk is not ok and leaves the source as it was."""
        assert ReferenceResult(ok=False, out="a\n") == reference.apply("a\n", "no diff here")

    def test_times_inside_node(self, reference: NodeReference) -> None:
        """A timed request answers once with one positive duration per repetition."""
        timing = reference.time("a\nb\nc\n", "@@\n a\n-b\n+B\n c\n", repeat=3)

        assert ReferenceResult(ok=True, out="a\nB\nc\n") == timing.result
        assert len(timing.ns) == 3
        assert all(ns > 0 for ns in timing.ns)


class TestCompatAgainstReference:
    """`apply_hunks(mode="compat")` answers exactly as the live reference does."""

    def test_parity_goldens(self, reference: NodeReference, compat_apply: Apply) -> None:
        """Compat mode matches the live reference on every parity_apply.json input."""
        mismatches = []
        for record in _parity_records():
            source, diff = str(record["source"]), str(record["diff"])
            js, py = reference.apply(source, diff), compat_apply(source, diff)
            if not _same(js, py):
                mismatches.append(f"{record['name']}:\n{_mismatch(source, diff, js, py)}")

        assert mismatches == [], "\n\n".join(mismatches[:3])

    @settings(
        max_examples=2000,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )
    @given(case=model_diffs())
    def test_generated_model_diffs(
        self, reference: NodeReference, compat_apply: Apply, case: DiffCase
    ) -> None:
        """Compat mode matches the live reference on generated, damaged model diffs."""
        js = reference.apply(case.source, case.diff)
        py = compat_apply(case.source, case.diff)

        assert _same(js, py), _mismatch(case.source, case.diff, js, py)
