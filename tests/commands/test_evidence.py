"""Command-profile runs kept as evidence with the attempt, and shown by `patchsmith show`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from patchsmith import run_command
from patchsmith.cli import main
from patchsmith.model.evidence import Evidence, RunSide

RANDOM = "import os; open('out.txt', 'w').write(os.urandom(8).hex())"
STABLE = "open('out.txt', 'w').write('same\\n')"
FAILING = "import sys; print('boom: the manifest is broken'); sys.exit(3)"


def _profiles(root: Path) -> Path:
    """Three profiles: two runs that differ, two that agree, and one that fails."""
    python = json.dumps(sys.executable)
    (root / "patchsmith.toml").write_text(
        "[commands.random]\n"
        f'argv = [{python}, "-c", {json.dumps(RANDOM)}]\n'
        'expected_changed_paths = ["out.txt"]\n'
        "run_twice = true\n"
        "[commands.stable]\n"
        f'argv = [{python}, "-c", {json.dumps(STABLE)}]\n'
        'expected_changed_paths = ["out.txt"]\n'
        "run_twice = true\n"
        "[commands.failing]\n"
        f'argv = [{python}, "-c", {json.dumps(FAILING)}]\n'
    )
    (root / "a.txt").write_text("a\n")
    return root


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


class TestNondeterministicArtifact:
    def test_marked_in_the_report_the_record_and_show(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Two differing runs: the file is marked, the run is stored, `show` prints both."""
        root = _profiles(tmp_path)

        code, out = _run_cli(
            ["run-command", "random", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        data = json.loads(out)
        assert 0 == code, data["errors"]
        [written] = data["files"]
        assert {"path": "out.txt", "generated_by": "random", "nondeterministic": True} == {
            k: written[k] for k in ("path", "generated_by", "nondeterministic")
        }
        [run] = data["verification"]
        assert "command" == run["side"]
        assert ["out.txt"] == run["nondeterministic"]
        assert ["out.txt"] == run["changed_paths"]
        assert "stdout" not in run  # the report stays small; the store keeps the output

        code, shown = _run_cli(["show", data["attempt_id"], "-C", str(root)], capsys)

        assert 0 == code
        assert "commands\n  pass  random exit 0," in shown
        assert "changed: out.txt" in shown
        assert "nondeterministic  two runs differ in out.txt" in shown
        assert f"argv    {sys.executable} -c" in shown

        code, shown_json = _run_cli(["show", data["attempt_id"], "-C", str(root), "--json"], capsys)
        [stored] = json.loads(shown_json)["attempt"]["evidence"]
        assert ("command", ["out.txt"], 0) == (
            stored["side"],
            stored["nondeterministic"],
            stored["exit_code"],
        )
        assert len(stored["output_sha256"]) == 64

    def test_agreeing_runs_are_not_marked(self, tmp_path: Path) -> None:
        """Two runs with the same bytes: kept, nothing marked."""
        root = _profiles(tmp_path)

        report = run_command("stable", root, allow_unverified=True)

        assert report.ok, report.errors
        assert [False] == [f.nondeterministic for f in report.files]
        [run] = report.evidence
        assert (RunSide.COMMAND, (), ("out.txt",)) == (
            run.side,
            run.nondeterministic,
            run.changed_paths,
        )


class TestRefusedRunIsKept:
    def test_failing_command_is_recorded_with_its_output(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A command that fails refuses the proposal; its run is still evidence in the record."""
        root = _profiles(tmp_path)

        code, out = _run_cli(
            ["run-command", "failing", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        data = json.loads(out)
        assert 1 == code
        assert ["COMMAND_FAILED"] == [e["code"] for e in data["errors"]]
        assert not (root / "out.txt").exists()

        code, shown = _run_cli(["show", data["attempt_id"], "-C", str(root)], capsys)

        assert "  FAIL  failing exit 3" in shown
        assert "changed: nothing" in shown
        assert "COMMAND_FAILED  command failing" in shown
        code, shown_json = _run_cli(["show", data["attempt_id"], "-C", str(root), "--json"], capsys)
        [stored] = json.loads(shown_json)["attempt"]["evidence"]
        assert "boom: the manifest is broken" in stored["stdout"]
        assert not stored["passed"]

    def test_a_profile_that_never_started_leaves_no_run(self, tmp_path: Path) -> None:
        """A refused parameter means nothing ran: the refusal says so, no evidence is made up."""
        report = run_command(
            "ruff-format",
            _profiles(tmp_path),
            params={"paths": "--x"},
            record=False,
            allow_unverified=True,
        )

        assert ["COMMAND_NOT_ALLOWED"] == [e.code.value for e in report.errors]
        assert () == report.evidence


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_lock_run_is_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lockfile profile end to end through the CLI, then its evidence through `show`."""
    (tmp_path / "package.json").write_text('{"name": "tiny", "version": "1.0.0"}\n')

    code, out = _run_cli(
        ["run-command", "npm-lock", "-C", str(tmp_path), "--json", "--allow-unverified"], capsys
    )

    data = json.loads(out)
    assert 0 == code, data["errors"]
    code, shown = _run_cli(["show", data["attempt_id"], "-C", str(tmp_path)], capsys)
    assert "  pass  npm-lock exit 0" in shown
    assert "changed: package-lock.json" in shown
    assert "argv    npm install --package-lock-only" in shown


def test_command_evidence_round_trips() -> None:
    """The stored JSON of a command run reads back equal, its paths included."""
    run = Evidence(
        profile="gen",
        side=RunSide.COMMAND,
        argv=("gen",),
        exit_code=0,
        duration_s=0.5,
        passed=True,
        output_sha256="0" * 64,
        changed_paths=("a", "b"),
        nondeterministic=("b",),
    )

    assert run == Evidence.loads(run.dumps())
    profile_run = Evidence("pytest", RunSide.CHANGED, ("pytest",), 0, 0.1, True, "0" * 64)
    assert "changed_paths" not in profile_run.to_json()
