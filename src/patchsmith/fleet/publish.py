"""Publishing a finished fleet run: per changed repository a branch, a commit, a push.

Each repository whose result is `changed` (and, when the run asked for verification,
whose evidence is `passed`) gets, in a bare clone of its own under `RUN/publish/`:

- its run diff applied to the commit the run changed, with plumbing only (`read-tree`,
  `apply --cached`, `write-tree`, `commit-tree`: no working tree, so no checkout filter,
  attribute driver or fsmonitor can run), and checked to touch exactly the run's files;
- one commit whose author, committer and date are fixed (the date is when the result
  landed), so publishing again makes the very same commit: idempotent by construction;
- a branch pointing at it (never moved once it points elsewhere), optionally pushed
  without force (`git push REMOTE COMMIT:refs/heads/BRANCH`);
- a change description, `RUN/changes/NAME.json` and `.md`, ready for a forge's
  pull-request API (`title`, `body`, `head`, `base`).

Each step's state is committed to the run's store, so a publish killed midway resumes.
Git runs with none of the user's configuration or environment, no hook, no fsmonitor,
no `ext::` transport and no credential helper (ADR 0039).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.change import ChangeKind, ChangeSpec
from patchsmith.fleet.checkout import GIT_ENV
from patchsmith.fleet.repos import RepoSpec
from patchsmith.fleet.result import FleetStatus, RepoResult, failure_from_json
from patchsmith.fleet.run import (
    DEFAULT_RUNS_DIR,
    STORE_DAMAGE,
    _RunLock,
    damaged_store,
    open_run,
    unsafe_run_folder,
)
from patchsmith.fleet.store import FleetStore
from patchsmith.runtime.gitcmd import SAFE_CONFIG, git_argv
from patchsmith.runtime.statedir import StateDirUnsafe, ensure_subdir

__all__ = [
    "CHANGES_DIR",
    "DEFAULT_AUTHOR",
    "DEFAULT_BRANCH",
    "PUBLISH_DIR",
    "Publication",
    "PublishStatus",
    "PublishSummary",
    "description_name",
    "eligible",
    "publish_run",
]

PUBLISH_DIR = "publish"
"""`RUN/publish/NAME.git`: the bare clone holding a repository's published branch."""
CHANGES_DIR = "changes"
"""`RUN/changes/NAME.json` and `NAME.md`: a repository's change description."""
DEFAULT_BRANCH = "patchsmith/{run}"
"""The branch name; `{run}` is the run id, `{change}` the recipe id or proposal id."""
DEFAULT_AUTHOR = "patchsmith <patchsmith@localhost>"

HARDENING = (
    *SAFE_CONFIG,
    *("-c", "protocol.ext.allow=never"),
    *("-c", "credential.helper="),
    *("-c", "commit.gpgSign=false"),
    *("-c", "push.gpgSign=false"),
    *("-c", "gc.auto=0"),
    *("-c", "maintenance.auto=false"),
    *("-c", "submodule.recurse=false"),
    *("-c", "push.recurseSubmodules=no"),
    *("-c", "core.attributesFile=/dev/null"),
)
"""`-c` options of every publishing git call: they outrank every configuration file."""

LOCAL_RECEIVE_PACK = "git -c core.hooksPath=/dev/null -c core.fsmonitor=false receive-pack"
"""The receive-pack run for a push to a local repository: none of its hooks run."""

_AUTHOR = re.compile(r"([^<>\n]+?)\s*<([^<>\s]+)>")


class PublishStatus(StrEnum):
    """`published`: the branch and commit exist (and were pushed, when a remote was named).
    `skipped`: not eligible (not `changed`, or its evidence did not pass). `failed`: git
    could not do a step; `errors` say which, and publishing again retries it."""

    PUBLISHED = "published"
    SKIPPED = "skipped"
    FAILED = "failed"


@dataclass(frozen=True)
class Publication:
    """Where one repository's publication stands."""

    key: str
    status: PublishStatus
    branch: str = ""
    commit: str | None = None
    base_commit: str | None = None
    base: str | None = None
    """The branch (or ref) the change is meant for: the run's `@ref`, else the default branch."""
    remote: str | None = None
    pushed: bool = False
    description: str | None = None
    """The change description's JSON file, relative to the run folder."""
    reason: str = ""
    errors: tuple[PatchFailure, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "status": self.status.value,
            "branch": self.branch,
            "commit": self.commit,
            "base_commit": self.base_commit,
            "base": self.base,
            "remote": self.remote,
            "pushed": self.pushed,
            "description": self.description,
            "reason": self.reason,
            "errors": [e.to_json() for e in self.errors],
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Publication:
        def text(name: str) -> str | None:
            value = data.get(name)
            return None if value is None else str(value)

        errors = data.get("errors") or []
        assert isinstance(errors, list)
        return cls(
            str(data["key"]),
            PublishStatus(str(data["status"])),
            str(data.get("branch") or ""),
            text("commit"),
            text("base_commit"),
            text("base"),
            text("remote"),
            data.get("pushed") is True,
            text("description"),
            str(data.get("reason") or ""),
            tuple(failure_from_json(e) for e in errors if isinstance(e, dict)),
        )


@dataclass(frozen=True)
class PublishSummary:
    """A publish of one run: each finished repository's publication, and run-level errors."""

    run_id: str
    run_dir: str
    branch: str
    remote: str | None
    publications: tuple[Publication, ...] = ()
    errors: tuple[PatchFailure, ...] = field(default=())

    @property
    def counts(self) -> dict[str, int]:
        counts = {status.value: 0 for status in PublishStatus}
        for item in self.publications:
            counts[item.status.value] += 1
        return counts

    @property
    def ok(self) -> bool:
        return not self.errors and all(
            p.status is not PublishStatus.FAILED for p in self.publications
        )

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "run_dir": self.run_dir,
            "branch": self.branch,
            "remote": self.remote,
            "counts": self.counts,
            "publications": [p.to_json() for p in self.publications],
            "errors": [e.to_json() for e in self.errors],
        }

    def to_text(self) -> str:
        where = f", pushed to {self.remote}" if self.remote else ""
        lines = [f"publish {self.run_id}: branch {self.branch}{where}"]
        lines.extend(f"  {status:<9}  {count:>5}" for status, count in self.counts.items())
        for item in self.publications:
            if item.status is PublishStatus.PUBLISHED:
                sha = (item.commit or "")[:12]
                pushed = f" -> {item.remote}" if item.pushed else ""
                lines.append(f"  published  {item.key}  {sha}{pushed}  {item.description}")
            elif item.status is PublishStatus.FAILED:
                first = item.errors[0] if item.errors else None
                why = f"{first.code.value}: {first.message}" if first else item.reason
                lines.append(f"  failed     {item.key}  {why}"[:200])
        for error in self.errors:
            lines.append(f"  error: {error.code.value}: {error.message}")
        return "\n".join(lines) + "\n"


# -- eligibility ---------------------------------------------------------------------------------


def eligible(result: RepoResult, change: ChangeSpec) -> str | None:
    """Why `result` must not be published, or None when it may.

    Only `changed` with a diff; when the run asked for verification, only with a
    verification report whose verdict is `passed` (never `error`, `failed` or missing).
    """
    if result.status is not FleetStatus.CHANGED:
        return f"status {result.status.value}"
    if not result.diff or result.commit is None:
        return "no diff to publish"
    if change.verify_profiles:
        verdict = (result.verification or {}).get("status")
        if verdict != "passed":
            return f"verification evidence is {verdict or 'missing'}, not passed"
    return None


# -- git -----------------------------------------------------------------------------------------


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    # nothing of the caller's git environment (GIT_DIR, GIT_INDEX_FILE, GIT_EXTERNAL_DIFF,
    # GIT_CONFIG_PARAMETERS…) may point git elsewhere or add configuration
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    env.update({"GIT_NO_REPLACE_OBJECTS": "1", "GIT_PAGER": "cat", "LC_ALL": "C"})
    env.update(extra or {})
    return env


def _git(
    args: list[str],
    cwd: Path | None = None,
    *,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    # git_argv turns hooks and fsmonitor off (and templates, for init/clone); publishing
    # adds the rest of HARDENING (ext transport, credential helpers, signing, ...).
    argv = git_argv(*args)
    argv[1:1] = HARDENING
    return subprocess.run(
        argv,
        cwd=cwd,
        env=_env(env),
        input=stdin,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _failed(key: str, code: FailureCode, message: str, hint: str) -> PatchFailure:
    return PatchFailure(code, message, file=key, hint=hint, rule="publish")


# -- names ---------------------------------------------------------------------------------------


def description_name(key: str) -> str:
    """The file name (without suffix) of `key`'s change description and publish clone."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", key).strip("-.")[-48:] or "repo"
    return f"{readable}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:10]}"


def _branch_name(template: str, run_id: str, change: ChangeSpec) -> str | PatchFailure:
    try:
        name = template.format(run=run_id, change=change.name)
    except (KeyError, IndexError, ValueError) as exc:
        name = ""
        problem = f"{type(exc).__name__}: {exc}"
    else:
        checked = _git(["check-ref-format", f"refs/heads/{name}"])
        problem = "" if checked.returncode == 0 and not name.startswith("-") else "invalid"
    if problem:
        return PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            f"not a branch name: {template!r} ({problem})",
            hint="a git branch name; {run} is the run id, {change} the recipe or proposal id",
            rule="branch",
        )
    return name


def _author(text: str) -> tuple[str, str] | PatchFailure:
    found = _AUTHOR.fullmatch(text.strip())
    if found is None:
        return PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            f"not an author: {text!r}",
            hint='"Name <email>", e.g. "Platform Bot <bot@example.com>"',
            rule="author",
        )
    return found.group(1), found.group(2)


# -- the description -----------------------------------------------------------------------------


def _title(change: ChangeSpec) -> tuple[str, str]:
    """The change's one-line title and its longer description, from the recipe or proposal."""
    if change.kind is ChangeKind.RECIPE:
        from patchsmith.codemod.recipe import parse_recipe

        recipe = parse_recipe(change.text, source=change.name)
        if not isinstance(recipe, PatchFailure):
            return recipe.summary.strip().splitlines()[0], recipe.description.strip()
        return f"Apply recipe {change.name}", ""
    try:
        data = json.loads(change.text)
    except ValueError:
        data = {}
    objective = str(data.get("objective") or f"Apply proposal {change.name}").strip()
    return objective.splitlines()[0], str(data.get("rationale") or "").strip()


def _numstat(clone: Path, base: str, commit: str) -> list[tuple[str, int, int]]:
    done = _git(["diff-tree", "-r", "--numstat", "--no-renames", base, commit], cwd=clone)
    stats = []
    for line in done.stdout.splitlines():
        added, removed, path = [*line.split("\t", 2), "", ""][:3]
        stats.append(
            (path, int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0)
        )
    return stats


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _recipe_counts(report: dict[str, object]) -> dict[str, object]:
    files = report.get("files")
    matches = sum(
        int(f.get("matches", 0))
        for f in (files if isinstance(files, list) else [])
        if isinstance(f, dict) and isinstance(f.get("matches", 0), int)
    )
    left = report.get("unchanged_matches")
    return {
        "recipe_id": report.get("recipe_id"),
        "files_scanned": report.get("files_scanned"),
        "files_matched": report.get("files_matched"),
        "files_changed": report.get("files_changed"),
        "matches": matches,
        "unchanged_matches": len(left) if isinstance(left, list) else 0,
        "idempotent": report.get("idempotent"),
    }


def _evidence(result: RepoResult, change: ChangeSpec) -> dict[str, object]:
    if not change.verify_profiles:
        return {"verdict": "not_run", "profiles": []}
    verification = result.verification or {}
    profiles = verification.get("profiles")
    shown = [
        {
            "profile": p.get("profile"),
            "verdict": p.get("verdict"),
            "introduced_total": p.get("introduced_total"),
        }
        for p in (profiles if isinstance(profiles, list) else [])
        if isinstance(p, dict)
    ]
    return {"verdict": verification.get("status"), "profiles": shown}


def _describe(
    result: RepoResult,
    change: ChangeSpec,
    run_id: str,
    stats: list[tuple[str, int, int]],
) -> tuple[str, str, dict[str, object], dict[str, object], dict[str, object]]:
    """(title, body in Markdown, diff stats, recipe counts, evidence) for one repository."""
    title, about = _title(change)
    added = sum(a for _, a, _ in stats)
    removed = sum(r for _, _, r in stats)
    diff_stats: dict[str, object] = {
        "files": [{"path": p, "insertions": a, "deletions": r} for p, a, r in stats],
        "files_changed": len(stats),
        "insertions": added,
        "deletions": removed,
    }
    counts = _recipe_counts(result.report) if change.kind is ChangeKind.RECIPE else {}
    evidence = _evidence(result, change)
    lines = [about, ""] if about else []
    lines += [
        f"Made by `patchsmith fleet run` **{run_id}**: {change.kind.value} {_code(change.name)} "
        f"(version `{change.version[:12]}`) on commit `{(result.commit or '')[:12]}`.",
        "",
        "### Changes",
        "",
        f"{len(stats)} file(s) changed, {added} insertion(s), {removed} deletion(s).",
        "",
        "| file | + | - |",
        "| --- | ---: | ---: |",
        *(f"| {_code(p)} | {a} | {r} |" for p, a, r in stats),
    ]
    if counts:
        idem = counts["idempotent"]
        lines += [
            "",
            "### Recipe report",
            "",
            f"- files scanned: {counts['files_scanned']}, matched: {counts['files_matched']}, "
            f"changed: {counts['files_changed']}",
            f"- matches changed: {counts['matches']}; matches left alone: "
            f"{counts['unchanged_matches']}",
            f"- idempotent: {'yes' if idem else 'no' if idem is False else 'not checked'}",
        ]
    lines += ["", "### Verification", ""]
    if evidence["verdict"] == "not_run":
        lines.append("Not verified: the run asked for no verification profile (`--verify`).")
    else:
        lines.append(f"Verdict: **{evidence['verdict']}**")
        profiles = evidence["profiles"]
        assert isinstance(profiles, list)
        lines += [f"- profile {_code(str(p['profile']))}: {p['verdict']}" for p in profiles]
    return title, "\n".join(lines) + "\n", diff_stats, counts, evidence


def _message(title: str, run_id: str, change: ChangeSpec, evidence: dict[str, object]) -> str:
    verdict = str(evidence["verdict"])
    profiles = evidence.get("profiles")
    listed = profiles if isinstance(profiles, list) else []
    names = [str(p["profile"]) for p in listed if isinstance(p, dict)]
    shown = f"{verdict} ({', '.join(names)})" if names else verdict
    return (
        f"{title}\n\n"
        f"Applied by patchsmith fleet run {run_id}: {change.kind.value} {change.name}.\n\n"
        f"Patchsmith-Run: {run_id}\n"
        f"Patchsmith-Change: {change.kind.value} {change.name}@{change.version[:12]}\n"
        f"Patchsmith-Evidence: {shown}\n"
    )


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# -- one repository ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    run_id: str
    run_dir: Path
    change: ChangeSpec
    branch: str
    remote: str | None
    author: tuple[str, str]


def _clone(job: _Job, repo: RepoSpec) -> Path | PatchFailure:
    """The repository's bare publish clone (made once; a half-made one is made again)."""
    folder = job.run_dir / PUBLISH_DIR
    ensure_subdir(folder)
    name = description_name(repo.key)
    clone = folder / f"{name}.git"
    if clone.is_dir() and not clone.is_symlink():
        return clone
    partial = folder / f".{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    args = ["clone", "--quiet", "--bare"]
    if Path(repo.source).is_absolute():
        args.append("--shared")  # borrow the objects: nothing is copied, the source is not written
    done = _git([*args, "--", repo.source, os.fspath(partial)])
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        return _failed(
            repo.key,
            FailureCode.REPOSITORY_UNAVAILABLE,
            f"git clone failed: {_last_line(done.stderr)}",
            "check that the repository is still reachable without a password",
        )
    os.replace(partial, clone)
    return clone


def _base_name(clone: Path, repo: RepoSpec) -> str | None:
    if repo.ref:
        return repo.ref
    head = _git(["symbolic-ref", "--quiet", "--short", "HEAD"], cwd=clone)
    return head.stdout.strip() or None if head.returncode == 0 else None


def _commit(
    job: _Job, clone: Path, result: RepoResult, title: str, evidence: dict[str, object], when: int
) -> str | PatchFailure:
    """The commit of `result`'s diff on its base: the same inputs always give the same id."""
    key, base = result.key, result.commit or ""
    index = clone / f"patchsmith-index-{os.getpid()}"
    env = {"GIT_INDEX_FILE": os.fspath(index)}
    try:
        steps = [
            (["read-tree", base], None),
            (["apply", "--cached", "--whitespace=nowarn", "-p1", "-"], result.diff),
        ]
        for args, stdin in steps:
            done = _git(args, cwd=clone, stdin=stdin, env=env)
            if done.returncode != 0:
                return _failed(
                    key,
                    FailureCode.COMMAND_FAILED,
                    f"git {args[0]} failed on {base[:12]}: {_last_line(done.stderr)}",
                    "the run's diff no longer applies to its commit; run the repository again",
                )
        tree = _git(["write-tree"], cwd=clone, env=env).stdout.strip()
    finally:
        with contextlib.suppress(OSError):
            index.unlink()
    touched = _git(["diff-tree", "-r", "--name-only", "--no-renames", base, tree], cwd=clone)
    if sorted(touched.stdout.splitlines()) != sorted(result.files):
        return _failed(
            key,
            FailureCode.COMMAND_FAILED,
            "the commit would not change exactly the run's files; nothing was published",
            "run the repository again (`fleet run --retry-errors` after removing its result)",
        )
    name, email = job.author
    date = f"@{when} +0000"
    identity = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": date,
    }
    message = _message(title, job.run_id, job.change, evidence)
    made = _git(
        ["commit-tree", tree, "-p", base, "-F", "-"], cwd=clone, stdin=message, env=identity
    )
    if made.returncode != 0:
        return _failed(
            key,
            FailureCode.COMMAND_FAILED,
            f"git commit-tree failed: {_last_line(made.stderr)}",
            "check the author given with --author",
        )
    return made.stdout.strip()


def _point_branch(clone: Path, key: str, branch: str, commit: str) -> PatchFailure | None:
    ref = f"refs/heads/{branch}"
    now = _git(["rev-parse", "--verify", "--quiet", ref], cwd=clone).stdout.strip()
    if now == commit:
        return None
    if now:
        return _failed(
            key,
            FailureCode.FLEET_RUN_CONFLICT,
            f"branch {branch!r} already exists at {now[:12]}, not at {commit[:12]}; "
            "it was left alone",
            "publish under another --branch",
        )
    done = _git(["update-ref", ref, commit, "0" * 40], cwd=clone)
    if done.returncode != 0:
        return _failed(
            key,
            FailureCode.COMMAND_FAILED,
            f"git update-ref failed: {_last_line(done.stderr)}",
            "check the run folder is writable",
        )
    return None


def _remote_url(clone: Path, repo: RepoSpec, remote: str) -> str | PatchFailure:
    """`origin` is the repository as the run named it; another name is a remote of the
    local repository (read from its configuration, nothing of it runs)."""
    if remote == "origin":
        return repo.source
    if remote.startswith("-") or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", remote):
        found = ""
    elif Path(repo.source).is_dir():
        found = _git(["config", "--get", f"remote.{remote}.url"], cwd=Path(repo.source)).stdout
    else:
        found = ""
    url = found.strip()
    if not url or url.startswith("-"):
        return _failed(
            repo.key,
            FailureCode.REPOSITORY_UNAVAILABLE,
            f"no remote {remote!r} for {repo.key}",
            "--push origin pushes to the repository the run cloned; another name must be a "
            "remote of the local repository",
        )
    if _is_local(url) and not url.startswith("file://") and not os.path.isabs(url):
        # git reads a relative path from the repository's top folder, as we must
        url = os.path.normpath(os.path.join(repo.source, url))
    return url


def _is_local(url: str) -> bool:
    """Whether git reaches `url` by running its receive-pack on this machine."""
    if url.startswith("file://"):
        return True
    if "://" in url:
        return False
    colon, slash = url.find(":"), url.find("/")
    scp_like = colon > 1 and (slash < 0 or colon < slash)  # `host:path`, as git reads it
    return not scp_like


def _push(
    clone: Path, repo: RepoSpec, remote: str, branch: str, commit: str
) -> PatchFailure | None:
    url = _remote_url(clone, repo, remote)
    if isinstance(url, PatchFailure):
        return url
    args = ["push", "--porcelain", "--no-verify"]
    if _is_local(url):
        # a local remote's receive-pack runs here, with that repository's configuration:
        # its hooks (a `core.hooksPath` into its work tree, say) would run as us
        args.append(f"--receive-pack={LOCAL_RECEIVE_PACK}")
    done = _git([*args, "--", url, f"{commit}:refs/heads/{branch}"], cwd=clone)
    if done.returncode == 0:
        return None
    rejected = [line for line in done.stdout.splitlines() if line.startswith("!")]
    why = rejected[0] if rejected else _last_line(done.stderr)
    return _failed(
        repo.key,
        FailureCode.REPOSITORY_UNAVAILABLE,
        f"git push to {remote} failed: {why}",
        "nothing is ever forced: a remote branch holding other commits stays; publish "
        "under another --branch, or check the remote is reachable without a password",
    )


def _publish_one(
    job: _Job,
    store: FleetStore,
    repo: RepoSpec,
    result: RepoResult,
    when: int,
    before: Publication | None,
) -> Publication:
    key = result.key
    done_before = (
        before is not None
        and before.status is PublishStatus.PUBLISHED
        and before.description is not None
        and (job.remote is None or (before.pushed and before.remote == job.remote))
        and (job.run_dir / before.description).is_file()
    )
    if done_before:
        assert before is not None
        return before
    clone = _clone(job, repo)
    if isinstance(clone, PatchFailure):
        return Publication(key, PublishStatus.FAILED, job.branch, errors=(clone,))
    title, _about = _title(job.change)
    base_commit = result.commit or ""
    evidence = _evidence(result, job.change)
    commit = _commit(job, clone, result, title, evidence, when)
    if isinstance(commit, PatchFailure):
        return Publication(
            key, PublishStatus.FAILED, job.branch, base_commit=base_commit, errors=(commit,)
        )
    if before is not None and before.commit and before.commit != commit:
        conflict = _failed(
            key,
            FailureCode.FLEET_RUN_CONFLICT,
            f"branch {job.branch!r} was published as {before.commit[:12]}, now {commit[:12]} "
            "(another --author?); nothing was changed",
            "publish with the same options, or under another --branch",
        )
        return Publication(key, PublishStatus.FAILED, job.branch, before.commit, errors=(conflict,))
    moved = _point_branch(clone, key, job.branch, commit)
    base = _base_name(clone, repo)
    stats = _numstat(clone, base_commit, commit)
    title, body, diff_stats, counts, evidence = _describe(result, job.change, job.run_id, stats)
    name = description_name(key)
    description = f"{CHANGES_DIR}/{name}.json"
    state = Publication(
        key,
        PublishStatus.FAILED if moved else PublishStatus.PUBLISHED,
        job.branch,
        commit,
        base_commit,
        base,
        job.remote,
        False,
        description,
        errors=(moved,) if moved else (),
    )
    if moved:
        return state
    changes = job.run_dir / CHANGES_DIR
    ensure_subdir(changes)
    record = {
        "title": title,
        "body": body,
        "head": job.branch,
        "base": base,
        "repository": key,
        "source": repo.source,
        "remote": job.remote,
        "base_commit": base_commit,
        "commit": commit,
        "run_id": job.run_id,
        "change": {
            "kind": job.change.kind.value,
            "name": job.change.name,
            "version": job.change.version,
        },
        "diff_stats": diff_stats,
        "recipe_report": counts,
        "evidence": evidence,
    }
    _write_atomic(changes / f"{name}.json", json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    _write_atomic(changes / f"{name}.md", f"# {title}\n\n{body}")
    store.record_publication(key, job.branch, state.to_json())
    if job.remote is None:
        return state
    failure = _push(clone, repo, job.remote, job.branch, commit)
    if failure is not None:
        return Publication(
            key,
            PublishStatus.FAILED,
            job.branch,
            commit,
            base_commit,
            base,
            job.remote,
            False,
            description,
            errors=(failure,),
        )
    pushed = Publication(
        key,
        PublishStatus.PUBLISHED,
        job.branch,
        commit,
        base_commit,
        base,
        job.remote,
        True,
        description,
    )
    store.record_publication(key, job.branch, pushed.to_json())
    return pushed


# -- the run -------------------------------------------------------------------------------------


def publish_run(
    run: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = DEFAULT_RUNS_DIR,
    branch: str = DEFAULT_BRANCH,
    push: str | None = None,
    author: str = DEFAULT_AUTHOR,
    progress: Callable[[Publication], None] | None = None,
) -> PublishSummary:
    """Publish every eligible repository of `run` (see the module); never raises.

    `branch` may hold `{run}` and `{change}`; `push` names a remote (`origin`: the
    repository as the run cloned it; another name: a remote of the local repository).
    Publishing again skips what is done and retries what failed; the same options give
    the same commits. Run-level problems (no such run, a bad branch name or author, the
    run in progress elsewhere) are the summary's `errors`.
    """
    opened = open_run(run, runs_dir=runs_dir)
    if isinstance(opened, PatchFailure):
        return PublishSummary(os.fspath(run), "", branch, push, errors=(opened,))
    store, folder = opened
    lock = _RunLock(folder)
    with store:
        try:
            locked = lock.acquire()
        except StateDirUnsafe as exc:
            return PublishSummary(
                os.fspath(run), os.fspath(folder), branch, push, errors=(unsafe_run_folder(exc),)
            )
        if not locked:
            busy = PatchFailure(
                FailureCode.FLEET_RUN_CONFLICT,
                f"run {os.fspath(run)!r} is in progress in another process",
                hint="publish once it has finished",
                rule="fleet_run",
            )
            return PublishSummary(os.fspath(run), os.fspath(folder), branch, push, errors=(busy,))
        try:
            return _publish(store, folder, branch, push, author, progress)
        finally:
            lock.release()


def _publish(
    store: FleetStore,
    folder: Path,
    branch_template: str,
    push: str | None,
    author_text: str,
    progress: Callable[[Publication], None] | None,
) -> PublishSummary:
    try:
        info = store.info()
        change = store.change()
        repos = {r.key: r for r in store.repos()}
        results = store.results()
        times = store.finished_times()
        known = [Publication.from_json(p) for p in store.publications()]
    except STORE_DAMAGE as exc:
        return PublishSummary(
            "", os.fspath(folder), branch_template, push, errors=(damaged_store(store.path, exc),)
        )
    if info is None or change is None:
        missing = PatchFailure(
            FailureCode.FILE_NOT_FOUND,
            f"{os.fspath(folder)!r} holds no started run",
            hint="start it with `patchsmith fleet run`",
        )
        return PublishSummary("", os.fspath(folder), branch_template, push, errors=(missing,))
    branch = _branch_name(branch_template, info.run_id, change)
    author = _author(author_text)
    problems = [x for x in (branch, author) if isinstance(x, PatchFailure)]
    if problems or isinstance(branch, PatchFailure) or isinstance(author, PatchFailure):
        return PublishSummary(
            info.run_id, os.fspath(folder), branch_template, push, errors=tuple(problems)
        )
    job = _Job(info.run_id, folder.absolute(), change, branch, push, author)
    before = {p.key: p for p in known if p.branch == branch}
    publications = []
    for result in results:
        why = eligible(result, change)
        if why is not None:
            item = Publication(result.key, PublishStatus.SKIPPED, branch, reason=why)
        else:
            try:
                item = _publish_one(
                    job,
                    store,
                    repos[result.key],
                    result,
                    int(times[result.key]),
                    before.get(result.key),
                )
            except StateDirUnsafe as exc:
                item = Publication(
                    result.key, PublishStatus.FAILED, branch, errors=(unsafe_run_folder(exc),)
                )
            except OSError as exc:
                failure = _failed(
                    result.key,
                    FailureCode.IO_ERROR,
                    f"cannot write under {os.fspath(folder)}: {exc}",
                    "check the run folder is writable",
                )
                item = Publication(result.key, PublishStatus.FAILED, branch, errors=(failure,))
            if item.status is PublishStatus.FAILED:
                store.record_publication(result.key, branch, item.to_json())
        publications.append(item)
        if progress is not None:
            progress(item)
    return PublishSummary(info.run_id, os.fspath(folder), branch, push, tuple(publications))
