"""The policy-file guard, unit by unit: which changes rewrite the rules and which do not."""

from __future__ import annotations

from tests.guards.changes import context, create, delete, move, update

from patchsmith.errors import FailureCode
from patchsmith.guards.policyfiles import PolicyFileGuard, patchsmith_table

PYPROJECT = (
    '[project]\nname = "x"\nversion = "1"\n\n[tool.patchsmith.policy]\nforbidden = ["ci/**"]\n'
)


class TestPolicyFileGuard:
    def test_patchsmith_toml_update_is_refused(self) -> None:
        """Any edit of patchsmith.toml is PROTECTED_PATH, naming the rule and the file."""
        change = update("patchsmith.toml", '[policy]\nforbidden = ["x"]\n', "[policy]\n")

        failures = PolicyFileGuard().check([change], context())

        assert [FailureCode.PROTECTED_PATH] == [f.code for f in failures]
        assert "policy_files" == failures[0].rule
        assert "patchsmith.toml" == failures[0].file
        assert "--allow-policy-edit" in (failures[0].hint or "")

    def test_create_delete_and_move_of_the_policy_file_are_refused(self) -> None:
        """Creating, deleting or moving patchsmith.toml (any depth, any case) changes the rules."""
        changes = [
            create("sub/patchsmith.toml", "[policy]\n"),
            delete("PatchSmith.toml", "[policy]\n"),
            move("patchsmith.toml", "old.toml", "[policy]\n"),
        ]

        failures = PolicyFileGuard().check(changes, context())

        assert ["sub/patchsmith.toml", "PatchSmith.toml", "patchsmith.toml"] == [
            f.file for f in failures
        ]

    def test_other_toml_files_pass(self) -> None:
        """A near miss: other TOML files are ordinary files."""
        changes = [update("patchsmith.toml.bak", "a\n", "b\n"), create("ruff.toml", "x = 1\n")]

        assert [] == PolicyFileGuard().check(changes, context())

    def test_pyproject_edit_outside_the_table_passes(self) -> None:
        """Bumping the version of a pyproject.toml that holds a policy is allowed."""
        change = update("pyproject.toml", PYPROJECT, PYPROJECT.replace('"1"', '"2"'))

        assert [] == PolicyFileGuard().check([change], context())

    def test_pyproject_reformatted_table_passes(self) -> None:
        """The parsed table is compared, so reformatting it changes nothing."""
        reformatted = PYPROJECT.replace('forbidden = ["ci/**"]', "forbidden = [ 'ci/**' ]")

        assert [] == PolicyFileGuard().check(
            [update("pyproject.toml", PYPROJECT, reformatted)], context()
        )

    def test_pyproject_table_change_is_refused(self) -> None:
        """Emptying `forbidden` inside [tool.patchsmith.policy] is PROTECTED_PATH."""
        loosened = PYPROJECT.replace('["ci/**"]', "[]")

        failures = PolicyFileGuard().check(
            [update("pyproject.toml", PYPROJECT, loosened)], context()
        )

        assert ["pyproject.toml"] == [f.file for f in failures]
        assert "[tool.patchsmith]" in failures[0].message

    def test_pyproject_adding_or_removing_the_table_is_refused(self) -> None:
        """Adding a policy table to a pyproject.toml, or deleting the file that holds one."""
        plain = '[project]\nname = "x"\n'
        changes = [
            update("a/pyproject.toml", plain, plain + "[tool.patchsmith]\nx = 1\n"),
            delete("b/pyproject.toml", PYPROJECT),
            create("c/pyproject.toml", PYPROJECT),
        ]

        failures = PolicyFileGuard().check(changes, context())

        assert ["a/pyproject.toml", "b/pyproject.toml", "c/pyproject.toml"] == [
            f.file for f in failures
        ]

    def test_pyproject_without_a_table_can_be_created_and_deleted(self) -> None:
        """No [tool.patchsmith] before or after: nothing about the policy changes."""
        plain = '[project]\nname = "x"\n'
        changes = [create("pyproject.toml", plain), delete("lib/pyproject.toml", plain)]

        assert [] == PolicyFileGuard().check(changes, context())

    def test_pyproject_made_unparsable_is_refused(self) -> None:
        """Breaking the TOML hides the table, which is a change of the policy."""
        failures = PolicyFileGuard().check(
            [update("pyproject.toml", PYPROJECT, PYPROJECT + "[[[\n")], context()
        )

        assert ["pyproject.toml"] == [f.file for f in failures]


class TestBrokenPyproject:
    """A pyproject.toml that is not TOML before and after: no table to compare."""

    BROKEN = '[project]\nname = "x"\nversion = 1.0.0\n\n[tool.mypy]\nstrict = true\n'

    def test_edit_that_names_no_table_passes(self) -> None:
        """Neither side could hold a [tool.patchsmith] table: not a policy edit."""
        change = update("pyproject.toml", self.BROKEN, self.BROKEN + "\n[tool.isort]\n")

        assert [] == PolicyFileGuard().check([change], context())

    def test_edit_of_a_broken_file_that_names_the_table_is_refused(self) -> None:
        """Rewriting a broken file's policy table unseen would take effect once the TOML
        is fixed: a policy edit, whichever side names the table."""
        with_table = self.BROKEN + '\n[tool.patchsmith.policy]\nforbidden = ["ci/**"]\n'
        loosened = with_table.replace('["ci/**"]', "[]")

        for old, new in ((with_table, loosened), (self.BROKEN, with_table)):
            failures = PolicyFileGuard().check([update("pyproject.toml", old, new)], context())

            assert [FailureCode.PROTECTED_PATH] == [f.code for f in failures]

    def test_an_escape_that_could_spell_the_table_is_refused(self) -> None:
        """`"patch\\u0073mith"` is the same TOML key without the word."""
        new = self.BROKEN + '\n[tool."patch\\u0073mith".policy]\nforbidden = []\n'

        assert 1 == len(
            PolicyFileGuard().check([update("pyproject.toml", self.BROKEN, new)], context())
        )

    def test_fixing_the_toml_is_a_policy_edit(self) -> None:
        """From not-TOML to TOML the rules in force change (from none to some)."""
        fixed = self.BROKEN.replace("1.0.0", '"1.0.0"')

        assert 1 == len(
            PolicyFileGuard().check([update("pyproject.toml", self.BROKEN, fixed)], context())
        )


class TestPatchsmithTable:
    def test_reads_the_table(self) -> None:
        assert {"policy": {"forbidden": ["ci/**"]}} == patchsmith_table(PYPROJECT.encode())

    def test_absent_file_and_absent_table_are_none(self) -> None:
        assert None is patchsmith_table(None)
        assert None is patchsmith_table(b'[project]\nname = "x"\n')

    def test_broken_files_are_equal_to_each_other(self) -> None:
        assert patchsmith_table(b"[[[") == patchsmith_table(b"\xff")
        assert patchsmith_table(b"tool = 1\n") == patchsmith_table(b"[[[")
