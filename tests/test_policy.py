"""Tests for the policy model, its loading and its narrowing by a proposal."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.proposal import PatchProposal
from patchsmith.policy import GuardSwitches, Policy, load_policy, matches


def _proposal(**fields: Any) -> PatchProposal:
    base: dict[str, Any] = {
        "proposal_id": "p",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": "DIRECT_FILE_EDIT",
        "objective": "o",
        "operations": [{"type": "patch", "text": "x"}],
    }
    return PatchProposal.model_validate(base | fields)


def _budgets(files: int | None = None, lines: int | None = None) -> list[dict[str, Any]]:
    posts: list[dict[str, Any]] = []
    if files is not None:
        posts.append({"type": "DIFF_MAX_FILES", "value": files})
    if lines is not None:
        posts.append({"type": "DIFF_MAX_LINES", "value": lines})
    return posts


class TestPolicy:
    def test_defaults_refuse_nothing_ordinary(self) -> None:
        """The default policy has an open scope, no forbidden paths and no diff budgets."""
        policy = Policy()

        assert policy.in_scope("any/where/file.py")
        assert () == policy.forbidden
        assert (None, None, None) == (
            policy.max_files,
            policy.max_changed_lines,
            policy.max_hunks_outside_expected,
        )
        assert all(GuardSwitches().model_dump().values())
        assert policy.record

    def test_unknown_keys_rejected(self) -> None:
        """A misspelt key is an error, not silently ignored."""
        with pytest.raises(ValidationError):
            Policy.model_validate({"max_file": 3})

    def test_gitignore_patterns(self) -> None:
        """Patterns follow gitignore rules: directories, globs, negation."""
        patterns = ("build/", "*.pem", "!public.pem")

        assert matches(patterns, "build/x/y.o")
        assert matches(patterns, "keys/server.pem")
        assert not matches(patterns, "public.pem")
        assert not matches(patterns, "buildscript.py")

    def test_guard_switches(self) -> None:
        """A guard switched off reports as disabled; unknown names count as on."""
        policy = Policy(guards=GuardSwitches(syntax=False))

        assert not policy.guard_enabled("syntax")
        assert policy.guard_enabled("secrets")
        assert policy.guard_enabled("not_a_guard")


class TestTightenedBy:
    def test_adds_forbidden_files(self) -> None:
        """The proposal's forbidden files join the policy's."""
        policy = Policy(forbidden=(".env",))

        tightened = policy.tightened_by(_proposal(forbidden_files=["secrets/**", ".env"]))

        assert (".env", "secrets/**") == tightened.forbidden

    def test_lowers_budgets(self) -> None:
        """Lower budgets from postconditions apply."""
        policy = Policy(max_files=10, max_changed_lines=500)

        tightened = policy.tightened_by(_proposal(expected_postconditions=_budgets(2, 40)))

        assert (2, 40) == (tightened.max_files, tightened.max_changed_lines)
        assert () == policy.loosening_attempts(_proposal(expected_postconditions=_budgets(2, 40)))

    def test_sets_budgets_when_policy_has_none(self) -> None:
        """A budget on an unlimited policy is a narrowing."""
        tightened = Policy().tightened_by(_proposal(expected_postconditions=_budgets(3)))

        assert 3 == tightened.max_files

    def test_loosening_is_ignored_and_reported(self) -> None:
        """Higher budgets are ignored, and each attempt is named."""
        policy = Policy(max_files=2, max_changed_lines=10)
        proposal = _proposal(expected_postconditions=_budgets(50, 1000))

        tightened = policy.tightened_by(proposal)
        notes = policy.loosening_attempts(proposal)

        assert (2, 10) == (tightened.max_files, tightened.max_changed_lines)
        assert 2 == len(notes)
        assert "DIFF_MAX_FILES 50" in notes[0]

    @given(
        st.one_of(st.none(), st.integers(0, 100)),
        st.lists(st.integers(0, 100), max_size=3),
    )
    def test_never_loosens(self, limit: int | None, proposed: list[int]) -> None:
        """Whatever the proposal asks, the result is never above the policy's limit."""
        policy = Policy(max_files=limit)
        posts = [{"type": "DIFF_MAX_FILES", "value": v} for v in proposed]

        result = policy.tightened_by(_proposal(expected_postconditions=posts)).max_files

        if limit is not None:
            assert result is not None and result <= limit
        if proposed:
            assert result == min([*proposed, *([limit] if limit is not None else [])])


class TestLoadPolicy:
    def test_no_files_gives_defaults(self, tmp_path: Path) -> None:
        """Without policy files the defaults apply."""
        assert Policy() == load_policy(tmp_path)

    def test_patchsmith_toml(self, tmp_path: Path) -> None:
        """`[policy]` in patchsmith.toml is read; other tables are left to their owners."""
        (tmp_path / "patchsmith.toml").write_text(
            '[policy]\nforbidden = ["secrets/**"]\nmax_files = 4\n'
            "[policy.guards]\nsyntax = false\n"
            '[profiles.unit]\nargv = ["pytest"]\n',
            encoding="utf-8",
        )

        policy = load_policy(tmp_path)

        assert isinstance(policy, Policy)
        assert ("secrets/**",) == policy.forbidden
        assert 4 == policy.max_files
        assert not policy.guard_enabled("syntax")

    def test_patchsmith_toml_wins_over_pyproject(self, tmp_path: Path) -> None:
        """patchsmith.toml takes precedence over pyproject.toml."""
        (tmp_path / "patchsmith.toml").write_text("[policy]\nmax_files = 1\n", encoding="utf-8")
        (tmp_path / "pyproject.toml").write_text(
            "[tool.patchsmith.policy]\nmax_files = 9\n", encoding="utf-8"
        )

        assert 1 == getattr(load_policy(tmp_path), "max_files", None)

    def test_pyproject_table(self, tmp_path: Path) -> None:
        """`[tool.patchsmith.policy]` in pyproject.toml is read."""
        (tmp_path / "pyproject.toml").write_text(
            '[project]\nname = "x"\n[tool.patchsmith.policy]\ninclude = ["src/**"]\n',
            encoding="utf-8",
        )

        policy = load_policy(tmp_path)

        assert isinstance(policy, Policy)
        assert not policy.in_scope("setup.py")

    def test_pyproject_without_table_gives_defaults(self, tmp_path: Path) -> None:
        """A pyproject.toml without a patchsmith table means the defaults."""
        (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")

        assert Policy() == load_policy(tmp_path)

    def test_unchanged_file_is_not_parsed_again(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A policy file read again with the same text gives the same policy without a
        second TOML parse (a long-lived caller's every apply reads it)."""
        import tomllib

        (tmp_path / "pyproject.toml").write_text(
            '[project]\nname = "cached"\n[tool.patchsmith.policy]\nmax_files = 7\n',
            encoding="utf-8",
        )
        parsed: list[str] = []
        loads = tomllib.loads
        monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or loads(text))

        first, second = load_policy(tmp_path), load_policy(tmp_path)

        assert 7 == getattr(first, "max_files", None)
        assert first == second
        assert len(parsed) <= 1

    def test_edited_file_is_read_anew_whatever_its_stat(self, tmp_path: Path) -> None:
        """An edit that keeps the file's size and modification time still changes the
        policy: what is kept is matched by the text, never by the file's metadata."""
        import os

        policy_file = tmp_path / "patchsmith.toml"
        policy_file.write_text("[policy]\nmax_files = 1\n", encoding="utf-8")
        before = os.stat(policy_file)
        assert 1 == getattr(load_policy(tmp_path), "max_files", None)

        policy_file.write_text("[policy]\nmax_files = 2\n", encoding="utf-8")
        os.utime(policy_file, ns=(before.st_atime_ns, before.st_mtime_ns))

        assert 2 == getattr(load_policy(tmp_path), "max_files", None)
        policy_file.write_text("[policy]\nmax_filez = 2\n", encoding="utf-8")
        failure = load_policy(tmp_path)
        assert isinstance(failure, PatchFailure) and "max_filez" in failure.message

    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            ("[policy]\nmax_filez = 3\n", "max_filez"),
            ("[policy]\nmax_files = -1\n", "max_files"),
            ('[policy]\nforbidden = "x"\n', "forbidden"),
            ("policy = 3\n", "must be a table"),
            ("[policy\n", "cannot read"),
            ("[policy.guards]\nsecretz = false\n", "guards.secretz"),
        ],
    )
    def test_bad_files_are_invalid_policy(self, tmp_path: Path, text: str, needle: str) -> None:
        """Unknown keys, bad values and broken TOML are INVALID_POLICY naming the problem."""
        (tmp_path / "patchsmith.toml").write_text(text, encoding="utf-8")

        failure = load_policy(tmp_path)

        assert isinstance(failure, PatchFailure)
        assert FailureCode.INVALID_POLICY == failure.code
        assert needle in failure.message
        assert "patchsmith.toml" == failure.file

    def test_broken_toml_shows_the_lines_around_the_error(self, tmp_path: Path) -> None:
        """A file that is not TOML comes back with its lines around the error and its hash."""
        text = "".join(f"# line {n}\n" for n in range(1, 30)) + "[policy\nmax_files = 3\n"
        (tmp_path / "patchsmith.toml").write_text(text, encoding="utf-8")

        failure = load_policy(tmp_path)

        assert isinstance(failure, PatchFailure)
        assert failure.excerpt is not None
        assert "30 | [policy" in failure.excerpt
        assert "1 | # line 1" not in failure.excerpt
        assert hashlib.sha256(text.encode()).hexdigest() == failure.current_sha256
