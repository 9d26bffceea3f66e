"""`patchsmith judge`, `freeze` and `revert`, end to end through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.workspace_snapshot import snapshot_tree

import patchsmith.cli

from .gitrepo import checkout_state, git, make_repo

CliRun = Callable[..., tuple[int, str, str]]
_RUN_CLI = [sys.executable, "-c", "import sys; from patchsmith.cli import main; sys.exit(main())"]

APP = b"def mean(xs):\n    return sum(xs) / len(xs)\n"
PATCH = (
    "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,4 @@\n def mean(xs):\n"
    "+    if not xs:\n+        return 0.0\n     return sum(xs) / len(xs)\n"
)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> CliRun:
    def run(*argv: str) -> tuple[int, str, str]:
        code = patchsmith.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": APP})


def applied(cli: CliRun, repo: Path, tmp_path: Path) -> str:
    reply = tmp_path / "reply.diff"
    reply.write_text(PATCH)
    code, out, _ = cli("apply", str(reply), "-C", str(repo), "--json")
    assert 0 == code, out
    attempt_id = json.loads(out)["attempt_id"]
    assert isinstance(attempt_id, str)
    return attempt_id


class TestJudgeCli:
    def test_text(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        attempt = applied(cli, repo, tmp_path)

        code, out, err = cli("judge", attempt, "-C", str(repo))

        assert 0 == code
        assert f"attempt {attempt}: PASS" in out
        assert "verification" in out and "n/a" in out
        assert "recorded as judgement 1" in err

    def test_json_run(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)

        code, out, _ = cli("judge", "adhoc", "-C", str(repo), "--json", "--run", "--no-record")

        data = json.loads(out)
        assert 0 == code
        assert ("run", "pass", None) == (data["kind"], data["verdict"], data["number"])
        assert {"outcome", "guards", "drift"} <= {c["name"] for c in data["criteria"]}

    def test_a_failing_verdict_exits_1(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        reply = tmp_path / "bad.diff"
        reply.write_text(PATCH.replace("def mean", "def median"))
        code, out, _ = cli("apply", str(reply), "-C", str(repo), "--json")
        assert 1 == code

        code, out, _ = cli("judge", json.loads(out)["attempt_id"], "-C", str(repo), "--json")

        assert 1 == code
        assert "fail" == json.loads(out)["verdict"]

    def test_unknown_subject_exits_2(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)

        code, out, _ = cli("judge", "nope", "-C", str(repo), "--json")

        assert 2 == code
        assert "RECORD_NOT_FOUND" == json.loads(out)["errors"][0]["code"]

    def test_bad_root(self, cli: CliRun, tmp_path: Path) -> None:
        code, _, err = cli("judge", "x", "-C", str(tmp_path / "missing"))

        assert 2 == code
        assert "FILE_NOT_FOUND" in err


class TestFreezeCli:
    def test_json_with_out_and_branch(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)
        before = checkout_state(repo)
        out_file = tmp_path / "candidate.diff"

        code, out, _ = cli(
            "freeze", "adhoc", "-C", str(repo), "--out", str(out_file), "--branch", "cand", "--json"
        )

        data = json.loads(out)
        assert 0 == code
        assert ("cand", ["app.py"]) == (data["branch"], data["files"])
        assert out_file.read_text() == data["diff"]
        assert before == checkout_state(repo)
        assert data["commit"] == git(repo, "rev-parse", "cand").strip()

    def test_text_prints_the_diff(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)

        code, out, err = cli("freeze", "adhoc", "-C", str(repo), "--no-commit")

        assert 0 == code
        assert out.startswith("diff --git a/app.py b/app.py")
        assert "1 file(s) from 1 attempt(s)" in err
        assert "branch" not in err

    def test_text_with_out_and_branch(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)

        code, out, err = cli("freeze", "adhoc", "-C", str(repo), "--out", str(tmp_path / "d"))

        assert 0 == code
        assert "" == out
        assert "wrote" in err and "branch patchsmith/adhoc at" in err

    def test_drift_is_refused(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)
        (repo / "app.py").write_bytes(b"changed\n")

        code, out, _ = cli("freeze", "adhoc", "-C", str(repo), "--json")

        assert 1 == code
        (error,) = json.loads(out)["errors"]
        assert ("STALE_FILE", "app.py") == (error["code"], error["file"])

    def test_unknown_run_exits_2(self, cli: CliRun, repo: Path) -> None:
        code, _, err = cli("freeze", "r9", "-C", str(repo))

        assert 2 == code
        assert "RECORD_NOT_FOUND" in err

    def test_bad_root(self, cli: CliRun, tmp_path: Path) -> None:
        assert 2 == cli("freeze", "r", "-C", str(tmp_path / "missing"))[0]


class TestRevertCli:
    def test_revert_then_again(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        before = snapshot_tree(repo)
        attempt = applied(cli, repo, tmp_path)

        code, out, err = cli("revert", attempt, "-C", str(repo))
        assert 0 == code
        assert "reverted: 1 file(s)" in out
        assert "recorded as" in err
        assert before == snapshot_tree(repo)

        code, out, _ = cli("revert", attempt, "-C", str(repo), "--json")
        assert 0 == code
        data = json.loads(out)
        assert "already_applied" == data["status"]
        assert any("already reverted" in n for n in data["notes"])

        code, out, _ = cli("revert", attempt, "-C", str(repo))
        assert "already reverted: nothing to do" in out

    def test_check(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        attempt = applied(cli, repo, tmp_path)
        before = snapshot_tree(repo)

        code, out, _ = cli("revert", attempt, "-C", str(repo), "--check", "--no-record")

        assert 0 == code
        assert "would revert: 1 file(s)" in out
        assert "-    if not xs:" in out
        assert before == snapshot_tree(repo)

    def test_drift_refused_with_the_diff(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        attempt = applied(cli, repo, tmp_path)
        (repo / "app.py").write_bytes((repo / "app.py").read_bytes().replace(b"0.0", b"None"))
        before = snapshot_tree(repo)

        code, _, err = cli("revert", attempt, "-C", str(repo))

        assert 1 == code
        assert "STALE_FILE" in err
        assert "+        return None" in err
        assert before == snapshot_tree(repo)

    def test_unknown_id_exits_2(self, cli: CliRun, repo: Path, tmp_path: Path) -> None:
        applied(cli, repo, tmp_path)

        code, out, _ = cli("revert", "a-ZZZZ", "-C", str(repo), "--json")

        assert 2 == code
        assert "RECORD_NOT_FOUND" == json.loads(out)["errors"][0]["code"]

    def test_bad_root(self, cli: CliRun, tmp_path: Path) -> None:
        assert 2 == cli("revert", "a-1", "-C", str(tmp_path / "missing"))[0]


def test_as_a_subprocess(repo: Path, tmp_path: Path) -> None:
    """The installed entry point: apply, judge, freeze and revert, one after another."""
    reply = tmp_path / "reply.diff"
    reply.write_text(PATCH)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*_RUN_CLI, *argv, "-C", str(repo)],
            capture_output=True,
            text=True,
            check=False,
        )

    attempt = json.loads(run("apply", str(reply), "--json").stdout)["attempt_id"]
    assert 0 == run("judge", attempt).returncode
    assert 0 == run("freeze", "adhoc", "--out", str(tmp_path / "c.diff")).returncode
    assert 0 == run("revert", attempt).returncode
    assert APP == (repo / "app.py").read_bytes()


UTIL = b"def half(x):\n    return x / 2\n"
UTIL_PATCH = (
    "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def half(x):\n"
    "-    return x / 2\n+    return x / 2.0\n"
)


class TestJudgeRunHistory:
    """A run of two milestones, a refused dry run and a revert, judged through the CLI."""

    @pytest.fixture
    def two(self, tmp_path: Path) -> Path:
        return make_repo(tmp_path / "repo", {"app.py": APP, "util.py": UTIL})

    @staticmethod
    def propose(cli: CliRun, repo: Path, tmp_path: Path, number: int, **fields: object) -> dict:
        proposal = {
            "proposal_id": f"m{number}",
            "run_id": "two-steps",
            "attempt_no": number,
            "strategy": "UNIFIED_DIFF",
            "objective": "Make mean and half total",
            **fields,
        }
        path = tmp_path / f"m{number}.json"
        path.write_text(json.dumps(proposal))
        check = ("--check",) if fields.pop("check", False) else ()
        path.write_text(json.dumps({k: v for k, v in proposal.items() if k != "check"}))
        _, out, _ = cli("propose", str(path), "-C", str(repo), "--json", *check)
        data = json.loads(out)
        assert isinstance(data, dict)
        return data

    def milestones(self, cli: CliRun, repo: Path, tmp_path: Path) -> list[str]:
        ids = []
        for number, (path, patch) in enumerate((("app.py", PATCH), ("util.py", UTIL_PATCH)), 1):
            data = self.propose(
                cli,
                repo,
                tmp_path,
                number,
                expected_files=[path],
                operations=[{"type": "patch", "format": "udiff", "text": patch}],
            )
            assert "applied" == data["status"], data
            ids.append(str(data["attempt_id"]))
        return ids

    def judged(self, cli: CliRun, repo: Path) -> tuple[int, dict]:
        code, out, _ = cli("judge", "two-steps", "-C", str(repo), "--run", "--json")
        data = json.loads(out)
        return code, {**data, "criteria": {c["name"]: c for c in data["criteria"]}}

    def test_a_refused_dry_run_is_not_the_last_attempt(
        self, cli: CliRun, two: Path, tmp_path: Path
    ) -> None:
        self.milestones(cli, two, tmp_path)
        broken = PATCH.replace("def mean", "def median")
        refused = self.propose(
            cli,
            two,
            tmp_path,
            3,
            expected_files=["app.py"],
            operations=[{"type": "patch", "format": "udiff", "text": broken}],
            check=True,
        )
        assert "refused" == refused["status"]

        code, data = self.judged(cli, two)

        assert 0 == code and "pass" == data["verdict"], data
        outcome = data["criteria"]["outcome"]
        assert 1.0 == outcome["score"] and "the last was applied" in outcome["reason"]
        assert ["1 dry run(s) recorded as checks, not judged as attempts"] == data["notes"]
        assert 2 == len(data["attempts"])
        code, out, _ = cli("log", "-C", str(two), "--json")
        attempts = json.loads(out)["attempts"]
        assert [True] == [a["dry_run"] for a in attempts if a["status"] == "refused"]

    def test_scope_is_judged_per_milestone(self, cli: CliRun, two: Path, tmp_path: Path) -> None:
        self.milestones(cli, two, tmp_path)

        _, data = self.judged(cli, two)

        scope = data["criteria"]["scope"]
        assert 1.0 == scope["score"]
        assert "all 2 changed files are among their attempt's expected_files" in scope["reason"]

    def test_after_a_revert(self, cli: CliRun, two: Path, tmp_path: Path) -> None:
        _, second = self.milestones(cli, two, tmp_path)
        code, _, _ = cli("revert", second, "-C", str(two))
        assert 0 == code

        code, data = self.judged(cli, two)

        assert 0 == code and "pass" == data["verdict"], data
        scope = data["criteria"]["scope"]
        assert 1.0 == scope["score"]
        assert "1 reverted attempt(s) not counted" in scope["reason"]
        guards = data["criteria"]["guards"]["reason"]
        assert "disabled by the policy" not in guards
        assert "reverted by a-" in guards and "content guards are off for a revert" in guards
