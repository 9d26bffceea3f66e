"""One repository's unit of work, in this process and in a worker child."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from tests.sandboxing import processes_tagged

from patchsmith.errors import FailureCode
from patchsmith.fleet import ChangeKind, ChangeSpec, FleetStatus, RepoSpec, WorkUnit, run_unit
from patchsmith.fleet import worker as worker_module
from patchsmith.fleet.change import resolve_change
from patchsmith.fleet.result import RepoResult
from patchsmith.fleet.unit import WorkerProcess, run_batch

from .sample import make_repo

SYNTAX_BREAKER = """\
recipe_id: break-add
language: python
summary: Turn add(a, b) into broken syntax
operations:
  - type: ast_grep_rule
    id: break
    rule: {pattern: "add($A, $B)"}
    fix: "add($A $B"
idempotency:
  rerun_produces_no_diff: false
postconditions:
  - parses
"""


def recipe(name: str = "unittest-to-assert") -> ChangeSpec:
    spec = resolve_change(name)
    assert isinstance(spec, ChangeSpec)
    return spec


def unit(repo: Path | str, change: ChangeSpec, tmp_path: Path, **more: object) -> WorkUnit:
    key = str(repo)
    return WorkUnit(RepoSpec(key, key, None), change, str(tmp_path / "work"), **more)  # type: ignore[arg-type]


def with_profile(root: Path, profile: str) -> None:
    """Add a verification profile to the repository and commit it."""
    (root / "patchsmith.toml").write_text(profile)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "profile"],
        cwd=root,
        check=True,
    )


def test_changed(python_repo: Path, tmp_path: Path) -> None:
    result = run_unit(unit(python_repo, recipe(), tmp_path))

    assert result.status is FleetStatus.CHANGED
    assert result.files == ("tests/test_core.py",)
    assert "+        assert add(0, 1) == 1" in result.diff
    assert result.commit is not None and len(result.commit) == 40
    assert result.report["status"] == "applied"
    assert list((tmp_path / "work").iterdir()) == []  # the checkout is gone
    # the source repository is untouched: only a checkout changed
    assert "self.assertEqual" in (python_repo / "tests" / "test_core.py").read_text()


def test_keep_checkout(python_repo: Path, tmp_path: Path) -> None:
    run_unit(unit(python_repo, recipe(), tmp_path, keep_checkout=True))

    (kept,) = (tmp_path / "work").iterdir()
    assert "assert add(0, 1) == 1" in (kept / "checkout" / "tests" / "test_core.py").read_text()


def test_no_op(tmp_path: Path) -> None:
    js = make_repo(tmp_path / "js", 4)

    result = run_unit(unit(js, recipe(), tmp_path))

    assert result.status is FleetStatus.NO_OP
    assert result.diff == "" and result.errors == ()


def test_refused_by_the_repositorys_policy(tmp_path: Path) -> None:
    capped = make_repo(tmp_path / "capped", 6)

    result = run_unit(unit(capped, recipe(), tmp_path))

    assert result.status is FleetStatus.REFUSED
    assert result.diff == ""
    assert result.errors[0].code is FailureCode.DIFF_BUDGET_EXCEEDED


def test_fleet_policy_replaces_the_repositorys(python_repo: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\nforbidden = ["tests/**"]\n')
    change = resolve_change("unittest-to-assert", policy=policy)
    assert isinstance(change, ChangeSpec)

    result = run_unit(unit(python_repo, change, tmp_path))

    assert result.status is FleetStatus.NO_OP  # the forbidden test file is left out


def test_bad_policy_file(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[policy]\nnot_a_key = 1\n")

    failure = resolve_change("unittest-to-assert", policy=policy)

    assert not isinstance(failure, ChangeSpec)
    assert failure.code is FailureCode.INVALID_POLICY
    missing = resolve_change("unittest-to-assert", policy=tmp_path / "nope.toml")
    assert not isinstance(missing, ChangeSpec) and missing.code is FailureCode.INVALID_POLICY


def test_postcondition_parses_is_verification(python_repo: Path, tmp_path: Path) -> None:
    (tmp_path / "break.yaml").write_text(SYNTAX_BREAKER)
    change = resolve_change(str(tmp_path / "break.yaml"))
    assert isinstance(change, ChangeSpec)

    result = run_unit(unit(python_repo, change, tmp_path))

    assert result.status is FleetStatus.VERIFICATION_FAILED
    assert result.errors[0].code is FailureCode.POSTCONDITION_FAILED


def test_verify_profiles_after_the_change(python_repo: Path, tmp_path: Path) -> None:
    # passes while the tests still say `self.assert`, fails once the recipe removed them
    with_profile(python_repo, '[verify.legacy]\nargv = ["grep", "-rq", "self.assert", "tests"]\n')
    change = resolve_change("unittest-to-assert", verify_profiles=["legacy"])
    assert isinstance(change, ChangeSpec)

    result = run_unit(unit(python_repo, change, tmp_path))

    assert result.status is FleetStatus.VERIFICATION_FAILED
    assert result.diff  # the diff that broke it is kept for the report
    assert [e.code for e in result.errors] == [FailureCode.VERIFICATION_FAILED]
    assert result.verification is not None and result.verification["status"] == "failed"


def test_verify_unknown_profile(python_repo: Path, tmp_path: Path) -> None:
    change = resolve_change("unittest-to-assert", verify_profiles=["nope"])
    assert isinstance(change, ChangeSpec)

    result = run_unit(unit(python_repo, change, tmp_path))

    # a profile this repository does not define: skipped, with the reason, never "changed"
    assert result.status is FleetStatus.SKIPPED
    assert result.errors[0].code is FailureCode.UNKNOWN_PROFILE
    assert "nope" in result.errors[0].message


HARMLESS_CHECKED = """\
recipe_id: spell-add
language: python
summary: Spell add(a, b) as add(b, a)
operations:
  - type: ast_grep_rule
    id: swap
    rule: {pattern: "add($A, $B)"}
    fix: "add($B, $A)"
idempotency:
  rerun_produces_no_diff: false
postconditions:
  - tests_pass: PROFILE
"""


@pytest.mark.parametrize(
    ("profile", "status", "rule"),
    [
        ("not-here", FleetStatus.SKIPPED, "tests_pass:skipped"),
        ("broken", FleetStatus.VERIFICATION_ERROR, "tests_pass:error"),
    ],
)
def test_recipe_check_without_a_deciding_profile(
    python_repo: Path, tmp_path: Path, profile: str, status: FleetStatus, rule: str
) -> None:
    """A recipe's `tests_pass: X` where the repository has no X is skipped (with the reason);
    where X exists but establishes nothing it is a verification error; never changed."""
    with_profile(
        python_repo,
        '[verify.broken]\nargv = ["no-such-program-here"]\nkind = "test"\n'
        '[verify.ok]\nargv = ["true"]\n',
    )
    (tmp_path / "r.yaml").write_text(HARMLESS_CHECKED.replace("PROFILE", profile))
    change = resolve_change(str(tmp_path / "r.yaml"), verify_profiles=["ok"])
    assert isinstance(change, ChangeSpec)

    result = run_unit(unit(python_repo, change, tmp_path, trust=True))

    assert result.status is status, result.errors
    assert [rule] == [e.rule for e in result.errors]
    if status is FleetStatus.SKIPPED:
        assert profile in result.errors[0].message and not result.diff


def test_proposal(python_repo: Path, tmp_path: Path) -> None:
    proposal = {
        "proposal_id": "add-notice",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": "DIRECT_FILE_EDIT",
        "objective": "add a notice file",
        "expected_files": ["NOTICE.txt"],
        "operations": [
            {
                "type": "direct_write",
                "path": "NOTICE.txt",
                "content": "hello\n",
                "allow_create": True,
            }
        ],
    }
    (tmp_path / "p.json").write_text(json.dumps(proposal))
    change = resolve_change(str(tmp_path / "p.json"))
    assert isinstance(change, ChangeSpec) and change.kind is ChangeKind.PROPOSAL

    first = run_unit(unit(python_repo, change, tmp_path))

    assert first.status is FleetStatus.CHANGED, [e.message for e in first.errors]
    assert first.files == ("NOTICE.txt",)
    assert "+hello" in first.diff


def test_proposal_refused_and_no_op(python_repo: Path, tmp_path: Path) -> None:
    def proposal(
        content: str, path: str = "src/pkg0/core.py", sha: str | None = None
    ) -> ChangeSpec:
        data = {
            "proposal_id": "p",
            "run_id": "r",
            "attempt_no": 1,
            "strategy": "DIRECT_FILE_EDIT",
            "objective": "o",
            "expected_files": [path],
            "operations": [
                {"type": "direct_write", "path": path, "content": content, "expected_sha256": sha}
            ],
        }
        spec = resolve_change(json.dumps(data), kind=ChangeKind.PROPOSAL)
        assert isinstance(spec, ChangeSpec)
        return spec

    same = (python_repo / "src/pkg0/core.py").read_text()
    refused = run_unit(unit(python_repo, proposal("x = 1\n", ".git/config"), tmp_path))
    digest = hashlib.sha256(same.encode()).hexdigest()
    no_op = run_unit(unit(python_repo, proposal(same, sha=digest), tmp_path))

    assert refused.status is FleetStatus.REFUSED
    assert no_op.status is FleetStatus.NO_OP


def test_missing_repository(tmp_path: Path) -> None:
    result = run_unit(unit(tmp_path / "nowhere", recipe(), tmp_path))

    assert result.status is FleetStatus.ERROR
    assert result.errors[0].code is FailureCode.REPOSITORY_UNAVAILABLE
    assert result.commit is None


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()

    result = run_unit(unit(tmp_path / "plain", recipe(), tmp_path))

    assert result.errors[0].code is FailureCode.REPOSITORY_UNAVAILABLE
    assert "clone" in result.errors[0].message


def test_empty_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)

    result = run_unit(unit(tmp_path / "empty", recipe(), tmp_path))

    assert result.errors[0].code is FailureCode.REPOSITORY_UNAVAILABLE
    assert "no commit" in result.errors[0].message


@pytest.mark.parametrize("ref", ["main", "v1", "first"])
def test_refs(tmp_path: Path, ref: str) -> None:
    root = make_repo(tmp_path / "r", 0)
    first = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "tag", "v1"], cwd=root, check=True)
    (root / "extra.txt").write_text("x\n")
    git_commit = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "x"]
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(git_commit, cwd=root, check=True)
    name = first if ref == "first" else ref
    spec = RepoSpec(f"{root}@{name}", str(root), name)

    result = run_unit(WorkUnit(spec, recipe(), str(tmp_path / "w")))

    assert result.status is FleetStatus.CHANGED
    assert (result.commit == first) is (ref != "main")


def test_unknown_ref_and_option_like_ref(python_repo: Path, tmp_path: Path) -> None:
    for ref in ("nope", "--upload-pack=x"):
        spec = RepoSpec(f"{python_repo}@{ref}", str(python_repo), ref)
        result = run_unit(WorkUnit(spec, recipe(), str(tmp_path / "w")))

        assert result.errors[0].code is FailureCode.REPOSITORY_UNAVAILABLE
        assert "unknown ref" in result.errors[0].message


def test_file_url(python_repo: Path, tmp_path: Path) -> None:
    url = python_repo.as_uri()
    spec = RepoSpec(url, url, None)

    result = run_unit(WorkUnit(spec, recipe(), str(tmp_path / "w")))

    assert result.status is FleetStatus.CHANGED


def test_unreachable_url(tmp_path: Path) -> None:
    url = (tmp_path / "missing.git").as_uri()

    result = run_unit(WorkUnit(RepoSpec(url, url, None), recipe(), str(tmp_path / "w")))

    assert result.errors[0].code is FailureCode.REPOSITORY_UNAVAILABLE
    assert "clone failed" in result.errors[0].message


def test_json_round_trips(python_repo: Path, tmp_path: Path) -> None:
    one = unit(python_repo, recipe(), tmp_path, timeout=12.5)
    assert WorkUnit.from_json(json.loads(json.dumps(one.to_json()))) == one
    result = run_unit(one)
    assert RepoResult.from_json(json.loads(result.to_json_text())).outcome() == result.outcome()


# -- in a worker child ------------------------------------------------------------------------


def test_batch_in_a_child(python_repo: Path, tmp_path: Path) -> None:
    units = [unit(python_repo, recipe(), tmp_path), unit(tmp_path / "none", recipe(), tmp_path)]

    results = run_batch(units)

    assert [r.status for r in results] == [FleetStatus.CHANGED, FleetStatus.ERROR]
    assert results[0].outcome() == run_unit(units[0]).outcome()


def test_timeout_kills_the_unit_and_the_next_goes_on(python_repo: Path, tmp_path: Path) -> None:
    with_profile(python_repo, '[verify.hang]\nargv = ["sleep", "60"]\n')
    hang = resolve_change("unittest-to-assert", verify_profiles=["hang"])
    assert isinstance(hang, ChangeSpec)
    worker = WorkerProcess()
    try:
        slow = worker.run(unit(python_repo, hang, tmp_path, timeout=3.0))
        after = worker.run(unit(python_repo, recipe(), tmp_path))
    finally:
        worker.close()

    assert slow.status is FleetStatus.ERROR
    assert slow.errors[0].code is FailureCode.TIMED_OUT
    assert after.status is FleetStatus.CHANGED


def test_a_dying_worker_costs_one_unit(python_repo: Path, tmp_path: Path) -> None:
    # The worker process is killed mid-unit, while its profile runs (a sandboxed profile
    # cannot kill its parent itself: it sees only its own PID namespace).
    tag = uuid.uuid4().hex
    argv = json.dumps([sys.executable, "-c", "import time; time.sleep(60)", tag])
    with_profile(python_repo, f"[verify.die]\nargv = {argv}\n")
    die = resolve_change("unittest-to-assert", verify_profiles=["die"])
    assert isinstance(die, ChangeSpec)
    worker = WorkerProcess()

    def kill_the_worker() -> None:
        for _ in range(1200):
            if processes_tagged(tag) and worker._process is not None:
                os.kill(worker._process.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    try:
        died = worker.run(unit(python_repo, die, tmp_path))
        killer.join()
        after = worker.run(unit(python_repo, recipe(), tmp_path))
    finally:
        worker.close()

    assert died.status is FleetStatus.ERROR
    assert died.errors[0].code is FailureCode.WORKER_FAILED
    assert "exit status -9" in died.errors[0].message
    assert after.status is FleetStatus.CHANGED


def test_worker_main_and_internal_errors(
    python_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = json.dumps(unit(python_repo, recipe(), tmp_path).to_json())
    monkeypatch.setattr("sys.stdin", io.StringIO(good + "\n\n"))
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)

    assert worker_module.main() == 0
    assert json.loads(out.getvalue())["status"] == "changed"

    def boom(_unit: WorkUnit) -> RepoResult:
        raise RuntimeError("bug")

    monkeypatch.setattr(worker_module, "run_unit", boom)
    failed = worker_module.serve_one(good)
    assert failed.status is FleetStatus.ERROR
    assert failed.errors[0].code is FailureCode.WORKER_FAILED
    assert "RuntimeError: bug" in failed.errors[0].message


def test_text_that_is_no_recipe(tmp_path: Path) -> None:
    for text in ("x" * 5000, "recipe_id: a\nlanguage: python\n"):
        failure = resolve_change(text)

        assert not isinstance(failure, ChangeSpec)
        assert failure.code is FailureCode.RECIPE_NOT_FOUND
