"""`patchsmith.apply`: model output in, one all-or-nothing workspace transaction out."""

from __future__ import annotations

import os

from patchsmith.engine.model import EngineOptions
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats import parse_edits
from patchsmith.formats.script import EditFormat
from patchsmith.report import ApplyReport, ApplyStatus, FileReport
from patchsmith.runtime.intake import StagePlan, stage_script
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

__all__ = ["apply"]


def apply(
    model_output: str,
    root: str | os.PathLike[str],
    *,
    format: EditFormat | str = EditFormat.AUTO,
    check: bool = False,
    partial: bool = False,
    options: EngineOptions | None = None,
) -> ApplyReport:
    """Apply every edit in `model_output` to the files under `root`, atomically.

    Nothing is written unless every edit located (or, with `partial`, at least
    one did); with `check`, nothing is written at all and the report carries
    the diff that would be. Never raises for bad input: a refusal is a report
    whose `status` is `refused` and whose `errors` say what to fix.
    """
    try:
        workspace = Workspace(root)
    except ValueError as exc:
        failure = PatchFailure(FailureCode.FILE_NOT_FOUND, str(exc), hint="Pass an existing directory.")
        return ApplyReport(ApplyStatus.REFUSED, errors=(failure,), check=check)
    if workspace.recovery_failure is not None:
        return ApplyReport(ApplyStatus.REFUSED, errors=(workspace.recovery_failure,), check=check)
    script = parse_edits(model_output, format)
    with Transaction(workspace) as transaction:
        plan = stage_script(
            script,
            workspace,
            transaction,
            options=options or EngineOptions.default(),
            partial=partial,
        )
        files = _file_reports(plan)
        changes = transaction.changes
        if plan.failures and (not partial or not changes):
            return ApplyReport(ApplyStatus.REFUSED, files, plan.failures, check=check)
        if not changes:
            failure = PatchFailure(
                FailureCode.NO_CHANGE,
                "the edits leave every file as it is",
                hint="Nothing to apply; check that the edit is not already in place.",
            )
            return ApplyReport(ApplyStatus.REFUSED, files, (failure,), check=check)
        diff = transaction.diff()
        status = ApplyStatus.PARTIAL if plan.failures else ApplyStatus.APPLIED
        if check:
            return ApplyReport(status, files, plan.failures, diff=diff, check=True)
        commit_failure = transaction.commit()
        if commit_failure is not None:
            return ApplyReport(ApplyStatus.REFUSED, files, (*plan.failures, commit_failure))
        return ApplyReport(status, files, plan.failures, diff=diff)


def _file_reports(plan: StagePlan) -> tuple[FileReport, ...]:
    return tuple(
        FileReport(f.path, f.action, f.hunks_applied, f.hunks_total, f.new_path) for f in plan.files
    )
