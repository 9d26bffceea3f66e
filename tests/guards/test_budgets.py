"""Tests for the diff budget guards."""

from __future__ import annotations

from tests.guards.changes import context, create, update

from patchsmith.errors import FailureCode
from patchsmith.guards.budgets import (
    HunksOutsideExpectedGuard,
    MaxChangedLinesGuard,
    MaxFilesGuard,
    changed_lines,
)
from patchsmith.policy import Policy


def _lines(n: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {i}\n" for i in range(n))


class TestMaxFilesGuard:
    def test_no_limit_by_default(self) -> None:
        """The default policy sets no file budget."""
        changes = [create(f"f{i}.txt", "x\n") for i in range(50)]

        assert [] == MaxFilesGuard().check(changes, context())

    def test_over_limit_is_refused(self) -> None:
        """Three files against a limit of two is DIFF_BUDGET_EXCEEDED."""
        changes = [create(f"f{i}.txt", "x\n") for i in range(3)]

        failures = MaxFilesGuard().check(changes, context(Policy(max_files=2)))

        assert [FailureCode.DIFF_BUDGET_EXCEEDED] == [f.code for f in failures]
        assert "3 files (limit 2)" in failures[0].message
        assert "max_files" == failures[0].rule

    def test_at_limit_passes(self) -> None:
        """Exactly at the limit passes."""
        changes = [create(f"f{i}.txt", "x\n") for i in range(2)]

        assert [] == MaxFilesGuard().check(changes, context(Policy(max_files=2)))


class TestMaxChangedLinesGuard:
    def test_replacing_lines_counts_both_sides(self) -> None:
        """Replacing 6 lines is 12 changed lines: over a budget of 10."""
        old = _lines(20)
        new = _lines(6, "new") + "".join(old.splitlines(keepends=True)[6:])

        failures = MaxChangedLinesGuard().check(
            [update("a.txt", old, new)], context(Policy(max_changed_lines=10))
        )

        assert 12 == changed_lines([update("a.txt", old, new)])
        assert ["max_changed_lines"] == [f.rule for f in failures]

    def test_within_budget_passes(self) -> None:
        """Five added lines fit a budget of five."""
        change = update("a.txt", _lines(3), _lines(3) + _lines(5, "more"))

        assert [] == MaxChangedLinesGuard().check([change], context(Policy(max_changed_lines=5)))

    def test_no_limit_by_default(self) -> None:
        """Without a budget any size passes."""
        change = create("a.txt", _lines(10_000))

        assert [] == MaxChangedLinesGuard().check([change], context())


class TestHunksOutsideExpectedGuard:
    def test_hunk_in_unexpected_file_is_refused(self) -> None:
        """One hunk outside expected_files exceeds a budget of zero, naming the file."""
        changes = [
            update("src/users.py", "a\n", "b\n"),
            update("src/auth.py", "c\n", "d\n"),
        ]
        ctx = context(Policy(max_hunks_outside_expected=0), expected=("src/users.py",))

        failures = HunksOutsideExpectedGuard().check(changes, ctx)

        assert 1 == len(failures)
        assert "src/auth.py" in failures[0].message

    def test_only_expected_files_pass(self) -> None:
        """Hunks inside the expected files do not count."""
        change = update("src/users.py", _lines(40), _lines(40).replace("line 1\n", "x\n"))
        ctx = context(Policy(max_hunks_outside_expected=0), expected=("src/*.py",))

        assert [] == HunksOutsideExpectedGuard().check([change], ctx)

    def test_distant_edits_are_separate_hunks(self) -> None:
        """Edits far apart count as two hunks; within budget two, over budget one."""
        old = _lines(40)
        new = old.replace("line 1\n", "x\n").replace("line 30\n", "y\n")
        change = update("other.py", old, new)

        ok = context(Policy(max_hunks_outside_expected=2), expected=("main.py",))
        tight = context(Policy(max_hunks_outside_expected=1), expected=("main.py",))

        assert [] == HunksOutsideExpectedGuard().check([change], ok)
        assert 1 == len(HunksOutsideExpectedGuard().check([change], tight))

    def test_nearby_edits_are_one_hunk(self) -> None:
        """Edits a few lines apart share one hunk."""
        old = _lines(40)
        new = old.replace("line 10\n", "x\n").replace("line 14\n", "y\n")
        ctx = context(Policy(max_hunks_outside_expected=1), expected=("main.py",))

        assert [] == HunksOutsideExpectedGuard().check([update("o.py", old, new)], ctx)

    def test_no_expected_files_means_nothing_is_outside(self) -> None:
        """Without declared expected files the guard passes."""
        ctx = context(Policy(max_hunks_outside_expected=0))

        assert [] == HunksOutsideExpectedGuard().check([update("a", "a\n", "b\n")], ctx)
