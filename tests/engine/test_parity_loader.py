"""Tests of the shared parity-golden loader in `tests/parity.py`."""

from __future__ import annotations

from tests import parity


class TestGoldenLoader:
    def test_absent_golden_is_one_skipped_case(self) -> None:
        """A missing golden yields one case marked skip, naming the missing file."""
        (case,) = parity.golden_cases("no-such-golden.json", parity.by_name)

        assert "no-such-golden.json" in case.marks[0].kwargs["reason"]

    def test_absent_semantics_is_one_skipped_case(self) -> None:
        """A missing semantics golden yields one skipped case too."""
        (case,) = parity.semantics_cases("no-such-golden.json")

        assert "skip" == case.marks[0].name

    def test_load_missing_returns_none(self) -> None:
        """Loading an absent golden returns None rather than raising."""
        assert parity.load_golden("no-such-golden.json") is None
