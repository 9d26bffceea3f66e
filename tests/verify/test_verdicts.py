"""Verdicts: every run and profile is passed, failed or error, and `error` is never a pass.

Through `patchsmith verify` on the real tools this machine has: a Python without pytest,
pytest exit 4 and 5, a conftest that does not import, tsc without node_modules, a
misspelled profile, a crashed base run, ruff/mypy/cargo exit codes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sandboxing import needs_bwrap, take_bwrap_away
from tests.verify.conftest import PY, git_commit_all
from tests.workspace_snapshot import make_tree

import patchsmith.cli
from patchsmith.model.evidence import Evidence, RunSide, ToolFailure, Verdict
from patchsmith.verify import verify
from patchsmith.verify.parsers import ParserInput, ParserName, exit_verdict_of
from patchsmith.verify.parsers.base import python_module
from patchsmith.verify.parsers.pytest_junit import collected_files
from patchsmith.verify.toolversion import tool_version, version_argv
from patchsmith.verify.workflow import outcome_verdict

PASSED, FAILED, ERROR = Verdict.PASSED, Verdict.FAILED, Verdict.ERROR
ONE = [ToolFailure(tool="t", message="m", file="a.py", line=1)]

PYTEST = f"""
[verify.pytest]
argv = [{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={{report}}"]
parser = "pytest"
timeout_seconds = 120
"""

CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = patchsmith.cli.main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def _profile(data: dict[str, object]) -> dict[str, object]:
    profiles = data["profiles"]
    assert isinstance(profiles, list)
    first = profiles[0]
    assert isinstance(first, dict)
    return first


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = make_tree(tmp_path / "repo", {k: v.encode() for k, v in files.items()})
    git_commit_all(root)
    return root


# -- the exit-code tables -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parser", "code", "failures", "expected"),
    [
        (ParserName.PYTEST, 0, [], PASSED),
        (ParserName.PYTEST, 1, ONE, FAILED),
        (ParserName.PYTEST, 1, [], ERROR),
        (ParserName.PYTEST, 2, ONE, ERROR),
        (ParserName.PYTEST, 3, [], ERROR),
        (ParserName.PYTEST, 4, [], ERROR),
        (ParserName.PYTEST, 5, [], ERROR),
        (ParserName.PYTEST, 9, [], ERROR),
        (ParserName.RUFF, 0, [], PASSED),
        (ParserName.RUFF, 1, ONE, FAILED),
        (ParserName.RUFF, 1, [], ERROR),
        (ParserName.RUFF, 2, [], ERROR),
        (ParserName.MYPY, 0, [], PASSED),
        (ParserName.MYPY, 1, ONE, FAILED),
        (ParserName.MYPY, 2, ONE, FAILED),
        (ParserName.MYPY, 2, [], ERROR),
        (ParserName.GO_TEST, 0, [], PASSED),
        (ParserName.GO_TEST, 1, ONE, FAILED),
        (ParserName.GO_TEST, 1, [], ERROR),
        (ParserName.GO_TEST, 2, [], ERROR),
        (ParserName.CARGO, 0, [], PASSED),
        (ParserName.CARGO, 101, ONE, FAILED),
        (ParserName.CARGO, 101, [], ERROR),
        (ParserName.CARGO, 1, [], ERROR),
        (ParserName.GENERIC, 0, [], PASSED),
        (ParserName.GENERIC, 2, ONE, FAILED),
        (ParserName.GENERIC, 1, [], FAILED),
        (ParserName.GENERIC, 127, [], ERROR),
        (ParserName.GENERIC, 126, [], ERROR),
        (ParserName.EXIT_CODE, 0, [], PASSED),
        (ParserName.EXIT_CODE, 1, [], FAILED),
        (ParserName.EXIT_CODE, 127, [], ERROR),
    ],
)
def test_exit_code_tables(
    parser: ParserName, code: int, failures: list[ToolFailure], expected: Verdict
) -> None:
    report = "<testsuites/>" if parser is ParserName.PYTEST else None
    data = ParserInput("", "", report, "/r", report_expected=parser is ParserName.PYTEST)

    verdict, reason = exit_verdict_of(parser, code, data, failures)

    assert expected is verdict, reason
    assert reason


@pytest.mark.parametrize(
    ("parser", "stderr"),
    [
        (ParserName.GENERIC, "npm error npx canceled due to missing packages and no YES option"),
        (ParserName.GENERIC, "Error: Cannot find module 'typescript'\nRequire stack:"),
        (ParserName.GENERIC, "sh: 1: tsc: not found"),
        (ParserName.GENERIC, 'npm error Missing script: "test"'),
        (ParserName.EXIT_CODE, "bash: make: command not found"),
        (ParserName.GO_TEST, "go: cannot find main module, but found .git/config"),
        (ParserName.CARGO, "error: could not find `Cargo.toml` in `/r` or any parent directory"),
        (ParserName.CARGO, "error: failed to get `serde` as a dependency of package `a`"),
    ],
)
def test_missing_tools_and_dependencies_are_errors(parser: ParserName, stderr: str) -> None:
    verdict, reason = exit_verdict_of(parser, 1, ParserInput("", stderr, None, "/r"), ONE)

    assert ERROR is verdict
    assert "not" in reason or "could not" in reason


def test_a_relative_import_tsc_cannot_resolve_is_a_failure_not_an_error() -> None:
    out = "src/a.ts(1,17): error TS2307: Cannot find module './nope' or its type declarations."
    failures = [ToolFailure(tool="generic", message="m", file="src/a.ts", line=1, code="TS2307")]

    verdict, _ = exit_verdict_of(ParserName.GENERIC, 2, ParserInput(out, "", None, "/r"), failures)

    assert FAILED is verdict


def test_python_module_of_an_argv() -> None:
    assert "pytest" == python_module(("python", "-I", "-m", "pytest", "-q"))
    assert python_module(("python", "script.py", "-m", "x")) is None
    assert python_module(("python",)) is None


def _run(side: RunSide, verdict: Verdict, *failures: ToolFailure) -> Evidence:
    return Evidence(
        profile="p",
        side=side,
        argv=("x",),
        exit_code=0 if verdict is PASSED else 1,
        duration_s=0.0,
        passed=verdict is PASSED,
        output_sha256="0",
        failures=failures,
        verdict=verdict,
        reason=f"{verdict.value} run",
    )


class TestOutcomeVerdict:
    """Base and changed runs to one verdict: an error on either side is never a pass."""

    def test_error_on_either_side(self) -> None:
        base_error = _run(RunSide.BASE, ERROR)
        changed = _run(RunSide.CHANGED, PASSED)

        assert ERROR is outcome_verdict(base_error, [changed], ())[0]
        assert (
            ERROR
            is outcome_verdict(_run(RunSide.BASE, PASSED), [_run(RunSide.CHANGED, ERROR)], ())[0]
        )

    def test_both_sides_failing_without_anything_parsed_is_an_error(self) -> None:
        bare = ToolFailure(tool="p", message="exited 1", code="exit-status")
        base = _run(RunSide.BASE, FAILED, bare)
        changed = _run(RunSide.CHANGED, FAILED, bare)

        verdict, reason = outcome_verdict(base, [changed], ())

        assert ERROR is verdict and "nothing parsable" in reason

    def test_parsed_preexisting_failures_pass_and_introduced_ones_fail(self) -> None:
        base = _run(RunSide.BASE, FAILED, *ONE)
        changed = _run(RunSide.CHANGED, FAILED, *ONE)

        assert PASSED is outcome_verdict(base, [changed], ())[0]
        assert FAILED is outcome_verdict(base, [changed], tuple(ONE))[0]
        assert FAILED is outcome_verdict(None, [changed], ())[0]
        assert FAILED is outcome_verdict(_run(RunSide.BASE, PASSED), [changed], ())[0]


class TestEvidenceRoundTrip:
    def test_verdict_version_and_collected_survive_json(self) -> None:
        run = Evidence(
            profile="pytest",
            side=RunSide.BASE,
            argv=("python", "-m", "pytest"),
            exit_code=5,
            duration_s=0.1,
            passed=False,
            output_sha256="0",
            verdict=ERROR,
            reason="pytest exit 5: no tests collected",
            tool_version="pytest 9.0.0",
            collected=("tests/test_a.py",),
        )

        back = Evidence.loads(run.dumps())

        assert back == run
        assert "error" == run.to_json()["verdict"] and not back.passed

    def test_a_row_stored_before_verdicts_still_loads(self) -> None:
        old = {
            "profile": "pytest",
            "side": "changed",
            "argv": ["pytest"],
            "exit_code": None,
            "duration_s": 1.0,
            "passed": False,
            "output_sha256": "0",
            "start_error": "pytest: No such file or directory",
        }
        passed = {**old, "passed": True, "start_error": None, "exit_code": 0}
        failed = {**old, "start_error": None, "exit_code": 1}

        assert ERROR is Evidence.loads(json.dumps(old)).verdict
        assert PASSED is Evidence.loads(json.dumps(passed)).verdict
        assert FAILED is Evidence.loads(json.dumps(failed)).verdict
        assert Evidence.loads(json.dumps(old)).tool_version is None

    def test_passed_always_follows_the_verdict(self) -> None:
        run = _run(RunSide.CHANGED, ERROR)

        assert not Evidence(**{**run.__dict__, "passed": True}).passed


class TestToolVersion:
    def test_known_tools_and_the_rest(self, tmp_path: Path) -> None:
        assert (sys.executable, "-m", "pytest", "--version") == version_argv(
            (sys.executable, "-m", "pytest", "-q"), tmp_path
        )
        assert version_argv(("./run-tests.sh",), tmp_path) is None
        assert version_argv((sys.executable, "script.py"), tmp_path) is None
        assert version_argv(("npx", "--no-install", "tsc", "--noEmit"), tmp_path)[-2:] == (  # type: ignore[index]
            "tsc",
            "-v",
        )
        assert version_argv(("go", "test"), tmp_path)[-1] == "version"  # type: ignore[index]
        assert version_argv((), tmp_path) is None

    def test_asked_once_and_kept(self, tmp_path: Path) -> None:
        first = tool_version((sys.executable, "-m", "pytest"), tmp_path)

        assert first is not None and first.startswith("pytest ")
        assert first == tool_version((sys.executable, "-m", "pytest", "-x"), tmp_path)
        assert tool_version(("./script.sh",), tmp_path) is None


# -- through the CLI, on real tools ---------------------------------------------------------------


class TestPytestThatCannotRun:
    @needs_bwrap
    def test_a_program_the_sandbox_cannot_see_did_not_start(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A program under the host's /tmp is hidden by the sandbox's private /tmp: bwrap
        cannot start it, which is `could not start` (error), never a test failure."""
        program = tmp_path / "tool.sh"
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
        profile = f'[verify.check]\nargv = [{json.dumps(str(program))}]\nkind = "test"\n'
        root = _repo(tmp_path, {"calc.py": CALC, "patchsmith.toml": profile})

        code, data = _cli(capsys, "verify", "check", "-C", str(root), "--json")

        assert 3 == code and "error" == data["status"]
        assert "could not start: bwrap" in str(_profile(data)["reason"])

    def test_a_python_without_pytest(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The repository's interpreter lacks pytest: `error`, exit 3, never "passed".

        Unsandboxed: the bare venv lives under the test's /tmp, which the sandbox's own
        private /tmp hides (a program it cannot see is `could not start`, also an error).
        """
        take_bwrap_away(monkeypatch)
        venv = tmp_path / "bare"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
        )
        bare = json.dumps(str(venv / "bin" / "python"))
        profile = f"""
[verify.pytest]
argv = [{bare}, "-I", "-m", "pytest", "-q", "--junitxml={{report}}"]
parser = "pytest"
kind = "test"
"""
        root = _repo(tmp_path, {"calc.py": CALC, "test_calc.py": TESTS, "patchsmith.toml": profile})
        (root / "calc.py").write_text(CALC.replace("a + b", "a - b"))

        code, data = _cli(capsys, "verify", "pytest", "-C", str(root), "--json")

        assert 3 == code
        assert "error" == data["status"]
        outcome = _profile(data)
        assert "error" == outcome["verdict"] and not outcome["passed"]
        assert "No module named pytest" in str(outcome["reason"])
        assert 0 == outcome["fixed_total"]

    def test_a_module_that_does_not_exist(self, tmp_path: Path) -> None:
        profile = f'[verify.t]\nargv = [{PY}, "-m", "no_such_module_at_all"]\nkind = "test"\n'
        root = _repo(tmp_path, {"patchsmith.toml": profile, "a.py": "x = 1\n"})

        report = verify(root, ["t"])

        assert ERROR is report.status and not report.passed
        assert "No module named no_such_module_at_all" in report.outcomes[0].reason

    @pytest.mark.parametrize(
        ("pyproject", "exit_code"),
        [
            ('[tool.pytest.ini_options]\naddopts = "--no-such-option"\n', 4),
            ('[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n', 5),
        ],
    )
    def test_usage_error_and_no_tests(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        pyproject: str,
        exit_code: int,
    ) -> None:
        files = {"calc.py": CALC, "test_calc.py": TESTS, "pyproject.toml": pyproject}
        root = _repo(tmp_path, {**files, "patchsmith.toml": PYTEST})
        (root / "calc.py").write_text(CALC.replace("a + b", "a - b"))  # would fail a real run

        code, data = _cli(capsys, "verify", "pytest", "-C", str(root), "--json", "--output")

        assert 3 == code and "error" == data["status"]
        outcome = _profile(data)
        assert f"exit {exit_code}" in str(outcome["reason"])
        runs = outcome["runs"]
        assert isinstance(runs, list)
        assert {r["verdict"] for r in runs} == {"error"}
        assert all(r["exit_code"] == exit_code for r in runs)
        assert all(str(r["tool_version"]).startswith("pytest ") for r in runs)

    def test_a_conftest_that_does_not_import_on_both_sides(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        conftest = "import no_such_plugin_module\n"
        files = {"calc.py": CALC, "test_calc.py": TESTS, "conftest.py": conftest}
        root = _repo(tmp_path, {**files, "patchsmith.toml": PYTEST})
        (root / "calc.py").write_text(CALC.replace("a + b", "a - b"))

        code, data = _cli(capsys, "verify", "pytest", "-C", str(root), "--json")

        assert 3 == code and "error" == data["status"]
        assert "exit 4" in str(_profile(data)["reason"])

    def test_text_summary_says_it_could_not_establish(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        pyproject = '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'
        files = {"calc.py": CALC, "test_calc.py": TESTS, "pyproject.toml": pyproject}
        root = _repo(tmp_path, {**files, "patchsmith.toml": PYTEST})

        code = patchsmith.cli.main(["verify", "pytest", "-C", str(root)])

        out = capsys.readouterr().out
        assert 3 == code
        assert "pytest (test): ERROR" in out and "could not establish" in out


class TestOtherToolsThatCannotRun:
    def test_tsc_without_node_modules(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The built-in tsc profile in a project without node_modules: `error`, not exit 0."""
        if shutil.which("npx") is None:
            pytest.skip("npx is needed for the built-in tsc profile")
        files = {"tsconfig.json": "{}\n", "a.ts": "export const x: number = 1;\n"}
        root = _repo(tmp_path, files)
        (root / "a.ts").write_text('export const x: number = "not a number";\n')

        code, data = _cli(capsys, "verify", "tsc", "-C", str(root), "--json")

        assert 3 == code, data
        assert "error" == data["status"]
        assert "error" == _profile(data)["verdict"]

    def test_a_node_tool_that_cannot_find_its_module(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """What `node_modules/.bin/tsc` prints when typescript is not installed."""
        if shutil.which("node") is None:
            pytest.skip("node is needed")
        profile = (
            '[verify.tsc]\nargv = ["node", "-e", "require(\'typescript\')"]\n'
            'parser = "generic"\nkind = "typecheck"\n'
        )
        root = _repo(tmp_path, {"patchsmith.toml": profile, "a.ts": "export {};\n"})

        code, data = _cli(capsys, "verify", "tsc", "-C", str(root), "--json")

        assert 3 == code
        assert "typescript" in str(_profile(data)["reason"])

    def test_a_misspelled_profile(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        root = _repo(tmp_path, {"patchsmith.toml": PYTEST, "a.py": "x = 1\n"})

        code, data = _cli(capsys, "verify", "pytset", "-C", str(root), "--json")

        assert 2 == code
        assert "error" == data["status"]
        assert verify(root, ["pytset"]).status is ERROR

    def test_ruff_with_a_bad_option_is_an_error(self, tmp_path: Path) -> None:
        ruff = json.dumps(str(Path(sys.executable).parent / "ruff"))
        profile = (
            f'[verify.ruff]\nargv = [{ruff}, "check", "--output-format", "json", '
            '"--no-such-flag", "."]\nparser = "ruff"\nkind = "lint"\n'
        )
        root = _repo(tmp_path, {"patchsmith.toml": profile, "a.py": "x = 1\n"})

        report = verify(root, ["ruff"])

        assert ERROR is report.status
        assert "ruff exit 2" in report.outcomes[0].reason
        assert str(report.evidence[0].tool_version).startswith("ruff ")

    def test_mypy_finds_a_real_error(self, tmp_path: Path) -> None:
        profile = (
            f'[verify.mypy]\nargv = [{PY}, "-m", "mypy", "--output", "json", "a.py"]\n'
            'parser = "mypy"\nkind = "typecheck"\n'
        )
        root = _repo(tmp_path, {"patchsmith.toml": profile, "a.py": "x: int = 1\n"})
        (root / "a.py").write_text('x: int = "s"\n')

        report = verify(root, ["mypy"])

        assert FAILED is report.status
        assert [PASSED, FAILED] == [r.verdict for r in report.evidence]
        assert str(report.evidence[0].tool_version).startswith("mypy ")

    def test_cargo_without_a_manifest_is_an_error(self, tmp_path: Path) -> None:
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        profile = (
            '[verify.cargo]\nargv = ["cargo", "check", "--message-format=json", "--offline"]\n'
            'parser = "cargo"\nkind = "build"\nenv = ["CARGO_*", "RUSTUP_*"]\n'
        )
        root = _repo(tmp_path, {"patchsmith.toml": profile, "a.rs": "fn main() {}\n"})

        report = verify(root, ["cargo"])

        assert ERROR is report.status
        assert "Cargo.toml" in report.outcomes[0].reason


class TestCrashesAndGreens:
    def test_a_crashed_base_run_is_an_error_and_fixes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        crash = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
        profile = f'[verify.check]\nargv = [{PY}, "check.py"]\nkind = "test"\n'
        root = _repo(tmp_path, {"patchsmith.toml": profile, "check.py": crash})
        (root / "check.py").write_text("print('fine')\n")

        code, data = _cli(capsys, "verify", "check", "-C", str(root), "--json")

        assert 3 == code and "error" == data["status"]
        outcome = _profile(data)
        assert "base run: crashed" in str(outcome["reason"])
        assert 0 == outcome["fixed_total"]

    def test_a_real_green_change_passes(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = _repo(tmp_path, {"calc.py": CALC, "test_calc.py": TESTS, "patchsmith.toml": PYTEST})
        (root / "calc.py").write_text(CALC.replace("return a + b", "return b + a"))

        code, data = _cli(capsys, "verify", "pytest", "-C", str(root), "--json")

        assert 0 == code and "passed" == data["status"]
        assert "passed" == _profile(data)["verdict"]

    def test_targeted_tests_only_from_what_the_base_collected(self, tmp_path: Path) -> None:
        """A perf test importing the changed module, outside `testpaths`, is not run."""
        pyproject = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        slow = "from calc import add\n\n\ndef test_slow():\n    assert add(1, 1) == 3\n"
        profile = PYTEST + "targeted = true\n"
        files = {
            "calc.py": CALC,
            "tests/test_calc.py": TESTS,
            "perf/test_slow.py": slow,
            "pyproject.toml": pyproject,
            "conftest.py": "",
            "patchsmith.toml": profile,
        }
        root = _repo(tmp_path, files)
        (root / "calc.py").write_text(CALC + "\n\nVERSION = 2\n")

        report = verify(root, ["pytest"])

        assert PASSED is report.status, report.summary()
        base, targeted = report.evidence
        assert ("tests/test_calc.py",) == base.collected
        assert RunSide.TARGETED is targeted.side
        assert targeted.argv[-1] == "tests/test_calc.py"
        assert report.outcomes[0].targeted_only


@settings(max_examples=200, deadline=None)
@given(
    parser=st.sampled_from(list(ParserName)),
    code=st.integers(min_value=-64, max_value=300),
    stdout=st.text(max_size=200),
    stderr=st.text(max_size=200),
    parsed=st.booleans(),
)
def test_no_nonzero_exit_is_ever_a_pass(
    parser: ParserName, code: int, stdout: str, stderr: str, parsed: bool
) -> None:
    """Whatever a tool prints, a code other than 0 is never `passed` (and nothing raises)."""
    data = ParserInput(stdout, stderr, None, "/r", report_expected=parser is ParserName.PYTEST)

    verdict, reason = exit_verdict_of(parser, code, data, ONE if parsed else [])

    assert reason
    if code != 0:
        assert verdict is not PASSED


def test_collected_files_from_an_xunit1_report(tmp_path: Path) -> None:
    """`junit_family=xunit1` names the file; xunit2 only the dotted class name."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_b.py").write_text("")
    report = (
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="t" file="tests/test_a.py"/>'
        '<testcase classname="tests.test_b.TestB" name="t"/>'
        '<testcase classname="nowhere.at_all" name="t"/>'
        "</testsuite></testsuites>"
    )

    found = collected_files(ParserInput("", "", report, str(tmp_path)))

    assert ("tests/test_a.py", "tests/test_b.py") == found
    assert () == collected_files(ParserInput("", "", "not xml", str(tmp_path)))


def test_a_timeout_is_an_error(tmp_path: Path) -> None:
    profile = (
        f'[verify.slow]\nargv = [{PY}, "-c", "import time; time.sleep(30)"]\n'
        'kind = "test"\ntimeout_seconds = 1\n'
    )
    root = _repo(tmp_path, {"patchsmith.toml": profile, "a.py": "x = 1\n"})

    report = verify(root, ["slow"], base=None)

    assert ERROR is report.status
    assert "timed out after 1 s" in report.outcomes[0].reason


def test_pytest_that_writes_no_report_is_an_error(tmp_path: Path) -> None:
    """The profile asks for `{report}` but the run writes none: no result, even on exit 0."""
    profile = (
        f'[verify.pytest]\nargv = [{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider", '
        '"--junit-prefix={report}"]\nparser = "pytest"\n'
    )
    root = _repo(tmp_path, {"calc.py": CALC, "test_calc.py": TESTS, "patchsmith.toml": profile})

    report = verify(root, ["pytest"], base=None)

    assert ERROR is report.status
    assert "no JUnit report" in report.outcomes[0].reason
    assert 0 == report.evidence[0].exit_code


def test_cargo_exit_101_with_a_real_compile_error_is_a_failure(tmp_path: Path) -> None:
    """cargo's own failure code with a parsed diagnostic is `failed`, and its version is kept."""
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    profile = (
        '[verify.cargo]\nargv = ["cargo", "check", "--message-format=json", "--offline"]\n'
        'parser = "cargo"\nkind = "build"\nenv = ["CARGO_*", "RUSTUP_*"]\n'
        "timeout_seconds = 300\n"
    )
    manifest = '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n'
    files = {
        "patchsmith.toml": profile,
        "Cargo.toml": manifest,
        "src/lib.rs": "pub fn one() -> i32 { 1 }\n",
        ".gitignore": "target/\n",
    }
    root = _repo(tmp_path, files)
    (root / "src" / "lib.rs").write_text('pub fn one() -> i32 { "one" }\n')

    report = verify(root, ["cargo"])

    assert FAILED is report.status, report.summary()
    base, changed = report.evidence
    assert (PASSED, FAILED) == (base.verdict, changed.verdict)
    assert 101 == changed.exit_code and "cargo exit 101" in changed.reason
    assert str(changed.tool_version).startswith("cargo ")
    assert [f.code for f in report.outcomes[0].introduced] == ["E0308"]


def test_a_test_the_targeted_run_left_out_is_not_fixed(tmp_path: Path) -> None:
    """The base fails in a file the change does not reach; only the targeted file runs."""
    profile = PYTEST + "targeted = true\n"
    failing = "def test_other():\n    assert False\n"
    files = {
        "calc.py": CALC,
        "tests/test_calc.py": TESTS,
        "tests/test_other.py": failing,
        "conftest.py": "",
        "patchsmith.toml": profile,
    }
    root = _repo(tmp_path, files)
    (root / "calc.py").write_text(CALC + "\n\nVERSION = 2\n")

    report = verify(root, ["pytest"])

    outcome = report.outcomes[0]
    assert PASSED is outcome.verdict and outcome.targeted_only
    assert () == outcome.fixed
    assert ["tests.test_other::test_other"] == [f.test_id for f in report.evidence[0].failures]
