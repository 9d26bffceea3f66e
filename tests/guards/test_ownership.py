"""Tests for the ownership (CODEOWNERS) guard."""

from __future__ import annotations

from pathlib import Path

from tests.guards.changes import context, update

from patchsmith.errors import FailureCode
from patchsmith.guards import GuardContext
from patchsmith.guards.ownership import OwnershipGuard, parse_codeowners
from patchsmith.policy import OwnershipMode, OwnershipPolicy, Policy

CODEOWNERS = """\
# owners
*           @web
/billing/   @payments   # money
docs/       @web @docs
billing/readme.md @web
"""


def _ctx(root: Path, mode: OwnershipMode = OwnershipMode.REFUSE) -> GuardContext:
    policy = Policy(ownership=OwnershipPolicy(owner=("@WEB",), mode=mode))
    return GuardContext(policy=policy, root=root)


class TestParseCodeowners:
    def test_last_matching_rule_wins(self) -> None:
        """The last rule matching a path gives its owners."""
        owners = parse_codeowners(CODEOWNERS)

        assert ("@payments",) == owners.owners_of("billing/invoice.py")
        assert ("@web",) == owners.owners_of("billing/readme.md")
        assert ("@web",) == owners.owners_of("src/app.py")
        assert () == parse_codeowners("").owners_of("x")


class TestOwnershipGuard:
    def test_change_to_others_paths_is_refused(self, tmp_path: Path) -> None:
        """A path owned only by another team is refused."""
        (tmp_path / ".github").mkdir()
        (tmp_path / ".github" / "CODEOWNERS").write_text(CODEOWNERS)
        changes = [update("billing/invoice.py", "a\n", "b\n"), update("src/app.py", "a\n", "b\n")]

        failures = OwnershipGuard().check(changes, _ctx(tmp_path))

        assert [FailureCode.OWNERSHIP_VIOLATION] == [f.code for f in failures]
        assert "billing/invoice.py is owned by @payments" in failures[0].message

    def test_flag_mode_reports_instead(self, tmp_path: Path) -> None:
        """In flag mode the change passes and the path is reported."""
        (tmp_path / "CODEOWNERS").write_text(CODEOWNERS)
        guard = OwnershipGuard()

        assert [] == guard.check(
            [update("billing/x.py", "a\n", "b\n")], _ctx(tmp_path, OwnershipMode.FLAG)
        )
        assert 1 == len(guard.flagged)

    def test_off_without_owner_or_codeowners(self, tmp_path: Path) -> None:
        """No configured owner, or no CODEOWNERS file: nothing to check."""
        change = update("billing/x.py", "a\n", "b\n")
        (tmp_path / "CODEOWNERS").write_text(CODEOWNERS)

        assert [] == OwnershipGuard().check([change], context())
        assert [] == OwnershipGuard().check([change], _ctx(tmp_path / "missing"))

    def test_rules_before_the_change_apply(self, tmp_path: Path) -> None:
        """A change rewriting CODEOWNERS is judged by the rules it replaces."""
        hijack = update("CODEOWNERS", CODEOWNERS, "* @web\n")
        change = update("billing/x.py", "a\n", "b\n")

        failures = OwnershipGuard().check([hijack, change], _ctx(tmp_path))

        assert ["billing/x.py"] == [f.file for f in failures]
