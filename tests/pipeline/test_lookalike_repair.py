"""A repair that moves to another look-alike is refused, not applied (`pipeline.lookalike`).

The scripted model here is greedy: it rebuilds its hunk from whichever place of the
feedback's excerpt its remembered old lines align with best, ignoring the line numbers.
Given an exact copy of what it first read, it rebuilds against the copy; the loop must
refuse that reply. Over the twin corpus and the stale-file corpus, one round of such
repairs leaves no file wrong.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.shared_data import corpus_dir

from patchsmith.engine.excerpt import line_similarity
from patchsmith.errors import FailureCode, LookAlike, PatchFailure
from patchsmith.model.report import Action, ApplyReport, ApplyStatus, FileReport, HunkPlacement
from patchsmith.pipeline.budget import Budget
from patchsmith.pipeline.lookalike import Target, strayed, targets_of
from patchsmith.pipeline.loop import run_task
from patchsmith.pipeline.source import ScriptedSource, Turn

TWINS = Path(__file__).resolve().parents[1] / "data" / "twins" / "twins-public.jsonl.gz"
_NUMBERED = re.compile(r"^\s*(\d+) \| (.*)$")
_PLACE = re.compile(r"^\s*-- place \d+ of \d+")

BLOCK = [
    "    def check(event):",
    "        value = event.get('user')",
    "        if value is None:",
    "            raise ValueError('missing user')",
    "        return value * 2",
]


def _places(feedback: str) -> list[dict[int, str]]:
    """The numbered lines of each place the feedback's excerpt shows."""
    places: list[dict[int, str]] = [{}]
    for line in feedback.splitlines():
        if _PLACE.match(line) and places[-1]:
            places.append({})
        match = _NUMBERED.match(line)
        if match:
            places[-1][int(match.group(1))] = match.group(2)
    return [p for p in places if p]


def _greedy_repair(patch: str, path: str) -> Callable[[Turn], str]:
    """A model that rebuilds its one hunk from the best-aligned place of the excerpt."""
    lines = patch.split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("@@"))
    body = [x for x in lines[start + 1 :] if x[:1] in (" ", "-", "+")]

    def repair(turn: Turn) -> str:
        best: tuple[float, dict[int, str]] | None = None
        for place in _places(turn.feedback[-1]):
            texts = list(place.values())
            total = sum(
                max((line_similarity(x[1:], t) for t in texts), default=0.0)
                for x in body
                if x[:1] != "+" and x[1:].strip()
            )
            if best is None or total > best[0]:
                best = (total, place)
        if best is None:
            return patch
        place = best[1]
        numbers = sorted(place)
        out, used = [], -1
        for x in body:
            if x[:1] == "+":
                out.append(x)
                continue
            candidates = [n for n in numbers if n > used]
            if not candidates:
                return patch
            n = max(candidates, key=lambda k: (line_similarity(x[1:], place[k]), -k))
            used = n
            out.append(x[0] + place[n])
        return f"--- a/{path}\n+++ b/{path}\n@@\n" + "\n".join(out) + "\n"

    return repair


# A task of unknown size is HYBRID, which nothing here can verify: the workspace lets
# unverified changes through with a note, so what is measured is where edits land.
UNVERIFIED_NOTE = '[verify]\nunverified = "note"\n'


def _run(root: Path, path: str, before: str, patch: str) -> tuple[bool, str]:
    (root / "patchsmith.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "patchsmith.toml").write_text(UNVERIFIED_NOTE, encoding="utf-8")
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(before, encoding="utf-8", newline="")
    source = ScriptedSource([patch, _greedy_repair(patch, path)])
    task = {"objective": "make the edit", "files": [path]}
    result = run_task(task, source, Budget(max_attempts=2), root=root, record=False)
    return result.ok, target.read_text(encoding="utf-8")


def _copy_file(named_edited: bool) -> tuple[str, str, str]:
    """A handler and its exact copy; the hunk is for the first, whose line 2 was edited."""
    first = list(BLOCK)
    if named_edited:
        first[1] += "  # revised"
    filler = [f"    X_{i} = {i}" for i in range(40)]
    lines = ["class Checks:", *first, "", *filler, "", *BLOCK]
    before = "\n".join(lines) + "\n"
    patch = (
        "--- a/m.py\n+++ b/m.py\n@@ -2,5 +2,5 @@\n"
        + "".join(f" {x}\n" for x in BLOCK[:3])
        + f"-{BLOCK[3]}\n+            raise KeyError('missing user')\n {BLOCK[4]}\n"
    )
    expected = before.replace(BLOCK[3], "            raise KeyError('missing user')", 1)
    return before, patch, expected


class TestRepairStaysAtTheNamedLookalike:
    def test_greedy_repair_into_the_copy_is_refused(self, tmp_path: Path) -> None:
        before, patch, _ = _copy_file(named_edited=True)

        ok, after = _run(tmp_path, "m.py", before, patch)

        assert not ok
        assert after == before

    def test_the_refusal_names_the_look_alike(self, tmp_path: Path) -> None:
        before, patch, _ = _copy_file(named_edited=True)
        (tmp_path / "m.py").write_text(before, encoding="utf-8")
        (tmp_path / "patchsmith.toml").write_text(UNVERIFIED_NOTE, encoding="utf-8")
        source = ScriptedSource([patch, _greedy_repair(patch, "m.py")])
        task = {"objective": "make the edit", "files": ["m.py"]}

        result = run_task(task, source, Budget(max_attempts=2), root=tmp_path, record=False)

        last = result.errors[-1]
        assert last.code is FailureCode.AMBIGUOUS_MATCH
        assert "look-alike of lines 2-6" in last.message
        assert [x.named for x in last.lookalikes] == [True, False]
        first_feedback = source.turns[1].feedback[-1]
        assert "look alike" in first_feedback or "look-alike" in first_feedback
        assert first_feedback.index("-- place 1 of 2: line 2 --") < first_feedback.index(
            "-- place 2 of 2"
        )

    def test_a_repair_at_the_named_block_applies(self, tmp_path: Path) -> None:
        before, patch, expected = _copy_file(named_edited=True)
        (tmp_path / "m.py").write_text(before, encoding="utf-8")
        (tmp_path / "patchsmith.toml").write_text(UNVERIFIED_NOTE, encoding="utf-8")
        edited = list(BLOCK)
        edited[1] += "  # revised"
        repair = (
            "--- a/m.py\n+++ b/m.py\n@@ -2,5 +2,5 @@\n"
            + "".join(f" {x}\n" for x in edited[:3])
            + f"-{BLOCK[3]}\n+            raise KeyError('missing user')\n {BLOCK[4]}\n"
        )
        task = {"objective": "make the edit", "files": ["m.py"]}

        result = run_task(
            task, ScriptedSource([patch, repair]), Budget(max_attempts=2), root=tmp_path
        )

        assert result.ok
        assert (tmp_path / "m.py").read_text(encoding="utf-8") == expected


class TestTargets:
    NAMED = LookAlike(2, 6, 0.96, (3,), named=True)
    OTHER = LookAlike(50, 54, 1.0)

    def _failure(self, *lookalikes: LookAlike, sha: str | None = "abc") -> PatchFailure:
        return PatchFailure(
            FailureCode.AMBIGUOUS_MATCH,
            "m",
            file="m.py",
            hunk=0,
            current_sha256=sha,
            lookalikes=lookalikes,
        )

    def test_only_failures_that_name_one_lookalike(self) -> None:
        assert targets_of([self._failure(self.NAMED, self.OTHER)]) == [
            Target("m.py", "abc", self.NAMED, (self.OTHER,))
        ]
        unnamed = LookAlike(2, 6, 0.9)
        assert targets_of([self._failure(unnamed, self.OTHER)]) == [
            Target("m.py", "abc", None, (unnamed, self.OTHER))
        ]
        assert targets_of([self._failure(self.NAMED, self.OTHER, sha=None)]) == []
        assert targets_of([self._failure(self.NAMED)]) == []

    def _check(self, line: int) -> ApplyReport:
        placed = HunkPlacement(0, line, "direct")
        files = (FileReport("m.py", Action.UPDATE, 1, 1, placements=(placed,)),)
        return ApplyReport(ApplyStatus.APPLIED, files=files)

    @pytest.mark.parametrize(
        ("line", "refused"), [(50, True), (54, True), (46, True), (2, False), (30, False)]
    )
    def test_strayed_when_landing_in_another(
        self, tmp_path: Path, line: int, refused: bool
    ) -> None:
        (tmp_path / "m.py").write_text("x\n", encoding="utf-8")
        sha = hashlib.sha256(b"x\n").hexdigest()
        targets = [Target("m.py", sha, self.NAMED, (self.OTHER,))]

        failure = strayed(self._check(line), targets, tmp_path)

        assert (failure is not None) == refused
        if failure is not None:
            assert failure.candidates == (2, 50)
            assert failure.code is FailureCode.AMBIGUOUS_MATCH

    @pytest.mark.parametrize(("line", "refused"), [(2, True), (50, True), (30, False)])
    def test_unnamed_lookalikes_are_all_guarded(
        self, tmp_path: Path, line: int, refused: bool
    ) -> None:
        (tmp_path / "m.py").write_text("x\n", encoding="utf-8")
        sha = hashlib.sha256(b"x\n").hexdigest()
        unnamed = LookAlike(2, 6, 0.9)
        targets = [Target("m.py", sha, None, (unnamed, self.OTHER))]

        failure = strayed(self._check(line), targets, tmp_path)

        assert (failure is not None) == refused
        if failure is not None:
            assert "named none of them" in failure.message
            assert failure.hint is not None and "whole new content" in failure.hint
            assert failure.lookalikes == (unnamed, self.OTHER)

    def test_a_changed_file_lifts_the_guard(self, tmp_path: Path) -> None:
        (tmp_path / "m.py").write_text("changed\n", encoding="utf-8")
        targets = [Target("m.py", "0" * 64, self.NAMED, (self.OTHER,))]

        assert strayed(self._check(50), targets, tmp_path) is None


def _corpus(path: Path, categories: tuple[str, ...] = ()) -> list[dict[str, object]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        cases = [json.loads(line) for line in lines]
    return [
        c
        for c in cases
        if (not categories or c["category"] in categories)
        and c["format"] == "udiff"
        and isinstance(c["expected"], dict)
        and len(c["expected"]) == 1
        and str(c["patch"]).count("\n@@") == 1
    ]


def _sweep(cases: list[dict[str, object]], root: Path) -> tuple[int, int]:
    wrong = done = 0
    for n, case in enumerate(cases):
        expected = case["expected"]
        files = case["files"]
        assert isinstance(expected, dict) and isinstance(files, dict)
        ((path, want),) = expected.items()
        ok, after = _run(root / str(n), path, files[path], str(case["patch"]))
        done += ok
        wrong += after not in (want, files[path]) or (ok and after != want)
    return wrong, done


def test_one_round_greedy_repair_of_the_twins_is_never_wrong(tmp_path: Path) -> None:
    """Every exact-copy case, and the twin calls whose edit carried no line numbers."""
    cases = _corpus(TWINS, ("twin-copy-stale-1", "twin-copy-stale-2"))
    cases += [c for c in _corpus(TWINS) if "/bare/" in str(c["id"])][:12]
    wrong, _ = _sweep(cases, tmp_path)
    assert wrong == 0


def test_one_round_greedy_repair_of_stale_files_is_never_wrong(tmp_path: Path) -> None:
    stale = corpus_dir() / "stale-public.jsonl.gz"
    cases = _corpus(stale)[:12]
    wrong, done = _sweep(cases, tmp_path)
    assert wrong == 0
    assert done > 0
