"""Tests for the write-scope and forbidden-path guards."""

from __future__ import annotations

from tests.guards.changes import context, create, move, update

from patchsmith.errors import FailureCode
from patchsmith.guards.scope import ForbiddenPathGuard, WriteScopeGuard
from patchsmith.policy import Policy


class TestWriteScopeGuard:
    def test_default_scope_is_whole_workspace(self) -> None:
        """Without include/exclude every path is in scope."""
        changes = [update("deep/a/b.py", "x\n", "y\n"), create("README.md", "hi\n")]

        assert [] == WriteScopeGuard().check(changes, context())

    def test_outside_include_is_refused(self) -> None:
        """A path matching no include pattern is OUT_OF_SCOPE, naming the rule and path."""
        policy = Policy(include=("src/**",))

        failures = WriteScopeGuard().check([update("setup.cfg", "a\n", "b\n")], context(policy))

        assert [FailureCode.OUT_OF_SCOPE] == [f.code for f in failures]
        assert "write_scope" == failures[0].rule
        assert "setup.cfg" == failures[0].file
        assert "include src/**" in (failures[0].hint or "")

    def test_inside_include_passes(self) -> None:
        """A path matching an include pattern passes (near miss of the above)."""
        policy = Policy(include=("src/**",))

        assert [] == WriteScopeGuard().check([update("src/x.py", "a\n", "b\n")], context(policy))

    def test_exclude_wins_over_include(self) -> None:
        """An excluded path is out of scope even when included."""
        policy = Policy(include=("src/**",), exclude=("src/vendor/",))

        failures = WriteScopeGuard().check(
            [update("src/vendor/lib.py", "a\n", "b\n")], context(policy)
        )

        assert ["src/vendor/lib.py"] == [f.file for f in failures]

    def test_move_checks_both_ends(self) -> None:
        """Moving a file out of scope is refused for the destination."""
        policy = Policy(include=("src/**",))

        failures = WriteScopeGuard().check([move("src/a.py", "lib/a.py", "x\n")], context(policy))

        assert ["lib/a.py"] == [f.file for f in failures]


class TestForbiddenPathGuard:
    def test_nothing_forbidden_by_default(self) -> None:
        """The default policy forbids nothing."""
        assert [] == ForbiddenPathGuard().check([create("secrets/x", "a\n")], context())

    def test_proposal_forbidden_files_refuse(self) -> None:
        """A path matching the proposal's forbidden_files is FORBIDDEN_PATH."""
        failures = ForbiddenPathGuard().check(
            [create("secrets/prod.env", "K=v\n")], context(forbidden=("secrets/**",))
        )

        assert [FailureCode.FORBIDDEN_PATH] == [f.code for f in failures]
        assert "forbidden_paths" == failures[0].rule

    def test_policy_forbidden_refuses_even_in_scope(self) -> None:
        """Policy-forbidden paths are refused whatever the include list says."""
        policy = Policy(include=("**",), forbidden=(".github/workflows/",))

        failures = ForbiddenPathGuard().check(
            [update(".github/workflows/ci.yml", "a\n", "b\n")], context(policy)
        )

        assert [".github/workflows/ci.yml"] == [f.file for f in failures]

    def test_similar_name_is_not_forbidden(self) -> None:
        """A sibling that only shares a prefix with a forbidden directory passes."""
        failures = ForbiddenPathGuard().check(
            [create("secrets_doc.md", "a\n")], context(forbidden=("secrets/",))
        )

        assert [] == failures

    def test_move_from_forbidden_path_is_refused(self) -> None:
        """Moving a file away from a forbidden path also touches that path."""
        failures = ForbiddenPathGuard().check(
            [move("keys/id_rsa", "tmp/id_rsa", "k\n")], context(forbidden=("keys/",))
        )

        assert ["keys/id_rsa"] == [f.file for f in failures]
