"""Every patch of the public corpora parses to the expected files.

Runs over the full corpora in `../shared/corpus` when present, else over the
stratified sample vendored in `tests/data/corpus` (see `tests/data/README.md`).
"""

from __future__ import annotations

from collections.abc import Iterator

from tests.shared_data import corpus_cases, full_corpus

from patchsmith.formats import parse_edits

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

# The full corpora hold 1800+ cases to apply and 200+ to refuse; the sample 83 and 20.
MINIMUMS = (1800, 200) if full_corpus() else (80, 15)


def cases() -> Iterator[dict[str, object]]:
    for name in FILES:
        yield from corpus_cases(name)


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
        assert applied >= MINIMUMS[0]
        assert refusals >= MINIMUMS[1]
