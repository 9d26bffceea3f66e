"""`patchsmith.propose`: a `PatchProposal` checked, guarded, applied all or nothing, recorded.

A model may propose; the runtime decides. In order: the proposal is validated;
operations this version cannot execute are refused (NOT_SUPPORTED_YET); a proposal
whose result is already in the workspace is answered `already_applied`; the
preconditions are checked; every operation is staged into one transaction; the
guards (the policy narrowed by the proposal, never loosened) and the expected
postconditions run on the staged changes; then everything is committed, or nothing.

Idempotence: before anything is staged, the store is asked for an applied attempt of
the same `proposal_id` whose recorded after-hashes equal the current hashes of the
files the proposal would leave behind. If there is one, nothing is written and a
lightweight `already_applied` attempt is recorded (no files, no diffs), so the audit
trail shows the retry without a second record of the changes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchsmith.attempt._attempt import (
    Attempt,
    Verdict,
    Verifier,
    file_reports,
    head_commit,
    not_ready,
    open_workspace,
    resolve_policy,
    review_and_commit,
    should_record,
    unsupported_modes,
)
from patchsmith.attempt.conditions import (
    ConditionResult,
    check_postconditions,
    check_preconditions,
    condition_failures,
)
from patchsmith.attempt.direct import stage_write
from patchsmith.attempt.withheld import forbidden_patterns
from patchsmith.engine.model import EngineOptions
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats import parse_edits
from patchsmith.formats.script import Action, EditFormat, EditScript, FileEdit, ParseProblem
from patchsmith.guards import GuardContext
from patchsmith.model.evidence import Evidence
from patchsmith.model.origin import PROPOSAL, CallOrigin
from patchsmith.model.proposal import (
    AstTransformOperation,
    CommandOperation,
    DirectWriteOperation,
    PatchOperation,
    PatchProposal,
    ProposalSource,
    load_proposal,
    strategy_mismatches,
    unsupported_operations,
)
from patchsmith.model.report import ApplyReport, ApplyStatus, ApplyWarning, FileReport
from patchsmith.policy import Policy, StrategyCheck
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.consent import consent
from patchsmith.runtime.intake import stage_script
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import DB_FILE_NAME, AttemptKind, Store
from patchsmith.verify.plan import check_plan, obligations, plan_verifier
from patchsmith.verify.profiles import ProfileSet, load_profiles

__all__ = ["INVALID_PROPOSAL_ID", "propose"]

INVALID_PROPOSAL_ID = "(invalid)"
"""The run and proposal id recorded for a proposal that did not validate."""


def propose(
    proposal: ProposalSource,
    root: str | os.PathLike[str],
    *,
    check: bool = False,
    record: bool | None = None,
    policy: Policy | None = None,
    allow_policy_edit: bool = False,
    verify: bool | None = None,
    trust: bool | None = None,
    allow_unverified: bool = False,
    origin: CallOrigin = PROPOSAL,
) -> ApplyReport:
    """Apply `proposal` (a model, a dict, JSON/YAML text or a file path) to `root`, atomically.

    Refused with nothing written on INVALID_PROPOSAL, NOT_SUPPORTED_YET,
    PRECONDITION_FAILED, any staging failure, a guard of the policy (narrowed by the
    proposal), or POSTCONDITION_FAILED; `already_applied` when an earlier applied
    attempt of the same `proposal_id` left the files exactly as they are now. With
    `check`, nothing is written. A change to the workspace's policy is refused
    (PROTECTED_PATH) unless the caller passes `allow_policy_edit`; a proposal cannot
    ask for it itself.

    The repository's programs (the verification plan, or the one `unplanned = "auto"`
    makes, and the `compiles`/`tests_pass` profiles of an `ast_transform` recipe) run
    when `verify` is true, or when it is `None` and this is not a check: a dry run
    runs none of them unless asked. A plan that may not run refuses an apply
    (INSUFFICIENT_EVIDENCE) and is a note on a check. `command` operations run as the
    proposal asks. Either way only in a trusted repository (`trust`: true trusts it
    for this call, `None` asks the trust store; else UNTRUSTED_REPOSITORY).
    An expected TESTS_PASS or COMPILES that no profile establishes is refused
    (POSTCONDITION_UNVERIFIED; a profile that ran to no result: VERIFICATION_ERROR)
    unless the caller passes `allow_unverified`, which lets it through with a note.
    Never raises for bad input.
    """
    workspace = open_workspace(root, check=check)
    if isinstance(workspace, ApplyReport):
        return workspace
    rules = resolve_policy(workspace.root, policy, allow_policy_edit=allow_policy_edit)
    recording = should_record(record, rules)
    loaded = load_proposal(proposal)
    if not isinstance(loaded, PatchFailure) and any(
        isinstance(op, AstTransformOperation) and op.dry_run for op in loaded.operations
    ):
        check = True  # an ast_transform's dry run makes the whole proposal a check
    programs = verify if verify is not None else not check
    if isinstance(loaded, PatchFailure):
        attempt = Attempt(
            workspace.real_root,
            AttemptKind.PROPOSE,
            recording,
            proposal_id=INVALID_PROPOSAL_ID,
            run_id=INVALID_PROPOSAL_ID,
            input_text=_source_text(proposal),
            origin=origin,
        )
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=(loaded,), check=check))
    attempt = Attempt(
        workspace.real_root,
        AttemptKind.PROPOSE,
        recording,
        proposal_id=loaded.proposal_id,
        run_id=loaded.run_id,
        attempt_no=loaded.attempt_no,
        proposal_json=loaded.model_dump_json(),
        base_commit=head_commit(workspace.real_root),
        forbidden=forbidden_patterns(rules, *loaded.forbidden_files),
        origin=origin,
    )
    scripts = _parse_patches(loaded)
    early = _early_refusal(workspace, rules, loaded, scripts)
    if early is not None:
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=early, check=check))
    profile_set = load_profiles(workspace.root)
    plan_problems = (
        (profile_set,) if isinstance(profile_set, PatchFailure) else check_plan(loaded, profile_set)
    )
    if plan_problems:
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=plan_problems, check=check))
    assert isinstance(rules, Policy) and isinstance(profile_set, ProfileSet)
    # The plan the runtime makes itself runs only where the repository is trusted; else
    # what it would prove is not established (a note for hand edits, refused for the
    # rest), and the refusal says why. A proposal's own plan meets `consent` when it runs.
    distrust = (
        consent(workspace.real_root, trust, what="the workspace's verification profiles")
        if programs and loaded.verification_plan is None
        else None
    )
    why_not = (
        "the repository is not trusted (`patchsmith trust PATH`, or --trust)"
        if distrust is not None
        else "this call runs no repository program unless --verify is given"
    )
    owed = obligations(
        loaded,
        profile_set,
        allow_unverified=allow_unverified,
        runs=programs and distrust is None,
        why_not=why_not,
    )
    if distrust is not None and owed.refusals:
        owed = replace(owed, refusals=(*owed.refusals, distrust))
    notes = (*rules.loosening_attempts(loaded), *owed.notes)
    if check and not programs and owed.refusals:
        # A dry run that runs nothing writes nothing and claims nothing: what an apply
        # would be refused for until verified is said, not refused.
        said = tuple(f"an apply would be refused: {f.message}" for f in owed.refusals)
        owed = replace(owed, refusals=(), notes=(*owed.notes, *said))
        notes = (*notes, *said)
    earlier = _applied_before(workspace, loaded, scripts)
    if earlier is not None:
        note = f"already applied by attempt {earlier}; nothing was written"
        report = ApplyReport(ApplyStatus.ALREADY_APPLIED, check=check, notes=(*notes, note))
        return attempt.finish(report)
    if owed.refusals:
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=owed.refusals, check=check))
    pre = tuple(check_preconditions(loaded, workspace.root, policy=rules))
    template = ApplyReport(ApplyStatus.APPLIED, preconditions=pre, notes=notes, check=check)
    pre_failures = tuple(condition_failures(pre))
    if pre_failures:
        return attempt.finish(_refused(template, errors=pre_failures))
    with Transaction(workspace) as transaction:
        staged = _stage(
            workspace, transaction, loaded, scripts, rules, programs=programs, trust=trust
        )
        template = _with_files(
            template, staged.files, staged.notes, staged.warnings, staged.evidence
        )
        if staged.failures:
            return attempt.finish(
                _refused(template, errors=staged.failures), transaction.changes, transaction.diff()
            )
        if not transaction.changes and staged.modes_in_place:
            note = "mode already set: " + ", ".join(staged.modes_in_place)
            already = replace(template, status=ApplyStatus.ALREADY_APPLIED)
            return attempt.finish(replace(already, notes=(*already.notes, note)))
        if not transaction.changes:
            failure = PatchFailure(
                FailureCode.NO_CHANGE,
                "the operations leave every file as it is",
                hint="nothing to apply; check that the change is not already in place",
            )
            return attempt.finish(_refused(template, errors=(failure,)))
        mismatch = _strategy_mismatch(loaded, transaction, staged.recipe_matches, rules)
        if mismatch is not None and rules.strategy_check is StrategyCheck.REFUSE:
            return attempt.finish(
                _refused(template, errors=(mismatch,)), transaction.changes, transaction.diff()
            )
        if mismatch is not None:
            template = replace(template, notes=(*template.notes, mismatch.message))
        ctx = GuardContext.for_proposal(rules, loaded, workspace.root)

        def postcheck(changes: Sequence[FileChange]) -> list[ConditionResult]:
            return check_postconditions(loaded, changes, ctx)

        implicit = owed.plan if loaded.verification_plan is None else None
        planned = (
            loaded.model_copy(update={"verification_plan": implicit})
            if implicit is not None
            else loaded
        )
        verifier: Verifier | None = None
        if planned.verification_plan is not None and programs:
            verifier = plan_verifier(
                planned,
                workspace.real_root,
                profile_set,
                cache=recording,
                trust=trust,
                allow_unverified=allow_unverified,
                implicit=implicit is not None,
            )
        elif planned.verification_plan is not None:
            names = ", ".join(planned.verification_plan.profile_names())
            if check:
                # Not run is never passed: the postconditions stay not_checked. A plan the
                # proposal itself asks for refuses an apply; the workspace's own
                # (`unplanned = "auto"`) is then what "no profile reaches it" is: a note.
                why = "a dry run" if check else "this call"
                note = (
                    f"not verified: the profiles ({names}) were not run; {why} runs no "
                    "repository program unless --verify is given"
                )
                template = replace(template, notes=(*template.notes, note))
            else:
                verifier = _not_run(names)
        return review_and_commit(
            attempt,
            transaction,
            ctx,
            template,
            check=check,
            postcheck=postcheck,
            verifier=verifier,
            expected_sha256=staged.expected,
        )


def _not_run(names: str) -> Verifier:
    """A verifier refusing the change: its plan was asked not to run (`verify=False`)."""

    def run(_changes: Sequence[FileChange]) -> Verdict:
        failure = PatchFailure(
            FailureCode.INSUFFICIENT_EVIDENCE,
            f"the verification plan ({names}) was not run: this call runs no repository "
            "program (fleet run without --verify, or verify=False)",
            hint="pass --verify to run the plan, in a repository you trust",
            rule="verification_plan",
        )
        return Verdict(failures=(failure,))

    return run


def _refused(template: ApplyReport, *, errors: tuple[PatchFailure, ...]) -> ApplyReport:
    return ApplyReport(
        ApplyStatus.REFUSED,
        template.files,
        errors,
        check=template.check,
        preconditions=template.preconditions,
        notes=template.notes,
        warnings=template.warnings,
        evidence=template.evidence,
    )


def _with_files(
    template: ApplyReport,
    files: tuple[FileReport, ...],
    notes: tuple[str, ...] = (),
    warnings: tuple[ApplyWarning, ...] = (),
    evidence: tuple[Evidence, ...] = (),
) -> ApplyReport:
    return ApplyReport(
        template.status,
        files,
        check=template.check,
        preconditions=template.preconditions,
        notes=(*template.notes, *notes),
        warnings=(*template.warnings, *warnings),
        evidence=(*template.evidence, *evidence),
    )


def _source_text(source: ProposalSource) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, os.PathLike):
        return os.fspath(source)
    return repr(source)


def _early_refusal(
    workspace: Workspace,
    rules: Policy | PatchFailure,
    proposal: PatchProposal,
    scripts: EditScript,
) -> tuple[PatchFailure, ...] | None:
    blocked = not_ready(workspace, rules)
    if blocked:
        return blocked
    mismatched = tuple(strategy_mismatches(proposal))
    if mismatched:
        return mismatched
    unsupported = (*unsupported_operations(proposal), *unsupported_modes(scripts))
    return unsupported or None


def _parse_patches(proposal: PatchProposal) -> EditScript:
    """Every patch operation parsed and joined, in order, into one script."""
    edits: list[FileEdit] = []
    problems: list[ParseProblem] = []
    for operation in proposal.operations:
        if isinstance(operation, PatchOperation):
            script = parse_edits(operation.text, operation.format)
            edits.extend(script.edits)
            problems.extend(script.problems)
    return EditScript(EditFormat.AUTO, tuple(edits), tuple(problems))


@dataclass(frozen=True)
class _Staged:
    files: tuple[FileReport, ...]
    failures: tuple[PatchFailure, ...]
    expected: dict[str, str]
    modes_in_place: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    warnings: tuple[ApplyWarning, ...] = ()
    """Placement and tolerance warnings of the patch operations, as `apply` reports them."""
    evidence: tuple[Evidence, ...] = ()
    """Each command profile or recipe verification that ran (kept with the attempt)."""
    recipe_matches: int = 0
    """Places the proposal's recipes changed: how often its pattern repeats."""


def _strategy_mismatch(
    proposal: PatchProposal, transaction: Transaction, recipe_matches: int, rules: Policy
) -> PatchFailure | None:
    """STRATEGY_MISMATCH when the selector's table does not accept the declared strategy
    for the staged change (its files, size, recipe and command); `None` when it does."""
    if rules.strategy_check is StrategyCheck.OFF:
        return None
    from patchsmith.pipeline.selector import ChangeFacts, select_strategy, strategy_check

    recipes = [op.recipe for op in proposal.operations if isinstance(op, AstTransformOperation)]
    commands = [op.profile for op in proposal.operations if isinstance(op, CommandOperation)]
    facts = ChangeFacts(
        files=tuple(sorted({c.path for c in transaction.changes})),
        changed_lines=changed_line_count(transaction.diff()),
        occurrences=recipe_matches if recipes else 1,
        recipe=recipes[0] if recipes else None,
        command=commands[0] if commands else None,
    )
    return strategy_check(proposal.strategy, select_strategy(facts))


def changed_line_count(diff: str) -> int:
    """Added plus removed lines of a git-format diff (headers not counted)."""
    return sum(
        1
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))
    )


def _stage(
    workspace: Workspace,
    transaction: Transaction,
    proposal: PatchProposal,
    script: EditScript,
    rules: Policy,
    *,
    programs: bool,
    trust: bool | None,
) -> _Staged:
    # Patch operations are located together (one file may be edited by several), then
    # direct writes; a file touched by both is refused as CONFLICTING_EDITS. Commands
    # run last, on a copy with all of that applied (a lockfile follows its manifest).
    files: list[FileReport] = []
    failures: list[PatchFailure] = []
    expected: dict[str, str] = {}
    modes_in_place: tuple[str, ...] = ()
    recipe_matches = 0
    warnings: tuple[ApplyWarning, ...] = ()
    if script.edits or script.problems:
        plan = stage_script(
            script,
            workspace,
            transaction,
            options=EngineOptions.default(),
            size_limit=rules.max_file_bytes if rules.guard_enabled("file_size") else None,
        )
        files.extend(file_reports(plan))
        failures.extend(plan.failures)
        modes_in_place = plan.modes_in_place
        warnings = plan.warnings
    evidence: list[Evidence] = []
    for index, operation in enumerate(proposal.operations):
        if isinstance(operation, AstTransformOperation):
            recipe_files, recipe_failures, recipe_evidence = _stage_recipe(
                workspace,
                transaction,
                operation,
                rules.tightened_by(proposal),
                programs=programs,
                trust=trust,
            )
            files.extend(recipe_files)
            evidence.extend(recipe_evidence)
            recipe_matches += sum(f.hunks_total for f in recipe_files)
            failures.extend(_numbered(index, f) for f in recipe_failures)
            continue
        if not isinstance(operation, DirectWriteOperation):
            continue
        written = stage_write(
            workspace,
            transaction,
            operation.path,
            operation.content,
            operation.expected_sha256,
            reason=operation.reason,
            allow_create=operation.allow_create,
            allow_delete=operation.allow_delete,
        )
        files.append(written.file)
        if written.failure is not None:
            failures.append(_numbered(index, written.failure))
        if written.expected is not None:
            expected[written.expected[0]] = written.expected[1]
    commands = [
        (i, op) for i, op in enumerate(proposal.operations) if isinstance(op, CommandOperation)
    ]
    if failures or not commands:
        return _Staged(
            tuple(files),
            tuple(failures),
            expected,
            modes_in_place,
            (),
            warnings,
            tuple(evidence),
            recipe_matches,
        )
    from patchsmith.commands import stage_commands  # runs subprocesses: loaded only when used

    ran = stage_commands(
        workspace.real_root,
        transaction,
        commands,
        policy=rules,
        forbidden=proposal.forbidden_files,
        trust=trust,
    )
    return _Staged(
        (*files, *ran.files),
        ran.failures,
        expected,
        modes_in_place,
        ran.notes,
        warnings,
        (*evidence, *ran.evidence),
        recipe_matches,
    )


def _numbered(index: int, failure: PatchFailure) -> PatchFailure:
    return PatchFailure(
        failure.code,
        f"operations[{index}]: {failure.message}",
        failure.file,
        failure.hunk,
        failure.hint,
        failure.excerpt,
        failure.current_sha256,
        failure.rule,
    )


def _stage_recipe(
    workspace: Workspace,
    transaction: Transaction,
    operation: AstTransformOperation,
    rules: Policy,
    *,
    programs: bool,
    trust: bool | None,
) -> tuple[list[FileReport], list[PatchFailure], list[Evidence]]:
    """Plan the recipe over its scope and stage its changes into the proposal's transaction."""
    from patchsmith.codemod.registry import find_recipe
    from patchsmith.codemod.runner import not_run_failures, plan_recipe, stage_plan

    entry = find_recipe(operation.recipe, workspace.root)
    if isinstance(entry, PatchFailure):
        return [], [entry], []
    recipe = entry.recipe
    if operation.language is not None and operation.language != recipe.language.value:
        mismatch = PatchFailure(
            FailureCode.INVALID_PROPOSAL,
            f"recipe {recipe.recipe_id!r} is for {recipe.language.value}, not {operation.language}",
            hint="drop `language` or name the recipe's own",
        )
        return [], [mismatch], []
    plan = plan_recipe(
        recipe,
        workspace.root,
        paths=(*operation.scope, *operation.paths),
        policy=rules,
        programs=programs,
        trust=trust,
    )
    if not programs:
        plan.errors.extend(not_run_failures(plan))
    if plan.errors:
        return [], list(plan.errors), plan.evidence
    staged = stage_plan(plan, workspace, transaction)
    reports = [
        FileReport(path, Action.UPDATE, n, n)
        for path, n in sorted(plan.matches.items())
        if path in plan.changed
    ]
    return reports, staged, plan.evidence


def _applied_before(
    workspace: Workspace, proposal: PatchProposal, script: EditScript
) -> str | None:
    """The id of an applied attempt of this proposal whose results are the files as they are now."""
    database = workspace.real_root / STATE_DIR_NAME / DB_FILE_NAME
    if not database.is_file():
        return None
    paths = _result_paths(workspace, proposal, script)
    if paths == []:
        return None
    try:
        with Store.shared(database.parent) as store:
            if paths is None:
                # A path is inferred from content: the earlier attempt's record names it.
                found = store.find_still_applied(
                    proposal.proposal_id, lambda path: _sha256_of(workspace, path)
                )
            else:
                hashes = {path: _sha256_of(workspace, path) for path in paths}
                found = store.find_applied(proposal.proposal_id, hashes)
    except PatchRefused:
        return None  # an unreadable store cannot vouch for anything; apply as usual
    return found.id if found is not None else None


def _result_paths(
    workspace: Workspace, proposal: PatchProposal, script: EditScript
) -> list[str] | None:
    """The canonical path of every file the proposal leaves behind, `None` if one is unknown."""
    if any(isinstance(op, AstTransformOperation | CommandOperation) for op in proposal.operations):
        return None  # what a recipe or a command changes is known only once it has run
    wanted = [edit.new_path if edit.action is Action.MOVE else edit.path for edit in script.edits]
    wanted += [op.path for op in proposal.operations if isinstance(op, DirectWriteOperation)]
    paths = []
    for path in wanted:
        relative = workspace.resolve(path) if path else None
        if relative is None or isinstance(relative, PatchFailure):
            return None
        paths.append(workspace.canonical(relative, follow_final=True))
    return sorted(set(paths))


def _sha256_of(workspace: Workspace, path: str) -> str | None:
    try:
        return hashlib.sha256(Path(workspace.disk_path(path)).read_bytes()).hexdigest()
    except OSError:
        return None
