"""Tests for command profiles: argv templates, parameter validation, loading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from patchsmith.commands import (
    BUILTIN_PROFILES,
    CommandParam,
    CommandProfile,
    ParamKind,
    load_profiles,
    render_argv,
)
from patchsmith.errors import FailureCode, PatchFailure

FORMAT = BUILTIN_PROFILES["ruff-format"]
TAGGED = CommandProfile(
    argv=("tool", "--tag={tag}", "{files}"),
    params={
        "tag": CommandParam(pattern=r"[a-z]+"),
        "files": CommandParam(kind=ParamKind.PATH, multiple=True),
    },
)


class TestRenderArgv:
    def test_defaults_fill_the_template(self) -> None:
        """Without values, a parameter's default is used."""
        assert ("ruff", "format", "--no-cache", ".") == render_argv(FORMAT, {})

    def test_multiple_values_expand_and_slots_substitute(self) -> None:
        """A multiple parameter expands to several elements; a slot inside text is substituted."""
        argv = render_argv(TAGGED, {"tag": "x", "files": ("a.py", "b/c.py")})

        assert ("tool", "--tag=x", "a.py", "b/c.py") == argv

    @pytest.mark.parametrize(
        ("given", "problem"),
        [
            ({"files": "a"}, "tag is required"),
            ({"tag": "x", "files": "a", "other": "1"}, "unknown parameter(s) other"),
            ({"tag": "X1", "files": "a"}, "does not match"),
            ({"tag": "x", "files": "-rf"}, "starts with '-'"),
            ({"tag": "x", "files": "../etc"}, "relative path inside the workspace"),
            ({"tag": "x", "files": "/etc/passwd"}, "relative path inside the workspace"),
            ({"tag": ("x", "y"), "files": "a"}, "exactly one value"),
            ({"tag": "x", "files": "a\nb"}, "control character"),
        ],
    )
    def test_bad_values_are_refused(self, given: dict[str, object], problem: str) -> None:
        """Every way a value could smuggle in free text is COMMAND_NOT_ALLOWED."""
        failure = render_argv(TAGGED, given)  # type: ignore[arg-type]

        assert isinstance(failure, PatchFailure)
        assert FailureCode.COMMAND_NOT_ALLOWED == failure.code
        assert problem in failure.message

    @settings(max_examples=60)
    @given(st.text(max_size=20))
    def test_a_rendered_value_is_never_an_option(self, value: str) -> None:
        """Whatever the text, a rendered argv never gains an element starting with '-'."""
        argv = render_argv(FORMAT, {"paths": value})

        if not isinstance(argv, PatchFailure):
            assert all(not a.startswith("-") for a in argv[3:])


class TestProfileModel:
    @pytest.mark.parametrize(
        ("data", "problem"),
        [
            ({"argv": ["{x}"], "params": {"x": {}}}, "argv[0]"),
            ({"argv": ["t", "{y}"]}, "does not declare"),
            ({"argv": ["t", "a{p}"], "params": {"p": {"multiple": True}}}, "whole argv element"),
            ({"argv": ["t"], "cwd": "../up"}, "relative path"),
            ({"argv": ["t"], "shell": True}, "Extra inputs"),
            ({"argv": ["t"], "params": {"p": {"pattern": "("}}}, "does not compile"),
        ],
    )
    def test_bad_profiles_are_rejected(self, data: dict[str, object], problem: str) -> None:
        """A profile that could run free text, or is malformed, does not validate."""
        with pytest.raises(ValidationError, match=re.escape(problem)):
            CommandProfile.model_validate(data)


class TestLoadProfiles:
    def test_builtins_without_config(self, tmp_path: Path) -> None:
        """A workspace without configuration has the built-in profiles."""
        assert dict(BUILTIN_PROFILES) == load_profiles(tmp_path)

    def test_patchsmith_toml_adds_and_overrides(self, tmp_path: Path) -> None:
        """[commands.NAME] adds a profile or replaces a built-in of that name."""
        (tmp_path / "patchsmith.toml").write_text(
            '[commands.gen]\nargv = ["make", "gen"]\nexpected_changed_paths = ["gen/"]\n'
            '[commands.npm-lock]\nargv = ["npm", "install", "--package-lock-only"]\n'
        )

        profiles = load_profiles(tmp_path)

        assert not isinstance(profiles, PatchFailure)
        assert ("make", "gen") == profiles["gen"].argv
        assert ("npm", "install", "--package-lock-only") == profiles["npm-lock"].argv
        assert "ruff-format" in profiles

    def test_pyproject_table(self, tmp_path: Path) -> None:
        """Without patchsmith.toml, [tool.patchsmith.commands] is read."""
        (tmp_path / "pyproject.toml").write_text(
            '[tool.patchsmith.commands.gen]\nargv = ["make"]\n'
        )

        profiles = load_profiles(tmp_path)

        assert not isinstance(profiles, PatchFailure)
        assert ("make",) == profiles["gen"].argv

    @pytest.mark.parametrize(
        "text",
        ['[commands.x]\nargv = "make gen"\n', "[commands\n", 'commands = "x"\n'],
    )
    def test_bad_configuration_is_refused(self, tmp_path: Path, text: str) -> None:
        """A shell string, broken TOML or a non-table is COMMAND_NOT_ALLOWED, naming the file."""
        (tmp_path / "patchsmith.toml").write_text(text)

        failure = load_profiles(tmp_path)

        assert isinstance(failure, PatchFailure)
        assert FailureCode.COMMAND_NOT_ALLOWED == failure.code
        assert "patchsmith.toml" == failure.file
