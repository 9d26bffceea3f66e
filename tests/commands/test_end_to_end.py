"""Command-generated changes end to end, with the real tools: npm, ruff, and a stray profile."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from tests.workspace_snapshot import snapshot_tree

import patchsmith
from patchsmith import propose, run_command
from patchsmith.cli import main

PACKAGE_JSON = '{\n  "name": "tiny",\n  "version": "1.0.0",\n  "private": true\n}\n'
BUMP = (
    "--- a/package.json\n+++ b/package.json\n@@ -1,5 +1,5 @@\n {\n"
    '   "name": "tiny",\n-  "version": "1.0.0",\n+  "version": "1.1.0",\n'
    '   "private": true\n }\n'
)
needs_npm = pytest.mark.skipif(
    shutil.which("npm") is None, reason="npm is not installed; the npm-lock profile needs it"
)


def _proposal(*operations: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "proposal_id": "p-cmd",
        "run_id": "r-cmd",
        "attempt_no": 1,
        "strategy": "BUILD_TOOL_GENERATED",
        "objective": "regenerate",
        "operations": list(operations),
        **extra,
    }


@pytest.fixture(name="web")
def _web(tmp_path: Path) -> Path:
    """A tiny npm package without dependencies: the lockfile needs no network."""
    (tmp_path / "package.json").write_text(PACKAGE_JSON)
    return tmp_path


@needs_npm
class TestNpmLock:
    def test_lockfile_is_created_by_the_profile(self, web: Path) -> None:
        """npm-lock writes package-lock.json through the transaction, marked as generated."""
        report = propose(
            _proposal({"type": "command", "profile": "npm-lock"}),
            web,
            record=False,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        lock = json.loads((web / "package-lock.json").read_text())
        assert "1.0.0" == lock["packages"][""]["version"]
        assert ["package-lock.json"] == [f.path for f in report.files]
        assert any("npm-lock" in note and "exited 0" in note for note in report.notes)
        assert not (web / "node_modules").exists()

    def test_manifest_patch_and_lockfile_in_one_transaction(self, web: Path) -> None:
        """A patch bumps package.json; the command regenerates the lock from the staged manifest."""
        assert run_command("npm-lock", web, record=False, allow_unverified=True).ok
        operations = (
            {"type": "patch", "text": BUMP},
            {"type": "command", "profile": "npm-lock"},
        )

        report = propose(_proposal(*operations), web, record=False, allow_unverified=True)

        assert report.ok, report.errors
        lock = json.loads((web / "package-lock.json").read_text())
        assert "1.1.0" == lock["version"]
        assert {"package.json", "package-lock.json"} == {f.path for f in report.files}

    def test_hand_edit_of_the_lockfile_is_still_refused(self, web: Path) -> None:
        """The same lockfile change written by hand is LOCKFILE_CHANGED."""
        assert run_command("npm-lock", web, record=False, allow_unverified=True).ok
        lock = (web / "package-lock.json").read_text()
        op = {
            "type": "direct_write",
            "path": "package-lock.json",
            "content": lock.replace("1.0.0", "1.1.0"),
            "expected_sha256": __import__("hashlib").sha256(lock.encode()).hexdigest(),
        }

        # A hand edit is declared as one: BUILD_TOOL_GENERATED without a command would be
        # STRATEGY_MISMATCH before the lockfile guard is reached.
        report = propose(
            _proposal(op, proposal_id="hand", strategy="DIRECT_FILE_EDIT"),
            web,
            record=False,
            allow_unverified=True,
        )

        assert ["LOCKFILE_CHANGED"] == [e.code.value for e in report.errors]

    def test_check_mode_writes_nothing(self, web: Path) -> None:
        """With check, the command runs and the diff is shown, but nothing is written."""
        report = run_command("npm-lock", web, check=True, record=False, allow_unverified=True)

        assert report.ok
        assert "package-lock.json" in report.diff
        assert not (web / "package-lock.json").exists()


class TestRuffFormat:
    @pytest.fixture(name="ruff_on_path")
    def _ruff_on_path(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The venv's ruff (a dev dependency) on PATH, as in an activated environment."""
        bin_dir = str(Path(sys.executable).parent)
        monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed next to the interpreter")

    def test_formatter_as_a_generator_through_the_cli(
        self, tmp_path: Path, ruff_on_path: None, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """run-command ruff-format formats only the named path, run twice, deterministic."""
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "ugly.py").write_text("x=[1,2 ,3]\ndef f( a ):\n  return a\n")
        (tmp_path / "keep.py").write_text("y=1\n")

        code = main(
            [
                "run-command",
                "ruff-format",
                "-C",
                str(tmp_path),
                "--param",
                "paths=src",
                "--json",
                "--no-record",
                "--allow-unverified",
            ]
        )

        data = json.loads(capsys.readouterr().out)
        assert 0 == code, data["errors"]
        assert (
            "x = [1, 2, 3]\n\n\ndef f(a):\n    return a\n"
            == (tmp_path / "src" / "ugly.py").read_text()
        )
        assert "y=1\n" == (tmp_path / "keep.py").read_text()
        assert not any("nondeterministic" in note for note in data["notes"])

    def test_formatter_output_skips_the_review_guard(
        self, tmp_path: Path, ruff_on_path: None
    ) -> None:
        """Formatting churn is the command's job: a strict review policy lets it through."""
        (tmp_path / "a.py").write_text("import os\nx=[1,2 ,3]\n")
        (tmp_path / "patchsmith.toml").write_text(
            "[policy.review]\nmin_changed_lines = 0\nmax_formatting_hunks = 0\n"
        )

        report = run_command("ruff-format", tmp_path, record=False, allow_unverified=True)

        assert report.ok, report.errors
        assert "x = [1, 2, 3]\n" in (tmp_path / "a.py").read_text()


class TestStrayProfile:
    @pytest.fixture(name="stray")
    def _stray(self, tmp_path: Path) -> Path:
        escape = "open('../escape.txt', 'w').write('x'); open('out.txt', 'w').write('y')"
        (tmp_path / "patchsmith.toml").write_text(
            "[commands.stray]\n"
            f'argv = [{json.dumps(sys.executable)}, "-c", {json.dumps(escape)}]\n'
            'expected_changed_paths = ["out.txt"]\n'
        )
        (tmp_path / "a.txt").write_text("a\n")
        return tmp_path

    def test_writing_outside_is_refused_and_nothing_kept(
        self, stray: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A profile writing outside its paths is refused by propose and by the CLI."""
        before = snapshot_tree(stray)
        proposal = stray / "p.json"
        proposal.write_text(json.dumps(_proposal({"type": "command", "profile": "stray"})))
        before = snapshot_tree(stray)

        code = main(
            [
                "propose",
                str(proposal),
                "-C",
                str(stray),
                "--json",
                "--no-record",
                "--allow-unverified",
            ]
        )

        data = json.loads(capsys.readouterr().out)
        assert 1 == code
        assert ["COMMAND_OUT_OF_BOUNDS"] == [e["code"] for e in data["errors"]]
        assert "operations[0]" in data["errors"][0]["message"]
        assert before == snapshot_tree(stray)
        assert not (stray / "out.txt").exists()

    def test_unknown_profile_and_bad_parameters(self, stray: Path) -> None:
        """An unknown profile or parameter is COMMAND_NOT_ALLOWED, listing what exists."""
        unknown = run_command("rm-rf", stray, record=False, allow_unverified=True)
        bad = run_command(
            "ruff-format",
            stray,
            params={"paths": "--config=x"},
            record=False,
            allow_unverified=True,
        )

        assert ["COMMAND_NOT_ALLOWED"] == [e.code.value for e in unknown.errors]
        assert "npm-lock" in (unknown.errors[0].hint or "")
        assert ["COMMAND_NOT_ALLOWED"] == [e.code.value for e in bad.errors]


class TestCli:
    def test_list_profiles(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--list prints the built-ins and configured profiles; --json as one object."""
        (tmp_path / "patchsmith.toml").write_text('[commands.gen]\nargv = ["make", "gen"]\n')

        assert 0 == main(["run-command", "--list", "-C", str(tmp_path)])
        text = capsys.readouterr().out
        assert 0 == main(["run-command", "--list", "--json", "-C", str(tmp_path)])
        printed = json.loads(capsys.readouterr().out)
        listing = printed["profiles"]

        assert 1 == printed["schema_version"]
        assert "gen: make gen" in text
        assert "npm-lock: npm install --package-lock-only" in text
        assert ["make", "gen"] == listing["gen"]["argv"]

    @pytest.mark.parametrize(
        "argv",
        [["run-command"], ["run-command", "npm-lock", "--param", "novalue"]],
    )
    def test_usage_errors(self, tmp_path: Path, argv: list[str]) -> None:
        """No profile, or a --param without '=', is a usage error (exit 2)."""
        assert 2 == main([*argv, "-C", str(tmp_path)])

    def test_bad_configuration_is_a_usage_error_for_list(self, tmp_path: Path) -> None:
        """--list with an invalid profile table exits 2."""
        (tmp_path / "patchsmith.toml").write_text('[commands.x]\nargv = "make"\n')

        assert 2 == main(["run-command", "--list", "-C", str(tmp_path)])

    def test_exported(self) -> None:
        """run_command is part of the public API."""
        assert "run_command" in patchsmith.__all__


class TestStagingWithOtherOperations:
    def _profile(self, root: Path, code: str, expected: str) -> None:
        (root / "patchsmith.toml").write_text(
            "[commands.gen]\n"
            f'argv = [{json.dumps(sys.executable)}, "-c", {json.dumps(code)}]\n'
            f"expected_changed_paths = [{json.dumps(expected)}]\n"
        )

    def test_command_sees_a_staged_rename(self, tmp_path: Path) -> None:
        """A rename staged by a patch is what the command's copy shows."""
        (tmp_path / "old.txt").write_text("x\n")
        self._profile(
            tmp_path,
            "import os; assert os.path.exists('new.txt') and not os.path.exists('old.txt');"
            "open('out.txt', 'w').write('ok')",
            "out.txt",
        )
        rename = (
            "diff --git a/old.txt b/new.txt\nsimilarity index 100%\n"
            "rename from old.txt\nrename to new.txt\n"
        )

        report = propose(
            _proposal({"type": "patch", "text": rename}, {"type": "command", "profile": "gen"}),
            tmp_path,
            record=False,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        assert "ok" == (tmp_path / "out.txt").read_text()

    def test_command_recreating_a_deleted_file_conflicts(self, tmp_path: Path) -> None:
        """A command may not bring back a file the proposal deletes: CONFLICTING_EDITS."""
        (tmp_path / "a.txt").write_text("a\n")
        self._profile(tmp_path, "open('a.txt', 'w').write('again')", "a.txt")
        delete = {"type": "direct_write", "path": "a.txt", "content": None, "allow_delete": True}
        before = snapshot_tree(tmp_path)

        report = propose(
            _proposal(delete, {"type": "command", "profile": "gen"}),
            tmp_path,
            record=False,
            allow_unverified=True,
        )

        assert ["CONFLICTING_EDITS"] == [e.code.value for e in report.errors]
        assert before == snapshot_tree(tmp_path)

    def test_invalid_profile_table_refuses_the_proposal(self, tmp_path: Path) -> None:
        """A broken [commands] table is COMMAND_NOT_ALLOWED before anything runs."""
        (tmp_path / "patchsmith.toml").write_text('[commands.gen]\nargv = "make"\n')
        (tmp_path / "a.txt").write_text("a\n")

        report = propose(
            _proposal({"type": "command", "profile": "gen"}),
            tmp_path,
            record=False,
            allow_unverified=True,
        )

        assert ["COMMAND_NOT_ALLOWED"] == [e.code.value for e in report.errors]

    def test_no_command_operations_stage_nothing(self, tmp_path: Path) -> None:
        """stage_commands with no operations does nothing at all."""
        from patchsmith.commands import stage_commands
        from patchsmith.policy import Policy
        from patchsmith.runtime.transaction import Transaction
        from patchsmith.runtime.workspace import Workspace

        with Transaction(Workspace(tmp_path)) as tx:
            staged = stage_commands(tmp_path, tx, [], policy=Policy())

        assert ((), ()) == (staged.files, staged.failures)
