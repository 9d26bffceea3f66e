"""`verify`: run profiles on a changed tree and on its base, and report only what the change broke.

Two entry points share one core. `verify(root, ...)` checks a working tree against a
git revision (`HEAD` by default): the profiles run in the workspace itself, the base
in a private export of the revision. `verify_changes(root, changes, ...)` checks
staged changes that are not on disk yet (a proposal's postconditions): the base is
the workspace as it is, and both trees are private copies, so the workspace is never
written. Either way the base run is cached per (tree, profile, program, environment) in
the user's cache directory, never in the workspace.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.evidence import Evidence, RunSide, ToolFailure, Verdict
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.consent import consent
from patchsmith.runtime.gitcmd import git_argv
from patchsmith.runtime.process import run_process
from patchsmith.runtime.progress import report
from patchsmith.runtime.sandbox import SandboxKind, sandbox_kind, sandbox_unavailable
from patchsmith.verify.baseline import cache_key, compare, read_cached, write_cached
from patchsmith.verify.parsers import ParserName
from patchsmith.verify.profiles import Profile, ProfileSet, load_profiles
from patchsmith.verify.report import DEFAULT_TOP, ProfileOutcome, VerifyReport, with_excerpts
from patchsmith.verify.targeted import targeted_tests
from patchsmith.verify.trees import (
    apply_changes,
    copy_tree,
    export_commit,
    git_tree_id,
    tree_digest,
)

__all__ = ["select_profiles", "verify", "verify_changes"]

_GIT_TIMEOUT_S = 60.0

CACHE_FORMAT = "verdicts-1"
"""Part of every base-run cache key: bumped when what a cached run holds changes."""

BaseTree = Callable[[], Path | None]
"""Makes (once) and returns the base tree's directory; `None` when there is none."""


def verify(
    root: str | os.PathLike[str],
    profiles: Sequence[str] = (),
    *,
    base: str | None = "HEAD",
    full: bool = False,
    top: int = DEFAULT_TOP,
    changed_paths: Sequence[str] | None = None,
    profile_set: ProfileSet | None = None,
    trust: bool | None = None,
    in_copy: bool = True,
) -> VerifyReport:
    """Run `profiles` (all the workspace's when empty) on the tree at `root`.

    Each profile also runs on `base` (a git revision; `None` for no base run), cached
    per base tree and profile, and the report lists introduced, fixed and
    pre-existing failures separately. A `targeted` Python test profile first runs
    only the tests that import a changed file (`changed_paths`, else what git says
    changed since `base`), then the whole profile when `full` is true or no test was
    targeted. The profiles are the repository's programs: they run only when it is
    trusted (`trust`: true for this call, `None` asks the trust store; else
    UNTRUSTED_REPOSITORY and nothing runs). With `in_copy` (the default) the profiles
    run in a private copy of the tree, so nothing they write (`__pycache__/`, tool
    caches, a file by absolute path without bwrap) lands in the workspace unnoticed;
    `in_copy=False` runs them in the workspace itself. Never raises for bad input:
    problems are `VerifyReport.errors`.
    """
    workspace = Path(root)
    if not workspace.is_dir():
        return _error(FailureCode.FILE_NOT_FOUND, f"workspace not found: {workspace}")
    real_root = workspace.resolve()
    chosen = select_profiles(real_root, profiles, profile_set)
    if isinstance(chosen, PatchFailure):
        return VerifyReport(errors=(chosen,))
    refused = _consent(real_root, chosen, trust)
    if refused is not None:
        return refused
    tree = git_tree_id(real_root, base) if base is not None else None
    if base is not None and base != "HEAD" and tree is None:
        return VerifyReport(
            errors=(
                PatchFailure(
                    FailureCode.UNKNOWN_REVISION,
                    f"cannot read revision {base!r} with git",
                    hint="pass --base with a commit of this repository, or --no-base",
                ),
            )
        )
    if changed_paths is None and tree is not None and base is not None:
        changed_paths = _git_changed(real_root, base)
    with tempfile.TemporaryDirectory(prefix="patchsmith-verify-") as scratch:
        made: list[Path | None] = []

        def base_tree() -> Path | None:
            if not made:
                dest = Path(scratch) / "base"
                made.append(dest if base and export_commit(real_root, base, dest) else None)
            return made[0]

        changed_tree = copy_tree(real_root, Path(scratch) / "changed") if in_copy else real_root
        outcomes = tuple(
            _verify_one(
                name,
                profile,
                real_root=real_root,
                base_key=tree,
                base_tree=base_tree,
                changed_tree=changed_tree,
                changed_paths=changed_paths,
                full=full,
                top=top,
            )
            for name, profile in chosen
        )
    return VerifyReport(outcomes)


def verify_changes(
    root: str | os.PathLike[str],
    changes: Sequence[FileChange],
    profiles: Sequence[str],
    *,
    full: bool = False,
    top: int = DEFAULT_TOP,
    timeout_s: float | None = None,
    profile_set: ProfileSet | None = None,
    cache: bool = True,
    trust: bool | None = None,
) -> VerifyReport:
    """Run `profiles` on the workspace with `changes` applied, in a private copy.

    The base is the workspace as it is now (keyed by a digest of its files); neither
    run writes to the workspace. With `cache` false the base run is neither read
    from nor written to `.patchsmith/` (nothing at all is written). Nothing runs in an
    untrusted repository (UNTRUSTED_REPOSITORY; `trust` as for `verify`).
    """
    real_root = Path(root).resolve()
    chosen = select_profiles(real_root, profiles, profile_set)
    if isinstance(chosen, PatchFailure):
        return VerifyReport(errors=(chosen,))
    refused = _consent(real_root, chosen, trust)
    if refused is not None:
        return refused
    digest = "files:" + tree_digest(real_root)
    changed_paths = sorted(
        {c.path for c in changes} | {c.old_path for c in changes if c.old_path is not None}
    )
    with tempfile.TemporaryDirectory(prefix="patchsmith-verify-") as scratch:
        made: list[Path] = []

        def base_tree() -> Path:
            if not made:
                made.append(copy_tree(real_root, Path(scratch) / "base"))
            return made[0]

        changed_tree = copy_tree(real_root, Path(scratch) / "changed")
        apply_changes(changed_tree, changes)
        outcomes = tuple(
            _verify_one(
                name,
                profile,
                real_root=real_root,
                base_key=digest,
                base_tree=base_tree,
                changed_tree=changed_tree,
                changed_paths=changed_paths,
                full=full,
                top=top,
                timeout_s=timeout_s,
                cache=cache,
            )
            for name, profile in chosen
        )
    return VerifyReport(outcomes)


def select_profiles(
    root: Path, names: Sequence[str], profile_set: ProfileSet | None = None
) -> list[tuple[str, Profile]] | PatchFailure:
    """The named profiles (every profile when `names` is empty), or why not."""
    loaded = profile_set if profile_set is not None else load_profiles(root)
    if isinstance(loaded, PatchFailure):
        return loaded
    if loaded.require_sandbox and sandbox_kind() is SandboxKind.NONE:
        return sandbox_unavailable("[verify] require_sandbox")
    wanted = list(dict.fromkeys(names)) or sorted(loaded.profiles)
    unknown = [n for n in wanted if n not in loaded.profiles]
    if unknown:
        known = ", ".join(sorted(loaded.profiles)) or "none"
        return PatchFailure(
            FailureCode.UNKNOWN_PROFILE,
            f"unknown verification profile(s): {', '.join(unknown)} (known: {known})",
            hint="`patchsmith verify --list` shows the profiles; define one under [verify.NAME]",
        )
    if not wanted:
        return PatchFailure(
            FailureCode.UNKNOWN_PROFILE,
            "no verification profile: none was detected or configured",
            hint="define one in patchsmith.toml under [verify.NAME] (docs/verify.md)",
        )
    return [(n, loaded.profiles[n]) for n in wanted]


def _consent(
    root: Path, chosen: Sequence[tuple[str, Profile]], trust: bool | None
) -> VerifyReport | None:
    """A report holding UNTRUSTED_REPOSITORY when the repository may not run these profiles."""
    names = ", ".join(name for name, _ in chosen)
    refused = consent(root, trust, what=f"verification profile(s) {names}")
    return None if refused is None else VerifyReport(errors=(refused,))


def _verify_one(
    name: str,
    profile: Profile,
    *,
    real_root: Path,
    base_key: str | None,
    base_tree: BaseTree,
    changed_tree: Path,
    changed_paths: Sequence[str] | None,
    full: bool,
    top: int,
    timeout_s: float | None = None,
    cache: bool = True,
) -> ProfileOutcome:
    from patchsmith.verify.runner import run_profile

    report(f"profile {name}: running")
    runs: list[Evidence] = []
    base_run = _base_run(name, profile, real_root, base_key, base_tree, timeout_s, cache)
    if base_run is not None:
        runs.append(base_run)
    targets: tuple[str, ...] = ()
    if profile.targeted and profile.parser is ParserName.PYTEST and changed_paths:
        targets = _collected_targets(
            base_run, targeted_tests(changed_tree / profile.cwd, _below(changed_paths, profile.cwd))
        )
    changed_runs: list[Evidence] = []
    if targets:
        changed_runs.append(
            run_profile(
                name,
                profile,
                changed_tree,
                RunSide.TARGETED,
                targets=targets,
                timeout_s=timeout_s,
                real_root=real_root,
            )
        )
    if full or not targets:
        changed_runs.append(
            run_profile(
                name,
                profile,
                changed_tree,
                RunSide.CHANGED,
                timeout_s=timeout_s,
                real_root=real_root,
            )
        )
    base_failures = base_run.failures if base_run is not None else ()
    judged: list[Evidence] = []
    for run in changed_runs:
        sorted_out = compare(base_failures, run.failures)
        judged.append(
            replace(
                run,
                introduced=with_excerpts(sorted_out.introduced, changed_tree, top=top),
                fixed=sorted_out.fixed,
            )
        )
    runs.extend(judged)
    last = judged[-1]
    result = compare(base_failures, last.failures)
    introduced = _unique([f for run in judged for f in run.introduced])
    verdict, reason = outcome_verdict(base_run, judged, introduced)
    return ProfileOutcome(
        profile=name,
        kind=profile.kind,
        runs=tuple(runs),
        introduced=introduced,
        # a failure gone from a run that established nothing, or from a test that did
        # not run (only the targeted files did), was not fixed
        fixed=_ran(result.fixed, targets if last.side is RunSide.TARGETED else None)
        if verdict is not Verdict.ERROR
        else (),
        preexisting=result.preexisting,
        base_available=base_run is not None,
        verdict=verdict,
        targeted_only=bool(targets) and not (full or not targets),
        reason=reason,
    )


def outcome_verdict(
    base_run: Evidence | None, changed: Sequence[Evidence], introduced: Sequence[ToolFailure]
) -> tuple[Verdict, str]:
    """One profile's verdict from its base run and its changed runs (docs/verify.md).

    `error` when any run established nothing (base or changed: never a pass, never a
    "fixed"); `failed` when the change introduced failures, or a changed run failed
    where the base passed (or there is no base); `error` again when both sides failed
    with nothing parsable to compare; else `passed`.
    """
    for run in (base_run, *changed):
        if run is not None and run.verdict is Verdict.ERROR:
            return Verdict.ERROR, f"{run.side.value} run: {run.reason or 'no result'}"
    if introduced:
        return Verdict.FAILED, f"{len(introduced)} introduced failure(s)"
    failed = [r for r in changed if r.verdict is Verdict.FAILED]
    if failed and base_run is None:
        return Verdict.FAILED, "the run failed (no base run: every failure counts)"
    if failed and base_run is not None and base_run.verdict is Verdict.PASSED:
        return Verdict.FAILED, "the run failed where the base passed"
    if any(_unparsed(r) for r in failed):
        return (
            Verdict.ERROR,
            "the base and the change both failed with nothing parsable to compare: "
            "what the change did is unknown",
        )
    if failed:
        return Verdict.PASSED, "nothing introduced (the base failed the same way)"
    return Verdict.PASSED, "every run passed"


def _ran(failures: Sequence[ToolFailure], targets: Sequence[str] | None) -> tuple[ToolFailure, ...]:
    """The base failures whose test was in `targets` (all when `targets` is `None`)."""
    if targets is None:
        return tuple(failures)
    stems = [t.removesuffix(".py") for t in targets]
    kept = []
    for failure in failures:
        module = (failure.test_id or "").split("::")[0].replace(".", "/")
        if module and any(module == s or module.startswith(s + "/") for s in stems):
            kept.append(failure)
    return tuple(kept)


def _unparsed(run: Evidence) -> bool:
    from patchsmith.verify.runner import UNPARSED_CODES

    return all(f.code in UNPARSED_CODES for f in run.failures)


def _collected_targets(base_run: Evidence | None, wanted: Sequence[str]) -> tuple[str, ...]:
    """The targeted test files the base run collected: a file the profile's own selection
    leaves out (a slow or perf suite, a deselected folder) is not run on its behalf.
    Without a base run that collected tests there is nothing to pick from: none."""
    if base_run is None or base_run.verdict is Verdict.ERROR:
        return ()
    collected = set(base_run.collected)
    return tuple(t for t in wanted if t in collected)


def _unique(failures: Sequence[ToolFailure]) -> tuple[ToolFailure, ...]:
    """Failures found by both the targeted and the full run, once."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for failure in failures:
        key = failure.identity()
        if key not in seen:
            seen.add(key)
            out.append(failure)
    return tuple(out)


def _base_run(
    name: str,
    profile: Profile,
    real_root: Path,
    base_key: str | None,
    base_tree: BaseTree,
    timeout_s: float | None,
    cache: bool,
) -> Evidence | None:
    from patchsmith.verify.runner import run_profile

    if base_key is None:
        return None
    from patchsmith.verify.toolversion import tool_version

    version = tool_version(
        profile.argv,
        real_root / profile.cwd,
        env_allow=profile.allowed_env(),
        env_set=profile.set_env,
    )
    # runs cached before verdicts existed are not read; a new tool version runs again
    key = cache_key(
        f"{CACHE_FORMAT}:{base_key}", name, profile, root=real_root, tool_version=version
    )
    cached = read_cached(key) if cache else None
    if cached is not None:
        return replace(cached, cached=True)
    tree = base_tree()
    if tree is None:
        return None
    run = run_profile(name, profile, tree, RunSide.BASE, timeout_s=timeout_s, real_root=real_root)
    if cache and run.verdict is not Verdict.ERROR:
        write_cached(key, run)  # a run that established nothing is tried again
    return run


def _below(paths: Sequence[str], cwd: str) -> list[str]:
    if cwd in ("", "."):
        return list(paths)
    prefix = cwd.rstrip("/") + "/"
    return [p[len(prefix) :] for p in paths if p.startswith(prefix)]


def _git_changed(root: Path, base: str) -> list[str]:
    diff = run_process(
        git_argv("diff", "--name-only", "--relative", base, "--", "."),
        cwd=root,
        timeout_s=_GIT_TIMEOUT_S,
    )
    untracked = run_process(
        git_argv("ls-files", "--others", "--exclude-standard"), cwd=root, timeout_s=_GIT_TIMEOUT_S
    )
    names = diff.stdout.splitlines() + untracked.stdout.splitlines()
    return sorted({n.strip() for n in names if n.strip()})


def _error(code: FailureCode, message: str) -> VerifyReport:
    return VerifyReport(errors=(PatchFailure(code, message),))
