"""Refusals with look-alike regions list every one, the named one first (ADR 0029)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.attempt.api import apply
from patchsmith.cli import main
from patchsmith.engine.excerpt import lookalikes
from patchsmith.errors import FailureCode, LookAlike, PatchFailure

BLOCK = [
    "def check(event):",
    "    value = event.get('user')",
    "    if value is None:",
    "        raise ValueError('missing user!')",
    "    return value * 2",
]
FILLER = [f"X_{i} = {i}" for i in range(30)]
TEXT = "\n".join([*BLOCK, "", *FILLER, "", *BLOCK]) + "\n"
# The model remembers the raise line without its "!": it is in neither block.
HUNK = (
    "--- a/m.py\n+++ b/m.py\n@@ -{n},5 +{n},5 @@\n"
    " def check(event):\n"
    "     value = event.get('user')\n"
    "     if value is None:\n"
    "-        raise ValueError('missing user')\n"
    "+        raise KeyError('missing user')\n"
    "     return value * 2\n"
)


def _refused(tmp_path: Path, line: int) -> PatchFailure:
    (tmp_path / "m.py").write_text(TEXT, encoding="utf-8")
    report = apply(HUNK.format(n=line), tmp_path, record=False)
    assert not report.ok
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == TEXT
    (failure,) = report.errors
    return failure


class TestNoMatchWithLookalikes:
    def test_every_region_listed_and_the_named_one_first(self, tmp_path: Path) -> None:
        failure = _refused(tmp_path, 38)

        assert failure.code is FailureCode.PATCH_CONTEXT_MISMATCH
        assert [(x.start, x.end, x.named) for x in failure.lookalikes] == [
            (38, 42, True),
            (1, 5, False),
        ]
        assert failure.lookalikes[0].differing == (41,)
        assert "2 regions look alike: lines 38-42, 1-5" in failure.message
        assert failure.hint is not None and "look alike" in failure.hint
        assert "point at lines 38-42" in failure.hint
        excerpt = failure.excerpt or ""
        assert excerpt.index("line 38 --") < excerpt.index("line 1 --")

    def test_without_numbers_none_is_named(self, tmp_path: Path) -> None:
        (tmp_path / "m.py").write_text(TEXT, encoding="utf-8")
        report = apply(HUNK.format(n=1).replace("@@ -1,5 +1,5 @@", "@@"), tmp_path)

        (failure,) = report.errors
        assert [x.named for x in failure.lookalikes] == [False, False]
        assert "point at" not in (failure.hint or "")

    def test_one_similar_region_lists_none(self, tmp_path: Path) -> None:
        (tmp_path / "m.py").write_text("\n".join([*BLOCK, "", *FILLER]) + "\n")
        report = apply(HUNK.format(n=1), tmp_path, record=False)

        (failure,) = report.errors
        assert failure.lookalikes == ()
        assert "lookalikes" not in failure.to_json()


class TestJson:
    def test_round_trip(self, tmp_path: Path) -> None:
        failure = _refused(tmp_path, 1)

        data = json.loads(json.dumps(failure.to_json()))

        assert PatchFailure.from_json(data) == failure
        assert data["lookalikes"][0] == {
            "start": 1,
            "end": 5,
            "similarity": failure.lookalikes[0].similarity,
            "differing": [4],
            "named": True,
        }

    def test_bad_values_are_dropped(self) -> None:
        data: dict[str, object] = {
            "code": "AMBIGUOUS_MATCH",
            "message": "m",
            "hunk": "x",
            "candidates": "no",
            "lookalikes": [{"start": True, "end": 3, "differing": "no"}, "junk"],
        }

        failure = PatchFailure.from_json(data)

        assert failure.hunk is None
        assert failure.candidates == ()
        assert failure.lookalikes == (LookAlike(0, 3, 0.0),)

    @given(
        start=st.integers(1, 10_000),
        size=st.integers(0, 50),
        similarity=st.floats(0, 1),
        differing=st.lists(st.integers(1, 10_000), max_size=5),
        named=st.booleans(),
    )
    def test_lookalike_round_trip(
        self, start: int, size: int, similarity: float, differing: list[int], named: bool
    ) -> None:
        value = LookAlike(start, start + size, round(similarity, 3), tuple(differing), named)
        assert LookAlike.from_json(json.loads(json.dumps(value.to_json()))) == value


class TestLookalikesFunction:
    def test_given_starts_are_the_regions(self) -> None:
        contents = TEXT.splitlines()
        found = lookalikes(contents, BLOCK, hint=None, starts=[0, 37])

        assert [(x.start, x.end, x.score) for x in found] == [(0, 5, 1.0), (37, 42, 1.0)]

    def test_far_hint_names_none(self) -> None:
        contents = TEXT.splitlines()
        found = lookalikes(contents, BLOCK, hint=200, starts=[0, 37])

        assert not any(x.named for x in found)

    def test_a_single_region_is_not_a_lookalike(self) -> None:
        assert lookalikes(BLOCK, BLOCK, hint=0) == []


def test_cli_json_lists_the_lookalikes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`patchsmith apply --json` carries `lookalikes` for a refused edit, named one first."""
    (tmp_path / "m.py").write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO(HUNK.format(n=38)))

    code = main(["apply", "--json", "-C", str(tmp_path)])

    data = json.loads(capsys.readouterr().out)
    assert code != 0
    (error,) = data["errors"]
    assert [(x["start"], x["named"]) for x in error["lookalikes"]] == [(38, True), (1, False)]
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == TEXT
