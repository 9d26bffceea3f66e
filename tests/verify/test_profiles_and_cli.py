"""Profile loading and detection, the targeted-test graph, comparison, and `patchsmith verify`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.verify.conftest import CALC, git_commit_all

import patchsmith
import patchsmith.cli
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.evidence import ToolFailure
from patchsmith.verify import ProfileSet, ProfileSource, detect_profiles, load_profiles
from patchsmith.verify.baseline import compare
from patchsmith.verify.targeted import module_names, targeted_tests


class TestLoading:
    def test_config_overrides_builtin(self, project: Path) -> None:
        """A configured profile replaces the detected one of the same name."""
        loaded = load_profiles(project)

        assert isinstance(loaded, ProfileSet)
        assert ProfileSource.PATCHSMITH_TOML == loaded.sources["pytest"]
        assert "--junitxml={report}" in loaded.profiles["pytest"].argv

    def test_pyproject_table(self, tmp_path: Path) -> None:
        """Without patchsmith.toml, `[tool.patchsmith.verify.NAME]` in pyproject.toml is read."""
        (tmp_path / "pyproject.toml").write_text(
            '[tool.patchsmith.verify.check]\nargv = ["true"]\nkind = "lint"\n'
        )
        loaded = load_profiles(tmp_path)

        assert isinstance(loaded, ProfileSet)
        assert ProfileSource.PYPROJECT_TOML == loaded.sources["check"]
        assert ProfileSource.BUILTIN == loaded.sources["pytest"]

    @pytest.mark.parametrize(
        "body",
        [
            '[verify.x]\nargv = ["a"]\nshell = true\n',
            '[verify.x]\nargv = "make test"\n',
            '[verify.x]\nargv = ["a"]\ncwd = "../up"\n',
            '[verify.x]\nargv = ["a"]\nparser = "junit-ish"\n',
            '[verify]\nminimum_evidence = { HYBRID = "vibes" }\n',
            '[verify."bad name"]\nargv = ["a"]\n',
            "[verify\n",
        ],
    )
    def test_bad_config_is_invalid_policy(self, tmp_path: Path, body: str) -> None:
        """Unknown keys, shell strings, escaping cwds, unknown parsers or levels are refused."""
        (tmp_path / "patchsmith.toml").write_text(body)

        loaded = load_profiles(tmp_path)

        assert isinstance(loaded, PatchFailure)
        assert FailureCode.INVALID_POLICY == loaded.code

    def test_detection(self, tmp_path: Path) -> None:
        """Built-ins follow the manifests present."""
        (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n[tool.mypy]\n")
        (tmp_path / "package.json").write_text('{"scripts": {"test": "node t.js"}}')
        (tmp_path / "tsconfig.json").write_text("{}")
        (tmp_path / "go.mod").write_text("module x\n")
        (tmp_path / "Cargo.toml").write_text("[package]\n")

        assert {
            "pytest",
            "ruff",
            "mypy",
            "npm-test",
            "tsc",
            "go-test",
            "cargo-check",
            "cargo-test",
        } == set(detect_profiles(tmp_path))
        assert {} == detect_profiles(tmp_path / "missing")


class TestTargeted:
    def test_module_names(self) -> None:
        """src layout files are importable with and without `src.`."""
        assert ("src.pkg.a", "pkg.a") == module_names("src/pkg/a.py")
        assert ("pkg",) == module_names("pkg/__init__.py")

    def test_transitive_importers(self, tmp_path: Path) -> None:
        """A test importing a module that imports the changed one is targeted too."""
        files = {
            "pkg/__init__.py": "",
            "pkg/core.py": "X = 1\n",
            "pkg/api.py": "from .core import X\n",
            "tests/test_api.py": "from pkg import api\n",
            "tests/test_core.py": "import pkg.core\n",
            "tests/test_none.py": "import os\n",
            "tests/test_broken.py": "def (:\n",
        }
        for name, text in files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)

        assert ("tests/test_api.py", "tests/test_core.py") == targeted_tests(
            tmp_path, ["pkg/core.py"]
        )
        assert ("tests/test_api.py",) == targeted_tests(tmp_path, ["pkg/api.py"])
        assert () == targeted_tests(tmp_path, ["README.md"])


def _f(message: str, test_id: str | None = None, line: int = 1) -> ToolFailure:
    return ToolFailure(tool="t", message=message, file="a.py", line=line, test_id=test_id)


class TestCompare:
    def test_moved_failure_is_preexisting(self) -> None:
        """A failure that only moved lines is not introduced; a new one is; a gone one fixed."""
        base = [_f("E1 at 3", line=3), _f("gone")]
        changed = [_f("E1 at 9", line=9), _f("new")]

        result = compare(base, changed)

        assert (["new"], ["gone"], ["E1 at 9"]) == (
            [f.message for f in result.introduced],
            [f.message for f in result.fixed],
            [f.message for f in result.preexisting],
        )

    @given(
        st.lists(st.sampled_from("abc"), max_size=6), st.lists(st.sampled_from("abc"), max_size=6)
    )
    def test_partition(self, base: list[str], changed: list[str]) -> None:
        """Introduced + pre-existing is the changed run; fixed + pre-existing is the base."""
        result = compare([_f(m) for m in base], [_f(m) for m in changed])

        assert len(changed) == len(result.introduced) + len(result.preexisting)
        assert len(base) == len(result.fixed) + len(result.preexisting)


class TestCli:
    def test_list(self, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`--list --json` names each profile with its source and kind."""
        code = patchsmith.cli.main(["verify", "--list", "--json", "-C", str(project)])
        shown = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert {"compile", "lint", "pytest"} <= {p["name"] for p in shown["profiles"]}
        assert "targeted-tests" == shown["minimum_evidence"]["UNIFIED_DIFF"]

    def test_only_introduced_against_head(
        self, project: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Against HEAD, the broken test is introduced and the known bug pre-existing; exit 1."""
        git_commit_all(project)
        (project / "pkg/calc.py").write_bytes(CALC.replace(b"a + b", b"a - b"))

        code = patchsmith.cli.main(["verify", "pytest", "-C", str(project), "--json"])
        report = json.loads(capsys.readouterr().out)

        assert 1 == code
        outcome = report["profiles"][0]
        assert ["tests.test_calc::test_add"] == [f["test_id"] for f in outcome["introduced"]]
        assert 1 == outcome["preexisting_total"]
        assert outcome["targeted_only"]

        code = patchsmith.cli.main(["verify", "pytest", "-C", str(project)])
        text = capsys.readouterr().out
        assert "1 introduced, 0 fixed, 1 pre-existing" in text

    def test_python_api_is_callable_package(self, project: Path) -> None:
        """`patchsmith.verify(root, profiles)` runs verification (no base outside git)."""
        report = patchsmith.verify(project, ["lint", "compile"])

        assert report.passed
        assert "compile" == report.level.label
        assert 2 == len(report.evidence)

    def test_usage_errors(self, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown profile, a bad base or a missing directory exit 2."""
        assert 2 == patchsmith.cli.main(["verify", "nope", "-C", str(project)])
        assert 2 == patchsmith.cli.main(["verify", "lint", "--base", "zz", "-C", str(project)])
        assert 2 == patchsmith.cli.main(["verify", "-C", str(project / "missing")])
        (project / "patchsmith.toml").write_text("[verify.x]\nargv = 1\n")
        assert 2 == patchsmith.cli.main(["verify", "--json", "-C", str(project)])
        assert "INVALID_POLICY" in capsys.readouterr().out


class TestToolsThatDoNotRun:
    def test_missing_tool_never_passes(self, project: Path) -> None:
        """A profile whose program is missing fails, even when the base failed the same way."""
        git_commit_all(project)
        config = project / "patchsmith.toml"
        config.write_text(config.read_text() + '\n[verify.ghost]\nargv = ["no-such-tool-x"]\n')

        report = patchsmith.verify(project, ["ghost"])

        assert not report.passed
        assert "not-started" == report.outcomes[0].runs[-1].failures[0].code

    def test_timeout_never_passes(self, project: Path) -> None:
        """A profile that runs out of time fails."""
        config = project / "patchsmith.toml"
        config.write_text(
            config.read_text() + '\n[verify.slow]\nargv = ["sleep", "5"]\ntimeout_seconds = 0.5\n'
        )

        report = patchsmith.verify(project, ["slow"])

        assert not report.passed
        assert report.outcomes[0].runs[-1].timed_out
