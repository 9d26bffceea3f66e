"""Rival candidates at different tolerances: look-alike blocks are never confused.

docs/decisions/0029-one-rule-for-rival-candidates.md states the rule; the twin corpus
(`tests/data/twins`, made by `bench/gen_twins.py`) and the properties below hold it to
"a refusal, or the block the edit was written for".
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from bench import gen_twins
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine import apply_hunks
from patchsmith.engine.model import SkipReason, Strategy

CORPUS = Path(__file__).resolve().parents[1] / "data" / "twins" / "twins-public.jsonl.gz"


def _cases() -> list[dict[str, object]]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _verdict(case: dict[str, object]) -> str:
    files = case["files"]
    expected = case["expected"]
    assert isinstance(files, dict) and isinstance(expected, dict)
    ((path, text),) = files.items()
    patch = case["patch"]
    assert isinstance(patch, str)
    result = apply_hunks(text, patch)
    if not result.ok:
        assert result.text == text
        return "refused"
    return "correct" if result.text == expected[path] else "wrong"


def _call(indent: int, call: str, kwargs: list[str]) -> list[str]:
    pad = " " * indent
    return [f"{pad}response.{call}(", *(f"{pad}    {k}" for k in kwargs), f"{pad})"]


# The reported shape: block A (12-space body) and block B (8-space body, no httponly).
A_ARGS = ["name,", "domain=domain,", "path=path,", "secure=secure,", "samesite=samesite,"]
FILE_A = [
    "def clear(response, flag):",
    "    if flag:",
    *_call(8, "delete_cookie", [*A_ARGS, "httponly=httponly,"]),
    "    return response",
    "",
    "",
    "def store(response):",
    *_call(4, "set_cookie", A_ARGS),
    "    return response",
]
HUNK_A = (
    "--- a/m.py\n+++ b/m.py\n@@ -4,7 +4,8 @@\n"
    "             name,\n"
    "             domain=domain,\n"
    "             path=path,\n"
    "             secure=secure,\n"
    "+            max_age=max_age,\n"
    "             samesite=samesite,\n"
    "             httponly=httponly,\n"
    "         )\n"
)


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


class TestReportedShapes:
    def test_twin_calls_at_other_indentation_refuse(self) -> None:
        """A's context was edited in two lines; B fits re-indented and one line short."""
        stale = _text(FILE_A).replace("domain=domain,\n", "domain=domain_v2,\n", 1)
        stale = stale.replace("httponly=httponly,\n", "httponly=httponly,  # revised\n")

        result = apply_hunks(stale, HUNK_A)

        assert not result.ok
        assert result.text == stale
        outcome = result.outcomes[0]
        assert outcome.reason is SkipReason.AMBIGUOUS
        assert outcome.candidates == (4, 16)
        assert "comparable tolerances" in outcome.detail

    def test_twin_calls_without_numbers_refuse(self) -> None:
        stale = _text(FILE_A).replace("httponly=httponly,\n", "httponly=httponly,  # revised\n")
        hunk = HUNK_A.replace("@@ -4,7 +4,8 @@", "@@")

        result = apply_hunks(stale, hunk)

        assert not result.ok
        assert result.outcomes[0].reason is SkipReason.AMBIGUOUS

    def test_unchanged_twin_applies_at_the_named_block(self) -> None:
        """Nothing edited: A matches exactly and is named; B needs re-indentation."""
        result = apply_hunks(_text(FILE_A), HUNK_A)

        assert result.ok
        assert result.outcomes[0].strategy is Strategy.DIRECT
        assert "            max_age=max_age,\n            samesite" in result.text

    def test_exact_twin_elsewhere_without_numbers_refuses(self) -> None:
        """Exact in A, re-indented in B, and nothing names A: two comparable places."""
        hunk = (
            "--- a/m.py\n+++ b/m.py\n@@\n"
            "             name,\n"
            "             domain=domain,\n"
            "+            max_age=max_age,\n"
            "             path=path,\n"
        )

        result = apply_hunks(_text(FILE_A), hunk)

        assert not result.ok
        assert result.outcomes[0].reason is SkipReason.AMBIGUOUS

    def test_named_place_at_partial_context_competes_with_exact_copy(self) -> None:
        """The numbers name a block that differs in one context line; an exact copy is
        60 lines away: refused, both places listed."""
        block = [
            "def handler(event):",
            "    value = event.get('x')",
            "    if value is None:",
            "        raise ValueError('missing x')",
            "    return value * 2",
        ]
        named = list(block)
        named[1] = "    value = event.get('x')  # revised"
        filler = [f"CONST_{i} = {i}" for i in range(60)]
        text = _text(["import os", "", *named, "", *filler, "", *block])
        hunk = (
            "--- a/m.py\n+++ b/m.py\n@@ -3,5 +3,5 @@\n"
            + "".join(f" {line}\n" for line in block[:3])
            + f"-{block[3]}\n+        raise KeyError('missing x')\n {block[4]}\n"
        )

        result = apply_hunks(text, hunk)

        assert not result.ok
        assert result.text == text
        assert result.outcomes[0].reason is SkipReason.AMBIGUOUS
        assert result.outcomes[0].candidates == (3, 70)

    def test_exact_match_far_from_its_numbers_still_applies(self) -> None:
        """Nothing fits at the place the (wrong) numbers name: the exact match stands."""
        filler = [f"CONST_{i} = {i}" for i in range(60)]
        text = _text([*filler, "def handler(event):", "    return event * 2"])
        hunk = (
            "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n"
            " def handler(event):\n-    return event * 2\n+    return event * 3\n"
        )

        result = apply_hunks(text, hunk)

        assert result.ok
        assert result.text.endswith("return event * 3\n")


class TestTwinCorpus:
    def test_corpus_is_what_the_generator_makes(self, tmp_path: Path) -> None:
        out = tmp_path / "twins.jsonl.gz"
        gen_twins.write(gen_twins.generate("twins-1", 24), out)
        assert out.read_bytes() == CORPUS.read_bytes()

    def test_never_wrong_and_controls_apply(self) -> None:
        verdicts: dict[str, list[str]] = {}
        for case in _cases():
            verdicts.setdefault(str(case["category"]), []).append(_verdict(case))
        assert all("wrong" not in v for v in verdicts.values())
        assert set(verdicts["twin-control"]) == {"correct"}
        assert len(verdicts) == 6


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    edited=st.integers(0, 3),
    header=st.sampled_from(["numbers", "bogus", "bare"]),
)
def test_random_twin_calls_are_never_confused(seed: int, edited: int, header: str) -> None:
    """Random twin calls at different indentation, 0-3 context lines of the target
    edited, any header: refused or right."""
    case = gen_twins.make_case(random.Random(seed), "kwargs", edited, header, "p")
    assert _verdict(case) != "wrong"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), edited=st.integers(0, 3))
def test_random_exact_copies_are_never_confused(seed: int, edited: int) -> None:
    """A handler and an exact copy of it, 0-3 context lines of the named one edited.

    Only with line numbers: when nothing names the target, an exact copy of what the
    model read is indistinguishable from the block it meant (ADR 0029).
    """
    case = gen_twins.make_case(random.Random(seed), "copy", edited, "numbers", "p")
    assert _verdict(case) != "wrong"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_untouched_named_twin_applies(seed: int) -> None:
    """Nothing edited and true numbers: the target is exact and named, so it applies."""
    case = gen_twins.make_case(random.Random(seed), "kwargs", 0, "numbers", "p")
    assert _verdict(case) == "correct"
