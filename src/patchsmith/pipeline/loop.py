"""`run_task`: the budgeted repair loop, from a task to applied (and verified) changes.

For each milestone of the task, in order: the selector chooses a strategy; the
proposal source is asked for a reply (text in any edit format, or a proposal); the
reply goes through `propose` like any other proposal (guards, the verification plan
on a private copy, all or nothing, recorded under the run's id); a refusal becomes
the bounded repair message (`ApplyReport.feedback`) the source sees next turn. The
run ends when every milestone applied, or before the turn that would overspend the
budget. A reply identical to one already refused in the same milestone is not
applied again: it is answered with the remembered refusal and still counts. After a
refusal that named one of several look-alike regions, a reply whose edit lands in
another of them is refused too (`pipeline.lookalike`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from patchsmith.attempt._attempt import Attempt, resolve_policy, should_record
from patchsmith.attempt.propose import propose
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.model.feedback import MIN_FEEDBACK_CHARS
from patchsmith.model.origin import PROPOSAL, TEXT_REPLY
from patchsmith.model.proposal import (
    PatchOperation,
    PatchProposal,
    Risk,
    VerificationPlan,
    load_proposal,
)
from patchsmith.model.report import ApplyReport, ApplyStatus
from patchsmith.pipeline.budget import Budget, diff_budget
from patchsmith.pipeline.lookalike import Target, strayed, targets_of
from patchsmith.pipeline.selector import Selection, select_strategy
from patchsmith.pipeline.source import ProposalSource, Reply, SourceError, Turn
from patchsmith.pipeline.task import Milestone, Task, facts_of, load_task
from patchsmith.policy import Policy
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.store import AttemptKind, RunTurnRecord, Store
from patchsmith.verify.plan import check_plan
from patchsmith.verify.profiles import EvidenceLevel, ProfileSet, ProfileSource, load_profiles

__all__ = ["MilestoneResult", "RunResult", "RunStatus", "run_task"]

_MAX_FILE_CHARS = 64_000
"""Larger files are not put in a turn: the source reads them itself."""


class RunStatus(StrEnum):
    """How a run ended."""

    SUCCEEDED = "succeeded"
    """Every milestone applied (and passed its verification)."""
    EXHAUSTED = "budget_exhausted"
    """A milestone was still refused when the budget ran out."""
    SOURCE_FAILED = "source_failed"
    """The proposal source could not answer (`SourceError`)."""
    REFUSED = "refused"
    """The run could not start: an invalid task, policy or verification setup."""


@dataclass(frozen=True)
class MilestoneResult:
    """One milestone: the strategy chosen for it, and whether and by which attempt it applied."""

    id: str
    objective: str
    selection: Selection
    done: bool = False
    attempts: tuple[str | None, ...] = ()
    """The attempt id of each turn of this milestone (a duplicate names the first refusal)."""

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "objective": self.objective,
            "done": self.done,
            "selection": self.selection.to_json(),
            "attempts": list(self.attempts),
        }


@dataclass(frozen=True)
class RunResult:
    """What a run did: its status, each milestone, each turn, and what it spent."""

    run_id: str
    status: RunStatus
    milestones: tuple[MilestoneResult, ...] = ()
    turns: tuple[RunTurnRecord, ...] = ()
    reports: tuple[ApplyReport, ...] = ()
    """The report of every attempt applied or refused (duplicates made none), in order."""
    budget: Budget = field(default_factory=Budget)
    """The budget as spent (after the task's risk tightened it)."""
    attempts: int = 0
    feedback_chars: int = 0
    seconds: float = 0.0
    stop_reason: str = ""
    errors: tuple[PatchFailure, ...] = ()
    """Why the run could not start, or the last refusal when it ran out of budget."""

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.SUCCEEDED

    def to_json(self) -> dict[str, object]:
        """The object `patchsmith run --json` prints."""
        return {
            "run_id": self.run_id,
            "status": self.status.value,
            "stop_reason": self.stop_reason,
            "milestones": [m.to_json() for m in self.milestones],
            "turns": [t.to_json() for t in self.turns],
            "spent": {
                "attempts": self.attempts,
                "feedback_chars": self.feedback_chars,
                "seconds": round(self.seconds, 3),
            },
            "budget": self.budget.to_json(),
            "errors": [e.to_json() for e in self.errors],
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_run_id() -> str:
    """A random run id: `r-` and 16 hex digits."""
    return "r-" + secrets.token_hex(8)


def run_task(
    task: Task | Mapping[str, object] | str | os.PathLike[str],
    source: ProposalSource,
    budget: Budget | None = None,
    *,
    root: str | os.PathLike[str] = ".",
    policy: Policy | None = None,
    record: bool | None = None,
    clock: Callable[[], float] = time.monotonic,
    trust: bool | None = None,
) -> RunResult:
    """Make the change `task` describes in `root`, asking `source` until it applies or the
    budget is spent. Never raises for bad input: an invalid task, policy or verification
    setup ends the run `refused` before the source is asked anything.

    `clock` (seconds, monotonic) measures the wall-time budget. The milestones'
    verification runs the repository's profiles only where it is trusted (`trust` true
    for this run, `None` asks the trust store; else UNTRUSTED_REPOSITORY).
    """
    started = clock()
    run_id = new_run_id()
    spent = Budget() if budget is None else budget
    loaded = load_task(task)
    if isinstance(loaded, PatchFailure):
        return RunResult(
            run_id, RunStatus.REFUSED, budget=spent, errors=(loaded,), stop_reason="invalid task"
        )
    spent = spent.for_risk(loaded.risk)
    workspace = Path(root)
    if not workspace.is_dir():
        failure = PatchFailure(
            FailureCode.FILE_NOT_FOUND,
            f"workspace root {os.fspath(root)!r} is not a directory",
            hint="pass an existing directory as root",
        )
        return RunResult(
            run_id, RunStatus.REFUSED, budget=spent, errors=(failure,), stop_reason="no workspace"
        )
    rules = resolve_policy(workspace.resolve(), policy)
    profiles = load_profiles(workspace)
    for problem in (rules, profiles):
        if isinstance(problem, PatchFailure):
            return RunResult(
                run_id,
                RunStatus.REFUSED,
                budget=spent,
                errors=(problem,),
                stop_reason="invalid configuration",
            )
    assert isinstance(rules, Policy) and isinstance(profiles, ProfileSet)
    loop = _Loop(
        run_id=run_id,
        task=loaded,
        source=source,
        budget=spent,
        root=workspace.resolve(),
        policy=rules,
        profiles=profiles,
        recording=should_record(record, rules),
        clock=clock,
        started=started,
        trust=trust,
    )
    return loop.run()


@dataclass
class _Loop:
    run_id: str
    task: Task
    source: ProposalSource
    budget: Budget
    root: Path
    policy: Policy
    profiles: ProfileSet
    recording: bool
    clock: Callable[[], float]
    started: float
    trust: bool | None = None
    attempts: int = 0
    feedback_chars: int = 0
    turns: list[RunTurnRecord] = field(default_factory=list)
    reports: list[ApplyReport] = field(default_factory=list)
    milestones: list[MilestoneResult] = field(default_factory=list)
    store_problems: list[PatchFailure] = field(default_factory=list)

    # -- the run -----------------------------------------------------------------------------

    def run(self) -> RunResult:
        plan = self.task.plan()
        self._store(
            lambda s: s.record_run_task(
                self.run_id,
                _now(),
                self.task.model_dump_json(),
                json.dumps(self.budget.to_json()),
            )
        )
        status, reason = RunStatus.SUCCEEDED, "every milestone applied"
        errors: tuple[PatchFailure, ...] = ()
        for index, milestone in enumerate(plan):
            status, reason, errors = self._milestone(index, milestone, len(plan))
            if status is not RunStatus.SUCCEEDED:
                break
        result = RunResult(
            run_id=self.run_id,
            status=status,
            milestones=tuple(self.milestones),
            turns=tuple(self.turns),
            reports=tuple(self.reports),
            budget=self.budget,
            attempts=self.attempts,
            feedback_chars=self.feedback_chars,
            seconds=self.clock() - self.started,
            stop_reason=reason,
            errors=(*errors, *self.store_problems),
        )
        self._store(
            lambda s: s.record_run_result(
                self.run_id, _now(), status.value, json.dumps(result.to_json())
            )
        )
        return replace(result, errors=(*errors, *self.store_problems))

    def _milestone(
        self, index: int, milestone: Milestone, count: int
    ) -> tuple[RunStatus, str, tuple[PatchFailure, ...]]:
        selection = select_strategy(facts_of(milestone))
        template = self._template(milestone, selection)
        result = MilestoneResult(milestone.id, milestone.objective, selection)
        self.milestones.append(result)
        problems = self._evidence_problems(template)
        if problems:
            return RunStatus.REFUSED, "verification cannot give the evidence needed", problems
        feedback: list[str] = []
        memory: dict[str, tuple[str | None, int, str, tuple[PatchFailure, ...]]] = {}
        last_errors: tuple[PatchFailure, ...] = ()
        targets: list[Target] = []
        while True:
            stop = self._out_of_budget(bool(feedback))
            if stop is not None:
                return RunStatus.EXHAUSTED, stop, last_errors
            turn = Turn(
                run_id=self.run_id,
                task=self.task,
                milestone=milestone,
                milestone_index=index,
                attempt_no=self.attempts + 1,
                selection=selection,
                feedback=tuple(feedback),
                milestones=count,
                files=self._file_texts(milestone),
                failures=last_errors if feedback else (),
            )
            try:
                reply = self.source(turn)
            except SourceError as exc:
                failure = PatchFailure(
                    FailureCode.SOURCE_FAILED,
                    f"the proposal source failed: {exc}",
                    hint="check the source (its script, command or client); the run "
                    "stopped before this attempt",
                )
                return RunStatus.SOURCE_FAILED, str(exc), (failure,)
            self.attempts += 1
            proposal = self._proposal(reply, template)
            fingerprint = _fingerprint(reply if isinstance(proposal, PatchFailure) else proposal)
            seen = memory.get(fingerprint)
            if seen is not None:
                first_id, first_no, message, last_errors = seen
                text = self._bounded(
                    f"This reply is the same as attempt {first_no}, which was refused; it was "
                    "not applied again and nothing changed since. Send a different reply.\n\n"
                    + message
                )
                self._turn(milestone, selection, first_id, "duplicate", fingerprint, None, text)
                feedback.append(text)
                self._set_attempts(first_id)
                continue
            if targets and not isinstance(proposal, PatchFailure):
                proposal = self._stays_put(proposal, targets)
            report = self._attempt(proposal, reply)
            self.reports.append(report)
            strategy = None if isinstance(proposal, PatchFailure) else proposal.strategy.value
            if report.ok:
                self._turn(
                    milestone,
                    selection,
                    report.attempt_id,
                    report.status.value,
                    fingerprint,
                    strategy,
                    "",
                )
                self._set_attempts(report.attempt_id, done=True)
                return RunStatus.SUCCEEDED, "every milestone applied", ()
            last_errors = report.errors
            targets += targets_of(report.errors)
            message = self._bounded(report.feedback(max_chars=self._feedback_limit()))
            memory[fingerprint] = (report.attempt_id, self.attempts, message, report.errors)
            self._turn(
                milestone,
                selection,
                report.attempt_id,
                report.status.value,
                fingerprint,
                strategy,
                message,
            )
            self._set_attempts(report.attempt_id)
            feedback.append(message)

    # -- budget -----------------------------------------------------------------------------

    def _out_of_budget(self, needs_feedback: bool) -> str | None:
        if self.attempts >= self.budget.max_attempts:
            return f"attempts: {self.attempts} of {self.budget.max_attempts} used"
        elapsed = self.clock() - self.started
        if self.budget.max_seconds is not None and elapsed >= self.budget.max_seconds:
            return f"wall time: {elapsed:.1f}s of {self.budget.max_seconds:g}s used"
        if needs_feedback and self._feedback_limit() < MIN_FEEDBACK_CHARS:
            return (
                f"feedback: {self.feedback_chars} of {self.budget.max_feedback_chars} "
                "characters used"
            )
        return None

    def _feedback_limit(self) -> int:
        if self.budget.max_feedback_chars is None:
            return self.budget.feedback_chars
        left = self.budget.max_feedback_chars - self.feedback_chars
        return max(0, min(self.budget.feedback_chars, left))

    def _bounded(self, text: str) -> str:
        limit = max(self._feedback_limit(), 0)
        if len(text) > limit:
            text = text[: max(limit - 3, 0)] + "..." if limit else ""
        self.feedback_chars += len(text)
        return text

    # -- proposals --------------------------------------------------------------------------

    def _template(self, milestone: Milestone, selection: Selection) -> PatchProposal:
        """The proposal every text reply of this milestone becomes (its operation aside)."""
        names = self._profile_names(milestone)
        return PatchProposal(
            proposal_id=f"{self.run_id}-{milestone.id}",
            run_id=self.run_id,
            attempt_no=1,
            strategy=selection.strategy,
            objective=milestone.objective,
            expected_files=tuple(milestone.files or ()),
            forbidden_files=self.task.forbidden_files,
            operations=(PatchOperation(text="(the reply)"),),
            expected_postconditions=diff_budget(
                self.task.risk, tuple(milestone.files or ()), milestone.changed_lines
            ),
            verification_plan=VerificationPlan(profiles=names) if names else None,
            risk=self.task.risk,
        )

    def _profile_names(self, milestone: Milestone) -> tuple[str, ...]:
        if milestone.verify is not None:
            return milestone.verify
        return tuple(
            sorted(
                name
                for name, where in self.profiles.sources.items()
                if where is not ProfileSource.BUILTIN
            )
        )

    def _evidence_problems(self, template: PatchProposal) -> tuple[PatchFailure, ...]:
        problems = check_plan(template, self.profiles)
        if problems:
            return problems
        if template.risk is Risk.HIGH and template.verification_plan is None:
            required = self.profiles.required_level(template.strategy, high_risk=True)
            if required > EvidenceLevel.SYNTAX:
                return (
                    PatchFailure(
                        FailureCode.INSUFFICIENT_EVIDENCE,
                        f"a HIGH risk run needs {required.label} evidence and names no "
                        "verification profile",
                        hint="set the task's `verify` to profiles that give it "
                        "(`patchsmith verify --list`), or lower its risk",
                        rule="verification_plan",
                    ),
                )
        return ()

    def _proposal(self, reply: Reply, template: PatchProposal) -> PatchProposal | PatchFailure:
        number = self.attempts
        if isinstance(reply, str):
            if not reply.strip():
                return PatchFailure(
                    FailureCode.MALFORMED_PATCH,
                    "the reply is empty",
                    hint="reply with the edit, in the format the task asks for",
                )
            return template.model_copy(
                update={
                    "proposal_id": f"{template.proposal_id}-{number}",
                    "attempt_no": number,
                    "operations": (PatchOperation(text=reply, format=self.task.format),),
                }
            )
        if isinstance(reply, PatchProposal):
            given: PatchProposal | PatchFailure = reply
        elif isinstance(reply, Mapping):
            defaults = {
                ("proposal_id", "proposalId"): f"{template.proposal_id}-{number}",
                ("strategy", "strategy"): template.strategy.value,
                ("objective", "objective"): template.objective,
            }
            data: dict[str, object] = {
                snake: value
                for (snake, camel), value in defaults.items()
                if snake not in reply and camel not in reply
            }
            data.update(reply)
            for key in ("runId", "attemptNo"):
                data.pop(key, None)
            data.update(run_id=self.run_id, attempt_no=number)
            given = load_proposal(data)
        else:
            return PatchFailure(
                FailureCode.INVALID_PROPOSAL,
                f"the source returned a {type(reply).__name__}; a reply is text, a "
                "PatchProposal or a proposal as a dict",
            )
        if isinstance(given, PatchFailure):
            return given
        return _adopted(given, template, number)

    def _stays_put(
        self, proposal: PatchProposal, targets: list[Target]
    ) -> PatchProposal | PatchFailure:
        """`proposal`, or the refusal of an edit that moved to another look-alike."""
        check = propose(proposal, self.root, check=True, record=False, policy=self.policy)
        failure = strayed(check, targets, self.root)
        return proposal if failure is None else failure

    def _attempt(self, proposal: PatchProposal | PatchFailure, reply: Reply) -> ApplyReport:
        if not isinstance(proposal, PatchFailure):
            return propose(
                proposal,
                self.root,
                record=self.recording,
                policy=self.policy,
                trust=self.trust,
                # A text reply is made a proposal here; its feedback speaks of the reply.
                origin=TEXT_REPLY if isinstance(reply, str) else PROPOSAL,
            )
        attempt = Attempt(
            self.root,
            AttemptKind.PROPOSE,
            self.recording,
            proposal_id=f"{self.run_id}-invalid-{self.attempts}",
            run_id=self.run_id,
            attempt_no=self.attempts,
            input_text=reply if isinstance(reply, str) else json.dumps(_jsonable(reply)),
            origin=TEXT_REPLY if isinstance(reply, str) else PROPOSAL,
        )
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=(proposal,)))

    def _file_texts(self, milestone: Milestone) -> dict[str, str]:
        texts: dict[str, str] = {}
        for name in milestone.files or ():
            if any(ch in name for ch in "*?[]!"):
                continue
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root) or not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if len(text) <= _MAX_FILE_CHARS:
                texts[name] = text
        return texts

    # -- records ----------------------------------------------------------------------------

    def _turn(
        self,
        milestone: Milestone,
        selection: Selection,
        attempt_id: str | None,
        outcome: str,
        fingerprint: str,
        strategy: str | None,
        feedback: str,
    ) -> None:
        record = RunTurnRecord(
            seq=len(self.turns),
            created_at=_now(),
            milestone=milestone.id,
            attempt_no=self.attempts,
            attempt_id=attempt_id,
            outcome=outcome,
            fingerprint=fingerprint,
            strategy=strategy,
            selection_json=json.dumps(selection.to_json()),
            feedback=feedback,
        )
        self.turns.append(record)
        self._store(lambda s: s.record_run_turn(self.run_id, record))

    def _set_attempts(self, attempt_id: str | None, *, done: bool = False) -> None:
        last = self.milestones[-1]
        self.milestones[-1] = replace(
            last, attempts=(*last.attempts, attempt_id), done=done or last.done
        )

    def _store(self, write: Callable[[Store], None]) -> None:
        if not self.recording or self.store_problems:
            return
        try:
            # The connection `apply` records each attempt through: a run's turns, task and
            # result are written without opening SQLite again (see `Store.shared`).
            with Store.shared(self.root / STATE_DIR_NAME) as store:
                write(store)
        except PatchRefused as refusal:
            self.store_problems.extend(
                replace(f, message=f"the run was not recorded: {f.message}")
                for f in refusal.failures
            )


def _adopted(given: PatchProposal, template: PatchProposal, number: int) -> PatchProposal:
    """A source's own proposal, placed in the run: its id and number, the task's risk (if
    higher), the milestone's files, diff budget and verification plan where it sets none."""
    order = [Risk.LOW, Risk.MEDIUM, Risk.HIGH]
    risk = max(given.risk, template.risk, key=order.index)
    return given.model_copy(
        update={
            "run_id": template.run_id,
            "attempt_no": number,
            "risk": risk,
            "expected_files": given.expected_files or template.expected_files,
            "forbidden_files": tuple(
                dict.fromkeys((*template.forbidden_files, *given.forbidden_files))
            ),
            "expected_postconditions": (
                *given.expected_postconditions,
                *template.expected_postconditions,
            ),
            "verification_plan": given.verification_plan or template.verification_plan,
        }
    )


def _jsonable(value: object) -> object:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _fingerprint(value: Reply | PatchProposal) -> str:
    """The same reply, the same fingerprint: the operations and strategy of a proposal
    (not its ids or number), the text of a reply, the JSON of anything else."""
    if isinstance(value, PatchProposal):
        data: object = {
            "strategy": value.strategy.value,
            "operations": [op.model_dump(mode="json") for op in value.operations],
        }
    elif isinstance(value, str):
        data = value
    else:
        data = _jsonable(dict(value) if isinstance(value, Mapping) else value)
    text = json.dumps(data, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
