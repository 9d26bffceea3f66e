"""Running a recipe: plan in memory, check, then stage, guard, commit and record like any patch.

`plan_recipe` selects the files, checks the preconditions, runs the operations and
import changes in memory, re-runs them on their own output (idempotency), leaves out
files a guard would refuse (forbidden, generated, lock files, outside the write scope)
with the reason, and checks the postconditions. `run_recipe` stages the result in a
`Transaction` and hands it to the same guards, commit and audit record as `apply`;
without `apply=True` nothing is written (a dry run).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from patchsmith.codemod.checks import (
    RecipeCheck,
    check_failures,
    postconditions,
    preconditions,
)
from patchsmith.codemod.files import select_files
from patchsmith.codemod.recipe import Recipe, RerunProducesNoDiff
from patchsmith.codemod.registry import RecipeEntry, find_recipe
from patchsmith.codemod.report import RecipeFile, RecipeReport, RecipeStatus, SkippedFile
from patchsmith.codemod.transform import SeenMatch, SyntaxFallback, transform
from patchsmith.codemod.workset import WorkSet, scratch_dir
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.model.evidence import Evidence
from patchsmith.runtime.change import FileChange

if TYPE_CHECKING:
    from concurrent.futures import Future

    from patchsmith.codemod.checks import ProfileRunner
    from patchsmith.policy import Policy
    from patchsmith.runtime.transaction import Transaction
    from patchsmith.runtime.workspace import Workspace
    from patchsmith.verify.profiles import ProfileSet
    from patchsmith.verify.report import VerifyReport

__all__ = ["Progress", "RecipePlan", "RecipeSource", "plan_recipe", "run_recipe", "stage_plan"]

Progress = Callable[[str, int, int], None]
"""Called with (step description, steps done, steps in all) as a run advances."""

RecipeSource = str | os.PathLike[str] | Recipe

# Guards decided per file before staging, so that one generated or forbidden file is
# left out (and reported) instead of refusing the whole run. All guards run again on
# the staged change.
_PATH_GUARDS = ("write_scope", "forbidden_paths", "generated_file", "lockfile")


@dataclass
class RecipePlan:
    """A recipe's changes computed in memory, with everything learnt on the way."""

    recipe: Recipe
    files_scanned: int = 0
    changed: dict[str, bytes] = field(default_factory=dict)
    originals: dict[str, bytes] = field(default_factory=dict)
    matches: dict[str, int] = field(default_factory=dict)
    skipped: list[SkippedFile] = field(default_factory=list)
    seen: list[SeenMatch] = field(default_factory=list)
    by_syntax: list[SyntaxFallback] = field(default_factory=list)
    """Files a type-aware operation matched by syntax, with the reason."""
    checks: list[RecipeCheck] = field(default_factory=list)
    errors: list[PatchFailure] = field(default_factory=list)
    idempotent: bool | None = None
    evidence: list[Evidence] = field(default_factory=list)
    """Verification profiles run for `compiles` / `tests_pass` (kept with the attempt)."""
    pending_rerun: Future[PatchFailure | None] | None = None
    """The idempotency re-run, when `plan_recipe` left it running (see `settle`)."""

    def settle(self) -> None:
        """Wait for an idempotency re-run left running; its refusal joins `errors`."""
        if self.pending_rerun is None:
            return
        again = self.pending_rerun.result()
        self.pending_rerun = None
        self.idempotent = again is None
        if again is not None:
            self.errors.append(again)


def _no_progress(_step: str, _done: int, _total: int) -> None:
    return None


def plan_recipe(
    recipe: Recipe,
    root: Path,
    *,
    paths: Iterable[str] = (),
    policy: Policy | None = None,
    progress: Progress | None = None,
    rerun: bool = True,
    cache: bool = True,
    rerun_in_background: bool = False,
    programs: bool = True,
    trust: bool | None = None,
) -> RecipePlan:
    """The recipe's changes to the files under `root` (narrowed to `paths`), computed in memory.

    With `rerun` (and the recipe's `idempotency.rerun_produces_no_diff`), the recipe is run
    again on its own output and the plan refused (NOT_IDEMPOTENT) if that changes anything.
    `compiles` / `tests_pass` run verification profiles (the workspace's for the recipe's
    language, else its default build: `codemod.build`) on a private copy with the changes
    applied (`cache` false: the base run is not cached either).
    With `rerun_in_background`, the re-run is left running on a thread (most of it is
    ast-grep's own process) while the caller stages the changes: call `plan.settle()`
    before committing anything. Those profiles are the repository's programs: with
    `programs` false they do not run and their conditions are `error` (not run); else
    they run only in a trusted repository (`trust`, see `patchsmith.runtime.consent`).
    """
    step = progress or _no_progress
    total = 4 + len(recipe.operations)
    plan = RecipePlan(recipe)
    step("selecting files", 0, total)
    files, _ = select_files(root, recipe, paths)
    plan.files_scanned = len(files)
    work = WorkSet(root, files)
    pre = preconditions(recipe, root, work)
    if isinstance(pre, PatchFailure):
        plan.errors.append(pre)
        return plan
    plan.checks.extend(pre)
    failed = check_failures(pre)
    if failed:
        plan.errors.extend(failed)
        return plan
    step("running operations", 1, total)
    result = transform(recipe, work)
    plan.seen.extend(result.seen)
    plan.by_syntax.extend(dict.fromkeys(result.by_syntax))
    plan.skipped.extend(SkippedFile(p, r) for p, r in sorted(work.unreadable.items()))
    if result.errors:
        plan.errors.extend(result.errors)
        return plan
    changed = _tidied(recipe, work, plan)
    if plan.errors:
        return plan
    plan.matches = {p: n for p, n in result.matches.items() if n > 0}
    step("checking idempotency", 1 + len(recipe.operations), total)
    # listed as a postcondition, the re-run is part of every run's proof, dry runs included
    rerun = rerun or any(isinstance(p, RerunProducesNoDiff) for p in recipe.postconditions)
    if rerun and recipe.idempotency.rerun_produces_no_diff and changed:
        if rerun_in_background:
            plan.pending_rerun = _in_background(recipe, changed, root)
        else:
            again = _rerun(recipe, changed, root)
            plan.idempotent = not isinstance(again, PatchFailure)
            if isinstance(again, PatchFailure):
                plan.errors.append(again)
                return plan
    step("checking guards", 2 + len(recipe.operations), total)
    if policy is not None:
        kept = _guarded(changed, work, policy, root, plan.skipped)
        left_out = [p for p in changed if p not in kept]
        if left_out and _links_files(recipe):
            # a rename applied to some files and not others would break the code
            plan.errors.append(
                PatchFailure(
                    FailureCode.FORBIDDEN_PATH,
                    f"recipe {recipe.recipe_id!r} renames across files, and a guard refuses "
                    f"{len(left_out)} of them: {', '.join(left_out[:5])}",
                    file=left_out[0],
                    hint="a partial rename would break the code; allow those files, or "
                    "narrow the recipe's scope to leave the definition and its users together",
                    rule="recipe_scope",
                )
            )
            return plan
        changed = kept
    plan.changed = changed
    plan.originals = {p: work.original(p) for p in changed}
    step("checking postconditions", 3 + len(recipe.operations), total)
    if changed and recipe.postconditions:
        plan.settle()  # a build or a test run costs more than waiting for the re-run
        if plan.errors:
            return plan
        profiles, run_profiles = _profile_runner(plan, root, cache=cache, trust=trust)
        if isinstance(profiles, PatchFailure):
            plan.errors.append(profiles)
            return plan
        with scratch_dir("patchsmith-recipe-") as tmp:
            after = WorkSet.from_texts(changed, Path(tmp))
            post = postconditions(
                recipe,
                changed,
                after,
                root=root,
                scope=files,
                profiles=profiles,
                run_profiles=run_profiles,
                not_run=None if programs else NOT_ASKED,
                rerun_clean=plan.idempotent,
                originals=plan.originals,
            )
        if isinstance(post, PatchFailure):
            plan.errors.append(post)
            return plan
        plan.checks.extend(post)
        plan.errors.extend(check_failures(post))
    step("done", total, total)
    return plan


def _tidied(recipe: Recipe, work: WorkSet, plan: RecipePlan) -> dict[str, bytes]:
    """The changed files past the formatting guard (`codemod.layout`): repaired where safe,
    a refused one left out and listed under `skipped` with the reason."""
    from patchsmith.codemod.layout import tidy
    from patchsmith.codemod.recipe import AstGrepRule

    # lines outside the matches are checked where only rules edit: the other backends
    # rewrite tokens of their own choosing (imports, renames), not ranges of matches
    rules_only = all(isinstance(op, AstGrepRule) for op in recipe.operations) and not (
        recipe.imports.add or recipe.imports.remove
    )
    kept: dict[str, bytes] = {}
    for path, data in work.changed.items():
        spans = work.spans.get(path) if rules_only else None
        new, refusal = tidy(path, work.original(path), data, spans)
        refusal = work.refusals.get(path) or refusal
        if refusal is None:
            kept[path] = new
        else:
            plan.skipped.append(SkippedFile(path, refusal))
    refused = [p for p in work.changed if p not in kept]
    if refused and _links_files(recipe):
        plan.errors.append(
            PatchFailure(
                FailureCode.POSTCONDITION_FAILED,
                f"recipe {recipe.recipe_id!r} renames across files, and the formatting guard "
                f"refuses {len(refused)} of them: {', '.join(refused[:5])}",
                file=refused[0],
                hint="a partial rename would break the code; see `skipped` for the reasons",
                rule="formatting",
            )
        )
    return kept


NOT_ASKED = "this call runs no repository program (a dry run or fleet run without --verify)"
"""Why a `compiles`/`tests_pass` postcondition was not run."""


def not_run_failures(plan: RecipePlan) -> list[PatchFailure]:
    """One POSTCONDITION_FAILED per postcondition left unchecked: an apply needs its proof."""
    return [
        PatchFailure(
            FailureCode.POSTCONDITION_FAILED,
            f"{c.condition} {c.evidence}",
            hint="pass --verify to run the profiles that decide it, in a repository you trust",
            rule="not_run",
        )
        for c in plan.checks
        if c.not_run
    ]


def _profile_runner(
    plan: RecipePlan, root: Path, *, cache: bool, trust: bool | None
) -> tuple[ProfileSet | PatchFailure | None, ProfileRunner | None]:
    """The workspace's profiles and a runner over the plan's changes (only when a condition
    could use them: loading profiles reads the config, running them costs real time)."""
    from patchsmith.codemod.recipe import CompilesCheck, TestsPassCheck

    if not any(isinstance(p, CompilesCheck | TestsPassCheck) for p in plan.recipe.postconditions):
        return None, None
    from patchsmith.verify.profiles import load_profiles
    from patchsmith.verify.workflow import verify_changes

    profiles = load_profiles(root)
    if isinstance(profiles, PatchFailure):
        return profiles, None
    changes = [_change(p, plan.originals[p], data) for p, data in plan.changed.items()]

    def run(names: Sequence[str], profile_set: ProfileSet) -> VerifyReport:
        report = verify_changes(
            root, changes, names, profile_set=profile_set, cache=cache, trust=trust
        )
        plan.evidence.extend(report.evidence)
        untrusted = [e for e in report.errors if e.code is FailureCode.UNTRUSTED_REPOSITORY]
        plan.errors.extend(e for e in untrusted if e not in plan.errors)
        return report

    return profiles, run


def _links_files(recipe: Recipe) -> bool:
    """Whether the recipe's changes to one file depend on its changes to others (a rename)."""
    from patchsmith.codemod.recipe import RenameSymbol

    return any(isinstance(op, RenameSymbol) for op in recipe.operations)


def _in_background(
    recipe: Recipe, changed: dict[str, bytes], sources: Path
) -> Future[PatchFailure | None]:
    """`_rerun(recipe, changed)` on a thread of its own; the future holds its answer.

    The answer is given as soon as the scan is read; removing the scratch copy (a
    thousand files for a thousand changes) goes on after it, off the caller's path.
    """
    import threading
    from concurrent.futures import Future

    answer: Future[PatchFailure | None] = Future()
    # The scratch copy is written here, not on the thread: a thread making a thousand
    # small system calls while this one computes waits for the GIL after each of them.
    scratch = scratch_dir("patchsmith-rerun-")
    try:
        work = WorkSet.from_texts(changed, Path(scratch.name))
        work.sources = sources
    except BaseException:
        scratch.cleanup()
        raise

    def run() -> None:
        with scratch:
            try:
                answer.set_result(_rerun_on(recipe, work))
            except BaseException as exc:  # handed to whoever waits; never lost on this thread
                answer.set_exception(exc)

    try:
        threading.Thread(target=run, name="patchsmith-rerun").start()
    except BaseException:
        scratch.cleanup()
        raise
    return answer


def _rerun(recipe: Recipe, changed: dict[str, bytes], sources: Path) -> PatchFailure | None:
    """NOT_IDEMPOTENT when running the recipe again on its output changes anything.

    `sources` is the workspace: a type-aware backend reads the rest of the project there.
    """
    with scratch_dir("patchsmith-rerun-") as tmp:
        work = WorkSet.from_texts(changed, Path(tmp))
        work.sources = sources
        return _rerun_on(recipe, work)


def _rerun_on(recipe: Recipe, work: WorkSet) -> PatchFailure | None:
    """`_rerun`, on a work set holding the recipe's output."""
    result = transform(recipe, work)
    if result.errors:
        return result.errors[0]
    moved = list(work.changed)
    if not moved:
        return None
    return PatchFailure(
        FailureCode.NOT_IDEMPOTENT,
        f"running recipe {recipe.recipe_id!r} again on its own output changes "
        f"{len(moved)} file(s): {', '.join(moved[:5])}",
        file=moved[0],
        hint="make every fix produce text its rule no longer matches; nothing was written",
    )


def _guarded(
    changed: dict[str, bytes],
    work: WorkSet,
    policy: Policy,
    root: Path,
    skipped: list[SkippedFile],
) -> dict[str, bytes]:
    from patchsmith.guards import GuardContext, guard_named

    ctx = GuardContext(policy, root=root)
    guards = [
        cls()
        for name in _PATH_GUARDS
        if (cls := guard_named(name)) is not None and policy.guard_enabled(name)
    ]
    kept: dict[str, bytes] = {}
    for path, data in changed.items():
        change = _change(path, work.original(path), data)
        refusals = [f for guard in guards for f in guard.check([change], ctx)]
        if refusals:
            skipped.append(SkippedFile(path, f"{refusals[0].code.value}: {refusals[0].message}"))
        else:
            kept[path] = data
    return kept


def _change(path: str, old: bytes, new: bytes) -> FileChange:
    return FileChange(path, Action.UPDATE, path, old, new, old.decode("utf-8"), new.decode("utf-8"))


def stage_plan(
    plan: RecipePlan, workspace: Workspace, transaction: Transaction
) -> list[PatchFailure]:
    """Stage every planned change; STALE_FILE when a file changed since the plan read it."""
    failures: list[PatchFailure] = []
    reason = f"recipe {plan.recipe.recipe_id}: {plan.recipe.summary}"
    for path, data in plan.changed.items():
        staged = transaction.update(path, data.decode("utf-8"), reason=reason)
        if staged is not None:
            failures.append(staged)
            continue
        # Staged under its canonical path: the same as `path` unless a link is on the way
        # (a path holding no link cannot be another file's canonical path).
        change = transaction.staged(path) or transaction.staged(
            workspace.canonical(path, follow_final=True)
        )
        assert change is not None
        if change.old_bytes != plan.originals[path]:
            failures.append(
                PatchFailure(
                    FailureCode.STALE_FILE,
                    f"{path} changed while the recipe ran",
                    file=path,
                    hint="run the recipe again",
                )
            )
    return failures


def _file_results(plan: RecipePlan, changes: Iterable[FileChange]) -> tuple[RecipeFile, ...]:
    from patchsmith.runtime.gitdiff import render_git_diff

    return tuple(
        RecipeFile(c.path, plan.matches.get(c.path, 0), render_git_diff([c])) for c in changes
    )


def _split_diff(
    diff: str, changes: Sequence[FileChange], plan: RecipePlan
) -> tuple[RecipeFile, ...]:
    """Per-file diffs cut from a whole git diff (each file's part starts `diff --git `).

    A diff's content lines start with a space, `+`, `-` or a backslash, so a line starting
    `diff --git ` is always a file header; rendering each file again would cost as much.
    """
    starts = [0] if diff.startswith("diff --git ") else []
    position = diff.find("\ndiff --git ")
    while position >= 0:
        starts.append(position + 1)
        position = diff.find("\ndiff --git ", position + 1)
    if len(starts) != len(changes):
        return _file_results(plan, changes)
    parts = [diff[a:b] for a, b in zip(starts, [*starts[1:], len(diff)], strict=True)]
    return tuple(
        RecipeFile(c.path, plan.matches.get(c.path, 0), part)
        for c, part in zip(changes, parts, strict=True)
    )


def run_recipe(
    recipe: RecipeSource,
    root: str | os.PathLike[str],
    *,
    apply: bool = False,
    paths: Iterable[str] = (),
    policy: Policy | None = None,
    record: bool | None = None,
    recipe_dirs: Iterable[str | os.PathLike[str]] = (),
    progress: Progress | None = None,
    verify: bool | None = None,
    trust: bool | None = None,
) -> RecipeReport:
    """Run `recipe` (an id, a recipe file, or a `Recipe`) over the workspace at `root`.

    A dry run unless `apply`: the report carries every change as a diff and nothing is
    written. With `apply`, the changes are committed all or nothing through the
    workspace's guards, after the idempotency re-run and the postconditions passed.
    `paths` narrows the recipe's scope (gitignore-style patterns). Recorded in the
    audit store like every attempt (`patchsmith log`). Never raises for bad input.

    The `compiles`/`tests_pass` postconditions run the repository's verification
    profiles when `verify` is true, or when it is `None` and this is an apply: a dry
    run runs no repository program unless asked, and reports such a condition as
    `error` (not run); an apply that may not run them is refused. They run only in a
    trusted repository (`trust`: true trusts it for this call, `None` asks the trust
    store; else UNTRUSTED_REPOSITORY).
    """
    from patchsmith.attempt._attempt import (
        Attempt,
        head_commit,
        not_ready,
        open_workspace,
        resolve_policy,
        review_and_commit,
        should_record,
    )
    from patchsmith.guards import GuardContext
    from patchsmith.model.report import ApplyReport, ApplyStatus
    from patchsmith.runtime.transaction import Transaction
    from patchsmith.store import AttemptKind

    started = time.perf_counter()
    dry_run = not apply
    workspace = open_workspace(root, check=dry_run)
    if isinstance(workspace, ApplyReport):
        return RecipeReport(_name(recipe), RecipeStatus.REFUSED, dry_run, errors=workspace.errors)
    entry = _resolve(recipe, workspace.root, recipe_dirs)
    if isinstance(entry, PatchFailure):
        return RecipeReport(_name(recipe), RecipeStatus.REFUSED, dry_run, errors=(entry,))
    rules = resolve_policy(workspace.root, policy)
    attempt = Attempt(
        state_root=workspace.real_root,
        kind=AttemptKind.RECIPE,
        record=should_record(record, rules),
        proposal_id=f"recipe:{entry.recipe.recipe_id}",
        input_text=entry.text,
        base_commit=head_commit(workspace.real_root),
    )

    def report(plan: RecipePlan, status: RecipeStatus, **more: object) -> RecipeReport:
        return RecipeReport(
            entry.recipe.recipe_id,
            status,
            dry_run,
            files_scanned=plan.files_scanned,
            files_matched=len(plan.matches),
            skipped=tuple(plan.skipped),
            unchanged_matches=tuple(plan.seen),
            matched_by_syntax=tuple(plan.by_syntax),
            checks=tuple(plan.checks),
            idempotent=plan.idempotent,
            evidence=tuple(plan.evidence),
            seconds=time.perf_counter() - started,
            **more,  # type: ignore[arg-type]
        )

    blocked = not_ready(workspace, rules)
    if blocked or isinstance(rules, PatchFailure):
        finished = attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=blocked, check=dry_run))
        return report(RecipePlan(entry.recipe), RecipeStatus.REFUSED, errors=finished.errors)
    plan = plan_recipe(
        entry.recipe,
        workspace.root,
        paths=paths,
        policy=rules,
        progress=progress,
        rerun=not dry_run,
        cache=attempt.record,
        rerun_in_background=not dry_run,
        programs=verify if verify is not None else not dry_run,
        trust=trust,
    )
    if not dry_run:
        plan.errors.extend(not_run_failures(plan))
    if plan.errors:
        plan.settle()
    evidence = tuple(plan.evidence)
    if plan.errors:
        finished = attempt.finish(
            ApplyReport(
                ApplyStatus.REFUSED, errors=tuple(plan.errors), check=dry_run, evidence=evidence
            )
        )
        return report(
            plan, RecipeStatus.REFUSED, errors=finished.errors, attempt_id=finished.attempt_id
        )
    if not plan.changed:
        plan.settle()  # the guards left every change out: nothing waits for the re-run
        return report(plan, RecipeStatus.NO_CHANGE)
    if dry_run:
        # The preview: the changes as diffs, past the per-file guards, recorded as checked.
        # Staging, every guard and the idempotency re-run are the apply's work.
        changes = [_change(p, plan.originals[p], data) for p, data in plan.changed.items()]
        files = _file_results(plan, changes)
        diff = "".join(f.diff for f in files)
        preview = ApplyReport(ApplyStatus.APPLIED, check=True, diff=diff, evidence=evidence)
        finished = attempt.finish(preview, changes, diff)
        return report(
            plan,
            RecipeStatus.DRY_RUN,
            files=files,
            errors=finished.errors,
            attempt_id=finished.attempt_id,
        )
    with Transaction(workspace) as transaction:
        staged = stage_plan(plan, workspace, transaction)
        if staged:
            plan.settle()
        if plan.errors:
            finished = attempt.finish(
                ApplyReport(
                    ApplyStatus.REFUSED,
                    errors=tuple(plan.errors),
                    check=dry_run,
                    evidence=evidence,
                )
            )
            return report(
                plan, RecipeStatus.REFUSED, errors=finished.errors, attempt_id=finished.attempt_id
            )
        if staged:
            files = _file_results(plan, transaction.changes)
            finished = attempt.finish(
                ApplyReport(
                    ApplyStatus.REFUSED, errors=tuple(staged), check=dry_run, evidence=evidence
                ),
                transaction.changes,
                transaction.diff(),
            )
            return report(plan, RecipeStatus.REFUSED, files=files, errors=finished.errors)
        # The re-run is waited for after the guards, so that its ast-grep process works
        # while the staged changes are guarded.
        done = review_and_commit(
            attempt,
            transaction,
            GuardContext(rules, root=workspace.root),
            ApplyReport(ApplyStatus.APPLIED, evidence=evidence),
            check=False,
            awaited=lambda: _settled_errors(plan),
        )
        if not done.ok:
            return report(
                plan,
                RecipeStatus.REFUSED,
                files=_file_results(plan, transaction.changes),
                errors=done.errors,
                attempt_id=done.attempt_id,
            )
        files = _split_diff(done.diff, transaction.changes, plan)
    return report(
        plan, RecipeStatus.APPLIED, files=files, errors=done.errors, attempt_id=done.attempt_id
    )


def _settled_errors(plan: RecipePlan) -> list[PatchFailure]:
    """The plan's errors once its idempotency re-run (if left running) has answered."""
    plan.settle()
    return plan.errors


def _name(recipe: RecipeSource) -> str:
    return recipe.recipe_id if isinstance(recipe, Recipe) else os.fspath(recipe)


def _resolve(
    recipe: RecipeSource, root: Path, dirs: Iterable[str | os.PathLike[str]]
) -> RecipeEntry | PatchFailure:
    if isinstance(recipe, Recipe):
        import yaml

        text = yaml.safe_dump(recipe.model_dump(mode="json", by_alias=True), sort_keys=False)
        return RecipeEntry(recipe, Path("<memory>"), text, builtin=False)
    return find_recipe(recipe, root, dirs)
