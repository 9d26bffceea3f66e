"""Smoke test over the shared public corpus: every patch parses to the expected files."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchsmith.formats import parse_edits

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
FILES = (
    "public.jsonl.gz",
    "peer-vanilla.jsonl.gz",
    "peer-codex.jsonl.gz",
    "llm-written-public.jsonl",
    "lazy-public.jsonl.gz",
    "omission-public.jsonl.gz",
)
# A bare region (a lazy snippet without placeholders) reads like a whole file, and a whole
# file holding a placeholder-shaped line (`# ...`) like a snippet: which one it is depends on
# the file, and the runtime decides (docs/formats.md).
SAME_TEXT = {
    "lazy_snippet": {"lazy_snippet", "whole_file"},
    "whole_file": {"whole_file", "lazy_snippet"},
}

pytestmark = pytest.mark.skipif(
    not (CORPUS / "public.jsonl.gz").exists(),
    reason="shared corpus not found at ../shared/corpus (relative to the repository root)",
)


def cases() -> Iterator[dict[str, object]]:
    for name in FILES:
        path = CORPUS / name
        if not path.exists():
            continue
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


class TestCorpus:
    def test_every_patch_parses(self) -> None:
        """Every case to apply gives edits naming its expected paths, in its format."""
        applied = refusals = 0
        failures: list[str] = []
        for case in cases():
            script = parse_edits(str(case["patch"]))
            expected = case["expected"]
            if expected is None:
                refusals += 1
                continue
            applied += 1
            assert isinstance(expected, dict)
            paths = {e.path for e in script.edits} | {e.new_path for e in script.edits}
            fmt = str(case["format"]).removesuffix("_json")
            if (
                script.format.value not in SAME_TEXT.get(fmt, {fmt})
                or script.problems
                or not (set(expected) <= paths or paths == {"", None})
            ):
                failures.append(str(case["id"]))

        assert [] == failures
        assert applied >= 1800
        assert refusals >= 200
