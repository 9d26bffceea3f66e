"""`ApplyReport.feedback`: the bounded repair message, and hints that cannot lose work.

Snapshots live in tests/snapshots/feedback/, one per failure code; after a deliberate
wording change regenerate them with `PATCHSMITH_UPDATE_SNAPSHOTS=1` set.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith import apply
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.model.report import (
    ApplyReport,
    ApplyStatus,
    ApplyWarning,
    FileReport,
    WarningCode,
)

SNAPSHOTS = Path(__file__).parent / "snapshots" / "feedback"
_EDIT_CODES = {
    FailureCode.PATCH_CONTEXT_MISMATCH,
    FailureCode.AMBIGUOUS_MATCH,
    FailureCode.PARTIAL_APPLY,
    FailureCode.NO_CHANGE,
    FailureCode.ALREADY_APPLIED,
    FailureCode.SYNTAX_ERROR,
}


def _sample(code: FailureCode) -> ApplyReport:
    edit = code in _EDIT_CODES
    failure = PatchFailure(
        code=code,
        message=f"what {code.value} says about a.py",
        file="a.py",
        hunk=1 if edit else None,
        hint="Change what the message names.",
        excerpt="3 | def total(items):\n4 |     return sum(items)",
        current_sha256="ab" * 32,
        rule="example_rule" if code is FailureCode.SYNTAX_ERROR else None,
    )
    files = (FileReport("a.py", Action.UPDATE, 1, 2),)
    return ApplyReport(ApplyStatus.REFUSED, files, (failure,)).settled()


def _snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("PATCHSMITH_UPDATE_SNAPSHOTS"):
        path.write_text(text + "\n", encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text + "\n"


class TestSnapshots:
    @pytest.mark.parametrize("code", list(FailureCode), ids=[c.value for c in FailureCode])
    def test_one_snapshot_per_code(self, code: FailureCode) -> None:
        """Each failure code renders to its stored message: opening, fix, sha, excerpt."""
        _snapshot(code.value, _sample(code).feedback())

    def test_every_code_has_a_snapshot(self) -> None:
        """No stale snapshot files: one per code, no more."""
        assert {c.value for c in FailureCode} == {p.stem for p in SNAPSHOTS.glob("*.txt")}


class TestOpening:
    def test_refusal_says_nothing_written_and_resend_whole(self) -> None:
        """A refusal's message opens with nothing written and asks for the whole reply."""
        text = _sample(FailureCode.PATCH_CONTEXT_MISMATCH).feedback()

        assert text.startswith("Refused: nothing was written (1 edit(s) did locate")
        assert "resend the whole reply, every edit included" in text

    def test_applied_lists_files(self) -> None:
        """A success names each file written."""
        files = (FileReport("a.py", Action.UPDATE, 1, 1),)
        report = ApplyReport(ApplyStatus.APPLIED, files).settled()

        assert "Applied: a.py (update)." == report.feedback()

    def test_check_says_nothing_written(self) -> None:
        """A dry run that would succeed says that nothing was written."""
        files = (FileReport("a.py", Action.UPDATE, 1, 1),)
        report = ApplyReport(ApplyStatus.APPLIED, files, check=True).settled()

        assert report.feedback().startswith("Check only: nothing was written")
        assert (1, False) == (report.files[0].hunks_applied, report.files[0].written)

    def test_already_applied(self) -> None:
        """An already-applied proposal says so."""
        assert ApplyReport(ApplyStatus.ALREADY_APPLIED).feedback().startswith("Already applied")

    def test_warnings_follow(self) -> None:
        """Warnings are listed after the failures, with file and edit."""
        warning = ApplyWarning(WarningCode.ANCHOR_ELSEWHERE, "anchor is elsewhere", "a.py", 0)
        report = ApplyReport(ApplyStatus.APPLIED, warnings=(warning,))

        assert "Warnings:\n- ANCHOR_ELSEWHERE in a.py, edit 1: anchor is elsewhere" in (
            report.feedback()
        )

    def test_settled_is_idempotent(self) -> None:
        """Settling twice adds the resend sentence once."""
        once = _sample(FailureCode.PATCH_CONTEXT_MISMATCH)

        assert once == once.settled()


class TestBounds:
    def test_too_small_a_bound_is_misuse(self) -> None:
        """A bound below 200 characters is a caller's error."""
        with pytest.raises(ValueError, match="at least 200"):
            ApplyReport(ApplyStatus.REFUSED).feedback(max_chars=10)

    @settings(max_examples=40, deadline=None)
    @given(
        count=st.integers(min_value=0, max_value=30),
        excerpt_lines=st.integers(min_value=0, max_value=40),
        bound=st.integers(min_value=200, max_value=6000),
    )
    def test_never_longer_than_asked(self, count: int, excerpt_lines: int, bound: int) -> None:
        """Whatever the failures, the message fits `max_chars` and opens with the status."""
        excerpt = "\n".join(f"{i} | line {i} of a fairly long file" for i in range(excerpt_lines))
        failures = tuple(
            PatchFailure(
                FailureCode.PATCH_CONTEXT_MISMATCH,
                f"hunk {i + 1} of a.py: no match",
                "a.py",
                i,
                "Make the lines match.",
                excerpt or None,
                "cd" * 32,
            )
            for i in range(count)
        )
        files = (FileReport("a.py", Action.UPDATE, 0, max(count, 1)),)
        text = ApplyReport(ApplyStatus.REFUSED, files, failures).settled().feedback(bound)

        assert len(text) <= bound
        assert text.startswith("Refused: nothing was written")

    def test_excerpts_shrink_before_failures_drop(self) -> None:
        """Under pressure the excerpts are shortened first, and every failure still shows."""
        excerpt = "\n".join(f"{i} | text" for i in range(30))
        failures = tuple(
            PatchFailure(FailureCode.PATCH_CONTEXT_MISMATCH, "no match", "a.py", i, "fix", excerpt)
            for i in range(3)
        )
        text = ApplyReport(ApplyStatus.REFUSED, (), failures).settled().feedback(1400)

        assert "(excerpt shortened)" in text
        assert all(f"[{n}]" in text for n in (1, 2, 3))


SOURCE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\n"


class TestThroughApply:
    def _root(self, tmp_path: Path) -> Path:
        (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
        return tmp_path

    def test_refusal_counts_located_not_written(self, tmp_path: Path) -> None:
        """A refused reply with one good hunk reports it located, not applied nor written."""
        root = self._root(tmp_path)
        text = "--- a/a.py\n+++ b/a.py\n@@\n-a = 1\n+a = 10\n@@\n-zzz\n+yyy\n"

        report = apply(text, root, record=False)

        assert (1, 0, False) == (
            report.files[0].hunks_located,
            report.files[0].hunks_applied,
            report.files[0].written,
        )
        assert report.errors[0].hint is not None
        assert report.errors[0].hint.startswith("Nothing was written. Resend the whole reply")
        assert SOURCE == (root / "a.py").read_text(encoding="utf-8")

    def test_partial_names_written_edits_and_current_file(self, tmp_path: Path) -> None:
        """After --partial, the failure names the edits written and describes the new file."""
        root = self._root(tmp_path)
        text = "--- a/a.py\n+++ b/a.py\n@@\n-a = 1\n+a = 10\n+a2 = 11\n@@\n-zzz\n+yyy\n"

        report = apply(text, root, partial=True, record=False)

        on_disk = (root / "a.py").read_bytes()
        failure = report.errors[0]
        assert ApplyStatus.PARTIAL == report.status
        assert (1, 1, True) == (
            report.files[0].hunks_located,
            report.files[0].hunks_applied,
            report.files[0].written,
        )
        assert failure.hint is not None
        assert failure.hint.startswith("Not written. a.py was written with its edit 1;")
        assert hashlib.sha256(on_disk).hexdigest() == failure.current_sha256
        assert "a2 = 11" in on_disk.decode()
        assert "Partly applied. Written: a.py (edit 1)." in report.feedback()

    def test_partial_with_nothing_located_is_a_refusal(self, tmp_path: Path) -> None:
        """--partial where nothing located writes nothing, and says so."""
        root = self._root(tmp_path)

        report = apply("--- a/a.py\n+++ b/a.py\n@@\n-zzz\n+yyy\n", root, partial=True)

        assert ApplyStatus.REFUSED == report.status
        assert report.feedback().startswith("Refused: nothing was written.")
