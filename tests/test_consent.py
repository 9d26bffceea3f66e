"""Nothing runs unasked: a repository's programs run only when asked for and trusted.

Each repository here carries programs that leave a marker file outside it when they run:
a committed `.venv/bin/python` (which the built-in pytest and mypy profiles pick) and a
configured profile. The marker proves whether anything ran; everything goes through the
CLI (or the MCP toolbox) as a user or an agent would.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.sandboxing import take_bwrap_away

from patchsmith.cli import main
from patchsmith.runtime import trust

RECIPE = """\
recipe_id: spell-answer
language: python
summary: write the answer as a sum
operations:
  - type: ast_grep_rule
    id: answer
    rule: {pattern: "return 42"}
    fix: "return 40 + 2"
postconditions:
  - compiles
"""


def _program(path: Path, marker: Path) -> None:
    """An executable that appends its arguments to `marker`, and succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\nexit 0\n')
    path.chmod(0o755)


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The marker lives outside the repository, where a sandboxed program cannot write
    (the sandbox's tests prove that): here runs fall back to process groups, so the
    marker shows whether a program ran at all."""
    take_bwrap_away(monkeypatch)


@pytest.fixture(name="marker")
def _marker(tmp_path: Path) -> Path:
    return tmp_path / "ran.txt"


@pytest.fixture(name="repo")
def _repo(tmp_path: Path, marker: Path) -> Path:
    """A Python package with mypy configured and a committed `.venv/bin/python`, in git."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "pkg"\n\n[tool.mypy]\n')
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "answer.py").write_text("def answer():\n    return 42\n")
    _program(repo / ".venv" / "bin" / "python", marker)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "init"], check=True)
    return repo


@pytest.fixture(name="recipe")
def _recipe(tmp_path: Path) -> Path:
    path = tmp_path / "spell.yaml"
    path.write_text(RECIPE)
    return path


@pytest.fixture(name="untrusted")
def _untrusted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No trusted-paths opt-in, and an empty trust store of this test's own."""
    monkeypatch.delenv(trust.TRUSTED_PATHS_ENV, raising=False)
    monkeypatch.setenv(trust.CONFIG_ENV, str(tmp_path / "config"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def codes(payload: dict[str, object]) -> list[str]:
    errors = payload.get("errors") or []
    assert isinstance(errors, list)
    return [e["code"] for e in errors]


# -- verify and trust -------------------------------------------------------------------------


@pytest.mark.usefixtures("untrusted")
class TestVerifyNeedsTrust:
    def test_untrusted_repository_runs_nothing(
        self, repo: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`verify` in an untrusted repository: UNTRUSTED_REPOSITORY, never passed."""
        code, out = cli(capsys, "verify", "mypy", "-C", str(repo), "--no-base")

        assert 2 == code
        assert ["UNTRUSTED_REPOSITORY"] == codes(out)
        assert "passed" != out["status"]
        assert f"patchsmith trust {repo.resolve()}" in str(out["errors"])
        assert not marker.exists()

    def test_trusted_repository_runs(
        self, repo: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """After `patchsmith trust PATH` the profile runs."""
        code, out = cli(capsys, "trust", str(repo))
        assert 0 == code and "trusted" == out["status"]

        main(["verify", "mypy", "-C", str(repo), "--no-base"])

        assert "-m mypy" in marker.read_text()

    def test_changed_configuration_needs_trust_again(
        self, repo: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A new interpreter under the repository after `trust`: untrusted again, said so."""
        assert 0 == main(["trust", str(repo)])
        _program(repo / ".venv" / "bin" / "python", marker.with_suffix(".other"))
        capsys.readouterr()

        code, out = cli(capsys, "verify", "mypy", "-C", str(repo), "--no-base")

        assert 2 == code and ["UNTRUSTED_REPOSITORY"] == codes(out)
        assert "changed since it was trusted" in str(out["errors"])
        assert not marker.exists() and not marker.with_suffix(".other").exists()
        assert 0 == main(["trust", str(repo)])
        main(["verify", "mypy", "-C", str(repo), "--no-base"])
        assert marker.with_suffix(".other").exists()

    def test_trust_flag_trusts_one_call(
        self, repo: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`--trust` runs the profile this once; the next call is untrusted again."""
        main(["verify", "mypy", "-C", str(repo), "--no-base", "--trust"])
        assert marker.exists()
        marker.unlink()
        capsys.readouterr()

        code, out = cli(capsys, "verify", "mypy", "-C", str(repo), "--no-base")

        assert 2 == code and ["UNTRUSTED_REPOSITORY"] == codes(out)
        assert not marker.exists()

    def test_list_and_revoke(self, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`trust --list` shows the repository and its state; `--revoke` forgets it."""
        code, out = cli(capsys, "trust", "--list")
        assert 0 == code and [] == out["repositories"]
        main(["trust", str(repo)])
        capsys.readouterr()

        code, out = cli(capsys, "trust", "--list")
        [row] = out["repositories"]  # type: ignore[misc]
        assert str(repo.resolve()) == row["path"] and "trusted" == row["state"]

        assert 0 == main(["trust", "--revoke", str(repo)])
        assert 1 == main(["trust", "--revoke", str(repo)])
        assert "was not trusted" in capsys.readouterr().out
        main(["trust", "--list"])
        assert "no trusted repositories" in capsys.readouterr().out

    def test_text_output_and_an_unwritable_store(
        self,
        repo: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """The text forms say what happened; a store that cannot be written is exit 2."""
        assert 0 == main(["trust", str(repo)])
        assert f"trusted {repo.resolve()}" in capsys.readouterr().out
        main(["trust", "--list"])
        assert f"{repo.resolve()}  trusted" in capsys.readouterr().out
        code, out = cli(capsys, "trust", "--revoke", str(repo))
        assert 0 == code and "revoked" == out["status"]

        blocker = tmp_path / "a-file"
        blocker.write_text("")
        monkeypatch.setenv(trust.CONFIG_ENV, str(blocker / "config"))
        assert 2 == main(["trust", str(repo)])
        assert "cannot write the trust store" in capsys.readouterr().err

    def test_trust_of_a_missing_folder_is_a_usage_error(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        code, out = cli(capsys, "trust", str(tmp_path / "nowhere"))
        assert 2 == code and ["FILE_NOT_FOUND"] == codes(out)


# -- dry runs never run anything unless --verify ----------------------------------------------


class TestDryRunsRunNothing:
    """The repository is trusted here (the suite's opt-in): only the request is missing."""

    def test_recipe_dry_run(
        self, repo: Path, recipe: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A recipe dry run leaves `compiles` not run (error, never passed)."""
        code, out = cli(capsys, "recipe", "run", str(recipe), "-C", str(repo))

        assert 0 == code and "dry_run" == out["status"]
        [check] = out["checks"]  # type: ignore[misc]
        assert "error" == check["status"]
        assert "not run" in check["evidence"]
        assert not marker.exists()

    def test_recipe_dry_run_with_verify(
        self, repo: Path, recipe: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`--verify` asks for the profiles on a dry run too."""
        cli(capsys, "recipe", "run", str(recipe), "-C", str(repo), "--verify")

        assert "-m mypy" in marker.read_text()

    def test_propose_check_with_unplanned_auto(
        self, repo: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`propose --check` of a proposal without a plan runs no profile; says so."""
        proposal = _proposal(repo)

        code, out = cli(capsys, "propose", str(proposal), "-C", str(repo), "--check")

        assert 0 == code and not marker.exists()
        assert not out.get("verification")
        assert any("not verified" in n for n in out["notes"])  # type: ignore[union-attr]

        cli(capsys, "propose", str(proposal), "-C", str(repo), "--check", "--verify")
        assert marker.exists()

    def test_mcp_run_recipe_dry_run(self, repo: Path, marker: Path) -> None:
        """The MCP `run_recipe` tool's dry run runs no profile either."""
        from patchsmith.mcp.toolbox import Toolbox

        box = Toolbox(repo, record=False)
        result = box.call("run_recipe", {"recipe_yaml": RECIPE})

        assert "dry_run" == result.content["status"]
        assert not marker.exists()
        box.call("run_recipe", {"recipe_yaml": RECIPE, "verify": True})
        assert marker.exists()

    def test_fleet_run_without_verify(
        self,
        repo: Path,
        recipe: Path,
        marker: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """`fleet run` without `--verify` runs no repository program: the postcondition
        that needs one refuses the change, and nothing ran."""
        listing = tmp_path / "repos.txt"
        listing.write_text(f"{repo}\n")

        code, out = cli(
            capsys,
            "fleet",
            "run",
            str(recipe),
            "--repos",
            str(listing),
            "--runs-dir",
            str(tmp_path / "runs"),
        )

        assert 1 == code
        [result] = out["results"]  # type: ignore[misc]
        assert "refused" == result["status"]
        assert "not run" in json.dumps(result["errors"])
        assert not marker.exists()


# -- asked, but not trusted -------------------------------------------------------------------


@pytest.mark.usefixtures("untrusted")
class TestAskedButUntrusted:
    def test_recipe_apply(
        self, repo: Path, recipe: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`recipe run --apply` in an untrusted repository: refused, nothing ran or changed."""
        code, out = cli(capsys, "recipe", "run", str(recipe), "-C", str(repo), "--apply")

        assert 1 == code and "UNTRUSTED_REPOSITORY" in codes(out)
        assert "return 42" in (repo / "pkg" / "answer.py").read_text()
        assert not marker.exists()

        code, out = cli(capsys, "recipe", "run", str(recipe), "-C", str(repo), "--apply", "--trust")
        assert marker.exists()

    def test_recipe_dry_run_with_verify(
        self, repo: Path, recipe: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        code, out = cli(capsys, "recipe", "run", str(recipe), "-C", str(repo), "--verify")

        assert 1 == code and "UNTRUSTED_REPOSITORY" in codes(out)
        assert not marker.exists()

    def test_propose_apply(
        self, repo: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A proposal whose plan would run profiles: refused, nothing ran or was written."""
        proposal = _proposal(repo, plan={"profiles": ["pytest"]})

        code, out = cli(capsys, "propose", str(proposal), "-C", str(repo))

        assert 1 == code and "UNTRUSTED_REPOSITORY" in codes(out)
        assert "return 42" in (repo / "pkg" / "answer.py").read_text()
        assert not marker.exists()

    def test_run_command(
        self, tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A configured command profile runs only in a trusted repository."""
        tool = tmp_path / "tool"
        _program(tool, marker)
        repo = tmp_path / "cmd"
        repo.mkdir()
        (repo / "patchsmith.toml").write_text(f'[commands.mark]\nargv = ["{tool}"]\n')
        (repo / "a.txt").write_text("a\n")

        code, out = cli(capsys, "run-command", "mark", "-C", str(repo), "--check")

        assert 1 == code and ["UNTRUSTED_REPOSITORY"] == codes(out)
        assert not marker.exists()
        cli(capsys, "run-command", "mark", "-C", str(repo), "--check", "--trust")
        assert marker.exists()

    def test_mcp_verify(self, repo: Path, marker: Path) -> None:
        """The MCP `verify` tool refuses in an untrusted repository; a trusted server runs."""
        from patchsmith.mcp.toolbox import Toolbox

        result = Toolbox(repo, record=False).call("verify", {"profiles": ["mypy"], "base": None})

        assert result.is_error and "UNTRUSTED_REPOSITORY" in result.text
        assert not marker.exists()
        Toolbox(repo, record=False, trust=True).call("verify", {"profiles": ["mypy"], "base": None})
        assert marker.exists()

    def test_fleet_run_with_verify(
        self,
        repo: Path,
        recipe: Path,
        marker: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """`fleet run --verify` of untrusted repositories runs nothing; trusting the source
        repository (same configuration in the checkout) lets them run."""
        listing = tmp_path / "repos.txt"
        listing.write_text(f"{repo}\n")
        args = ["fleet", "run", str(recipe), "--repos", str(listing), "--verify", "mypy"]

        code, out = cli(capsys, *args, "--runs-dir", str(tmp_path / "one"))

        assert 1 == code
        [result] = out["results"]  # type: ignore[misc]
        assert "error" == result["status"]  # nothing established: never passed
        assert "UNTRUSTED_REPOSITORY" in json.dumps(result["errors"])
        assert not marker.exists()
        assert 0 == main(["trust", str(repo)])
        capsys.readouterr()
        _, again = cli(capsys, *args, "--runs-dir", str(tmp_path / "one"), "--retry-errors")
        [result] = again["results"]  # type: ignore[misc]
        # the workers run in processes of their own, sandboxed, where the marker outside
        # the repository cannot be written: the evidence shows the program ran instead
        [profile] = result["verification"]["profiles"]
        assert "changed" == result["status"] and "passed" == profile["verdict"]
        assert {"base", "changed"} == {run["side"] for run in profile["runs"]}
        assert all(run["argv"][0] == ".venv/bin/python" for run in profile["runs"])
        assert all(run["exit_code"] == 0 for run in profile["runs"])


def _proposal(repo: Path, plan: dict[str, object] | None = None) -> Path:
    data: dict[str, object] = {
        "proposal_id": "p1",
        "run_id": "r1",
        "attempt_no": 1,
        "strategy": "DIRECT_FILE_EDIT",
        "objective": "spell the answer",
        "expected_files": ["pkg/answer.py"],
        "operations": [
            {
                "type": "patch",
                "format": "search_replace",
                "text": "pkg/answer.py\n<<<<<<< SEARCH\n    return 42\n=======\n"
                "    return 40 + 2\n>>>>>>> REPLACE\n",
            }
        ],
    }
    if plan is not None:
        data["verification_plan"] = plan
    path = repo.parent / "proposal.json"
    path.write_text(json.dumps(data))
    return path


def test_the_suite_trusts_its_own_temp_folders(tmp_path: Path) -> None:
    """The autouse opt-in (tests/conftest.py) covers pytest's temp folders, nothing else."""
    assert trust.trust_state(tmp_path).allowed
    assert str(tmp_path).startswith(os.environ[trust.TRUSTED_PATHS_ENV])
