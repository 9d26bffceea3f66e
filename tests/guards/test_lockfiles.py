"""Tests for the lockfile guard."""

from __future__ import annotations

import pytest
from tests.guards.changes import context, create, delete, update

from patchsmith.errors import FailureCode
from patchsmith.guards.lockfiles import LOCKFILE_NAMES, LockfileGuard, is_lockfile


class TestLockfileGuard:
    @pytest.mark.parametrize("name", sorted(LOCKFILE_NAMES))
    def test_hand_edit_of_each_lockfile_is_refused(self, name: str) -> None:
        """Every known lockfile name, at any depth, refuses a hand edit."""
        failures = LockfileGuard().check([update(f"pkg/{name}", "a\n", "b\n")], context())

        assert [FailureCode.LOCKFILE_CHANGED] == [f.code for f in failures]
        assert "lockfile" == failures[0].rule

    def test_command_generated_change_passes(self) -> None:
        """A lockfile change produced by a command profile passes."""
        change = update("go.sum", "a\n", "b\n", generated_by_command=True)

        assert [] == LockfileGuard().check([change], context())

    def test_creating_and_deleting_lockfiles_is_refused(self) -> None:
        """Creating or deleting a lockfile by hand is refused too."""
        changes = [create("uv.lock", "x\n"), delete("yarn.lock", "y\n")]

        assert 2 == len(LockfileGuard().check(changes, context()))

    @pytest.mark.parametrize("path", ["package.json", "Cargo.toml", "lock.py", "go.mod", "my.lock"])
    def test_manifests_and_lookalikes_pass(self, path: str) -> None:
        """Manifests and names that merely resemble lockfiles are not lockfiles."""
        assert not is_lockfile(path)
        assert [] == LockfileGuard().check([update(path, "a\n", "b\n")], context())
