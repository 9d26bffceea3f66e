"""`publish_run`: branches, commits with trailers, pushes to bare remotes, change descriptions."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from patchsmith.errors import FailureCode
from patchsmith.fleet import (
    ChangeKind,
    ChangeSpec,
    FleetStatus,
    FleetSummary,
    PublishStatus,
    PublishSummary,
    RepoResult,
    fleet_report,
    publish_run,
)
from patchsmith.fleet.publish import HARDENING, Publication, description_name, eligible
from patchsmith.fleet.store import FleetStore

from .forge import CHANGED, SIZE, git_out


@pytest.fixture(name="runs")
def _runs(forge_done: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "runs"
    shutil.copytree(forge_done, copy)
    return copy


def remote(forge_fleet: Path, n: int) -> Path:
    return forge_fleet.parent / "forge" / f"repo{n:04d}.git"


def branch_of(bare: Path, branch: str) -> str | None:
    found = git_out(bare, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
    return found or None


def published(summary: PublishSummary) -> dict[str, Publication]:
    return {p.key: p for p in summary.publications if p.status is PublishStatus.PUBLISHED}


def test_branches_commits_and_trailers_land_on_the_remotes(runs: Path, forge_fleet: Path) -> None:
    report = fleet_report("mig", runs_dir=runs)
    assert isinstance(report, FleetSummary)
    results = {r.key: r for r in report.results}

    summary = publish_run("mig", runs_dir=runs, branch="migrate/{change}", push="forge")

    assert summary.ok and summary.errors == ()
    assert summary.counts == {"published": 14, "skipped": 6, "failed": 0}
    assert summary.branch == "migrate/unittest-to-assert"
    done = published(summary)
    for n in range(SIZE):
        key = f"repo{n:04d}"
        bare = remote(forge_fleet, n)
        head = branch_of(bare, summary.branch)
        if n not in CHANGED:
            assert key not in done and head is None  # never published: no branch anywhere
            continue
        item = done[key]
        assert head == item.commit and item.pushed and item.remote == "forge"
        # one commit on the run's base commit, touching exactly the run's files
        assert git_out(bare, "rev-parse", f"{head}^") == results[key].commit
        changed = git_out(bare, "diff-tree", "-r", "--name-only", "--no-commit-id", head)
        assert changed.splitlines() == list(results[key].files)
        assert "assert add(" in git_out(bare, "show", f"{head}:tests/test_core.py")
        trailers = git_out(bare, "log", "-1", "--format=%(trailers:only,unfold)", head)
        assert trailers.splitlines() == [
            "Patchsmith-Run: mig",
            f"Patchsmith-Change: recipe unittest-to-assert@{report.change_version[:12]}",
            "Patchsmith-Evidence: not_run",
        ]
        assert git_out(bare, "log", "-1", "--format=%an <%ae>|%cn <%ce>", head) == (
            "patchsmith <patchsmith@localhost>|patchsmith <patchsmith@localhost>"
        )
        # the change description, ready for a pull-request API
        assert item.description == f"changes/{description_name(key)}.json"
        described = json.loads((runs / "mig" / item.description).read_text())
        assert described["head"] == summary.branch and described["base"] == "main"
        assert described["commit"] == head and described["repository"] == key
        assert described["title"].startswith("Replace unittest's self.assertEqual")
        assert described["diff_stats"]["files"] == [
            {"path": "tests/test_core.py", "insertions": 4, "deletions": 4}
        ]
        assert described["recipe_report"]["matches"] == 4
        assert described["evidence"] == {"verdict": "not_run", "profiles": []}
        markdown = (runs / "mig" / item.description).with_suffix(".md").read_text()
        assert (
            markdown.startswith("# Replace unittest's")
            and "| `tests/test_core.py` | 4 | 4 |" in markdown
        )
    skipped = {p.key: p.reason for p in summary.publications if p.status is PublishStatus.SKIPPED}
    assert skipped["repo0004"] == "status no_op" and skipped["repo0006"] == "status refused"
    # the sources were not written to: no branch there, the work tree untouched
    assert branch_of(forge_fleet.parent / "repo0000", summary.branch) is None


def test_publishing_again_duplicates_nothing(runs: Path, forge_fleet: Path) -> None:
    first = publish_run("mig", runs_dir=runs, branch="again", push="forge")
    again = publish_run("mig", runs_dir=runs, branch="again", push="forge")
    without_push = publish_run("mig", runs_dir=runs, branch="again")

    assert published(first) == published(again) == published(without_push)
    for n in CHANGED:
        bare = remote(forge_fleet, n)
        assert git_out(bare, "rev-list", "--count", "main..again") == "1"
    with sqlite3.connect(runs / "mig" / "fleet.db") as db:
        (rows,) = db.execute("SELECT COUNT(*) FROM publication WHERE branch = 'again'").fetchone()
    assert rows == len(CHANGED)


def test_an_interrupted_publish_resumes_to_the_same_commits(runs: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(runs, twin)
    reference = published(publish_run("mig", runs_dir=twin, branch="resumed"))

    class Stop(Exception):
        pass

    seen: list[str] = []

    def stop_after_five(item: Publication) -> None:
        seen.append(item.key)
        if len(seen) == 5:
            raise Stop

    with pytest.raises(Stop):
        publish_run("mig", runs_dir=runs, branch="resumed", progress=stop_after_five)
    halfway = [p for p in json_rows(runs) if p["branch"] == "resumed"]
    assert 0 < len(halfway) < len(CHANGED)

    # what a kill can leave: a clone half made, an index file of the dead process
    left = runs / "mig" / "publish" / f".{description_name('repo0015')}.partial"
    left.mkdir()
    (left / "HEAD").write_text("junk\n")
    clone0 = runs / "mig" / "publish" / f"{description_name('repo0000')}.git"
    (clone0 / "patchsmith-index-1").write_bytes(b"junk")

    resumed = published(publish_run("mig", runs_dir=runs, branch="resumed"))

    assert {k: p.commit for k, p in resumed.items()} == {k: p.commit for k, p in reference.items()}
    assert len(resumed) == len(CHANGED)
    clone = runs / "mig" / "publish" / f"{description_name('repo0000')}.git"
    assert git_out(clone, "rev-list", "--count", "main..resumed") == "1"


def json_rows(runs: Path) -> list[dict[str, object]]:
    with sqlite3.connect(runs / "mig" / "fleet.db") as db:
        return [json.loads(r[0]) for r in db.execute("SELECT publication_json FROM publication")]


def test_a_remote_branch_holding_other_commits_is_never_forced(
    runs: Path, forge_fleet: Path
) -> None:
    bare = remote(forge_fleet, 1)
    identity = ("-c", "user.name=someone", "-c", "user.email=someone@example.invalid")
    main = git_out(bare, *identity, "commit-tree", "main^{tree}", "-p", "main", "-m", "theirs")
    git_out(bare, "update-ref", "refs/heads/taken", main)  # not an ancestor of ours

    summary = publish_run("mig", runs_dir=runs, branch="taken", push="forge")

    failed = {p.key: p for p in summary.publications if p.status is PublishStatus.FAILED}
    assert list(failed) == ["repo0001"] and not summary.ok
    assert failed["repo0001"].errors[0].code is FailureCode.REPOSITORY_UNAVAILABLE
    assert branch_of(bare, "taken") == main  # left as it was
    assert failed["repo0001"].commit is not None  # committed locally: a rerun retries the push
    git_out(bare, "update-ref", "-d", "refs/heads/taken")
    retried = publish_run("mig", runs_dir=runs, branch="taken", push="forge")
    assert retried.ok and branch_of(bare, "taken") == failed["repo0001"].commit


def test_a_branch_of_the_repository_is_never_moved(runs: Path, forge_fleet: Path) -> None:
    source = forge_fleet.parent / "repo0002"
    # the publish clone copies the repository's branches: one of ours is already there
    git_out(source, "branch", "patchsmith/mig", "main")
    try:
        summary = publish_run("mig", runs_dir=runs)
    finally:
        git_out(source, "branch", "-D", "patchsmith/mig")

    failed = [p for p in summary.publications if p.status is PublishStatus.FAILED]
    assert [p.key for p in failed] == ["repo0002"]
    assert failed[0].errors[0].code is FailureCode.FLEET_RUN_CONFLICT


def test_another_author_under_a_published_branch_is_a_conflict(runs: Path) -> None:
    assert publish_run("mig", runs_dir=runs, branch="who").ok

    other = publish_run("mig", runs_dir=runs, branch="who", author="Bot <bot@example.com>")

    # a finished publication is kept as it is; nothing is made twice
    assert published(other) == published(publish_run("mig", runs_dir=runs, branch="who"))
    shutil.rmtree(runs / "mig" / "changes")  # its description gone: redone, the author differs
    redo = publish_run("mig", runs_dir=runs, branch="who", author="Bot <bot@example.com>")
    codes = {e.code for p in redo.publications for e in p.errors}
    assert codes == {FailureCode.FLEET_RUN_CONFLICT}


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        ({"branch": "-x"}, "branch"),
        ({"branch": "a//b"}, "branch"),
        ({"branch": "x.lock"}, "branch"),
        ({"branch": "a..b"}, "branch"),
        ({"branch": "{nope}"}, "branch"),
        ({"author": "nobody"}, "author"),
    ],
)
def test_bad_options_are_structured_errors(runs: Path, options: dict[str, str], rule: str) -> None:
    summary = publish_run("mig", runs_dir=runs, **options)

    assert summary.publications == ()
    assert [(e.code, e.rule) for e in summary.errors] == [(FailureCode.FLEET_RUN_CONFLICT, rule)]


def test_no_run_and_a_run_in_progress(runs: Path) -> None:
    from patchsmith.fleet.run import _RunLock

    missing = publish_run("nope", runs_dir=runs)
    assert missing.errors[0].code is FailureCode.FILE_NOT_FOUND
    lock = _RunLock(runs / "mig")
    assert lock.acquire()
    try:
        busy = publish_run("mig", runs_dir=runs)
    finally:
        lock.release()
    assert busy.errors[0].code is FailureCode.FLEET_RUN_CONFLICT


def test_a_relative_remote_is_read_from_its_repository(runs: Path, forge_fleet: Path) -> None:
    source = forge_fleet.parent / "repo0003"
    git_out(source, "remote", "set-url", "forge", "../forge/repo0003.git")
    try:
        summary = publish_run("mig", runs_dir=runs, branch="relative", push="forge")
    finally:
        git_out(source, "remote", "set-url", "forge", str(remote(forge_fleet, 3)))

    assert summary.ok
    assert branch_of(remote(forge_fleet, 3), "relative") == published(summary)["repo0003"].commit


def test_an_unknown_remote_fails_that_repository_only(runs: Path) -> None:
    summary = publish_run("mig", runs_dir=runs, push="nowhere")

    assert summary.counts["failed"] == len(CHANGED)
    assert {e.code for p in summary.publications for e in p.errors} == {
        FailureCode.REPOSITORY_UNAVAILABLE
    }


# -- zero false greens ---------------------------------------------------------------------------


def _result(status: FleetStatus, verification: dict[str, object] | None) -> RepoResult:
    return RepoResult(
        "r", status, commit="a" * 40, diff="diff", files=("x",), verification=verification
    )


VERIFIED = ChangeSpec(ChangeKind.RECIPE, "x", "text", verify_profiles=("pytest",))
UNVERIFIED = ChangeSpec(ChangeKind.RECIPE, "x", "text")


@pytest.mark.parametrize(
    ("result", "change", "allowed"),
    [
        (_result(FleetStatus.CHANGED, None), UNVERIFIED, True),
        (_result(FleetStatus.CHANGED, {"status": "passed"}), VERIFIED, True),
        (_result(FleetStatus.CHANGED, None), VERIFIED, False),
        (_result(FleetStatus.CHANGED, {"status": "error"}), VERIFIED, False),
        (_result(FleetStatus.CHANGED, {"status": "failed"}), VERIFIED, False),
        (_result(FleetStatus.VERIFICATION_ERROR, {"status": "error"}), VERIFIED, False),
        (_result(FleetStatus.VERIFICATION_FAILED, {"status": "failed"}), VERIFIED, False),
        (_result(FleetStatus.REFUSED, None), UNVERIFIED, False),
        (_result(FleetStatus.NO_OP, None), UNVERIFIED, False),
        (_result(FleetStatus.ERROR, None), UNVERIFIED, False),
        (RepoResult("r", FleetStatus.CHANGED, commit="a" * 40), UNVERIFIED, False),
    ],
)
def test_only_changed_with_passing_evidence_is_eligible(
    result: RepoResult, change: ChangeSpec, allowed: bool
) -> None:
    assert (eligible(result, change) is None) is allowed


def test_verification_errors_never_publish(runs: Path, tmp_path: Path) -> None:
    """A run that asked for verification: only `changed` with `passed` evidence gets a branch."""
    report = fleet_report("mig", runs_dir=runs)
    assert isinstance(report, FleetSummary)
    real = {r.key: r for r in report.results}
    with FleetStore.open(runs / "mig", create=False) as source:  # type: ignore[union-attr]
        specs = {r.key: r for r in source.repos()}
    change = ChangeSpec(ChangeKind.RECIPE, "unittest-to-assert", "x", verify_profiles=("pytest",))
    cases = {
        "repo0000": (
            FleetStatus.CHANGED,
            {
                "status": "passed",
                "profiles": [{"profile": "pytest", "verdict": "passed", "introduced_total": 0}],
            },
        ),
        "repo0001": (FleetStatus.CHANGED, {"status": "error"}),
        "repo0002": (FleetStatus.VERIFICATION_ERROR, {"status": "error"}),
        "repo0003": (FleetStatus.VERIFICATION_FAILED, {"status": "failed"}),
        "repo0005": (FleetStatus.CHANGED, None),
    }
    repos = [specs[k] for k in cases]
    store = FleetStore.open(tmp_path / "verified")
    assert isinstance(store, FleetStore)
    with store:
        assert store.begin("verified", change, repos) is None
        for key, (status, verification) in cases.items():
            base = real[key]
            store.record(
                RepoResult(
                    key, status, base.commit, base.diff, base.files, verification=verification
                ),
                "local",
            )

    summary = publish_run(tmp_path / "verified")

    assert [p.key for p in summary.publications if p.status is PublishStatus.PUBLISHED] == [
        "repo0000"
    ]
    clone = tmp_path / "verified" / "publish" / f"{description_name('repo0000')}.git"
    trailers = git_out(
        clone, "log", "-1", "--format=%(trailers:only,unfold)", "patchsmith/verified"
    )
    assert "Patchsmith-Evidence: passed (pytest)" in trailers
    assert sorted(p.name for p in (tmp_path / "verified" / "publish").iterdir()) == [
        f"{description_name('repo0000')}.git"
    ]
    described = json.loads(
        (tmp_path / "verified" / "changes" / f"{description_name('repo0000')}.json").read_text()
    )
    assert described["evidence"]["verdict"] == "passed"
    assert "Verdict: **passed**" in described["body"]


def test_git_runs_without_hooks_fsmonitor_or_credential_helpers() -> None:
    options = " ".join(HARDENING)
    for needed in (
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "protocol.ext.allow=never",
        "credential.helper=",
        "commit.gpgSign=false",
    ):
        assert f"-c {needed}" in options


def test_hooks_of_the_repositories_never_run(runs: Path, forge_fleet: Path, tmp_path: Path) -> None:
    """Neither the source's hooks (on clone) nor a local remote's (on push) run."""
    witness = tmp_path / "ran"
    hook = f"#!/bin/sh\ntouch {witness}\n"
    targets = [
        forge_fleet.parent / "repo0000" / ".git" / "hooks" / "post-checkout",
        forge_fleet.parent / "repo0000" / ".git" / "hooks" / "reference-transaction",
        *(
            remote(forge_fleet, 0) / "hooks" / name
            for name in ("pre-receive", "update", "post-receive", "post-update")
        ),
        remote(forge_fleet, 0) / "hooks" / "reference-transaction",
    ]
    for path in targets:
        path.write_text(hook)
        path.chmod(0o755)
    try:
        summary = publish_run("mig", runs_dir=runs, branch="hooked", push="forge")
        origin = publish_run("mig", runs_dir=runs, branch="hooked-origin", push="origin")
    finally:
        for path in targets:
            path.unlink()
        git_out(forge_fleet.parent / "repo0000", "branch", "-D", "hooked-origin")

    assert summary.ok and origin.ok
    assert branch_of(remote(forge_fleet, 0), "hooked") is not None
    assert not witness.exists()


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("/srv/git/a.git", True),
        ("relative/a.git", True),
        ("file:///srv/git/a.git", True),
        ("ssh://git@host/a.git", False),
        ("https://host/a.git", False),
        ("git@host:org/a.git", False),
    ],
)
def test_which_remotes_run_their_receive_pack_here(url: str, local: bool) -> None:
    from patchsmith.fleet.publish import _is_local

    assert _is_local(url) is local


def test_titles_come_from_the_recipe_or_the_proposal() -> None:
    from patchsmith.fleet.publish import _title

    proposal = ChangeSpec(
        ChangeKind.PROPOSAL,
        "p-1",
        json.dumps({"objective": "Fix the null check\nin detail", "rationale": "Because."}),
    )
    assert _title(proposal) == ("Fix the null check", "Because.")
    assert _title(ChangeSpec(ChangeKind.PROPOSAL, "p-2", "not json")) == (
        "Apply proposal p-2",
        "",
    )
    assert _title(ChangeSpec(ChangeKind.RECIPE, "r", "not: [a recipe")) == ("Apply recipe r", "")


def test_a_publish_killed_midway_resumes(runs: Path, forge_fleet: Path, tmp_path: Path) -> None:
    """SIGKILL in the middle of `fleet publish`; the same command then finishes the job."""
    twin = tmp_path / "twin"
    shutil.copytree(runs, twin)
    reference = published(publish_run("mig", runs_dir=twin, branch="killed"))
    # a slow git, so the kill lands mid-way on any machine
    shim = tmp_path / "bin"
    shim.mkdir()
    real = shutil.which("git")
    assert real is not None
    (shim / "git").write_text(f'#!/bin/sh\nsleep 0.05\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    cli = "import sys; from patchsmith.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", cli, "fleet", "publish", "mig", "--runs-dir", str(runs)]
    argv += ["--branch", "killed", "--push", "forge", "--json"]

    def landed() -> int:
        return sum(1 for row in json_rows(runs) if row["branch"] == "killed")

    victim = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while landed() < 3 and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL
    assert 3 <= landed() < len(CHANGED)

    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    commits = {p["key"]: p["commit"] for p in payload["publications"] if p["status"] == "published"}
    assert commits == {k: p.commit for k, p in reference.items()}
    for n in CHANGED:
        bare = remote(forge_fleet, n)
        assert git_out(bare, "rev-list", "--count", "main..killed") == "1"
        assert branch_of(bare, "killed") == commits[f"repo{n:04d}"]
