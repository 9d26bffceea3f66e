"""`patchsmith.apply`: model output in, one guarded all-or-nothing workspace transaction out."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from patchsmith.engine.model import EngineOptions
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats import parse_edits
from patchsmith.formats.script import EditFormat
from patchsmith.model.origin import TEXT_REPLY, CallOrigin
from patchsmith.model.report import ApplyReport, ApplyStatus, FileReport
from patchsmith.runtime.content import sha256_of
from patchsmith.runtime.intake import stage_script
from patchsmith.runtime.paths import WORKSPACE_PREFIX
from patchsmith.runtime.transaction import Transaction

if TYPE_CHECKING:
    from patchsmith.policy import Policy

__all__ = ["apply"]


def apply(
    model_output: str | bytes,
    root: str | os.PathLike[str],
    *,
    format: EditFormat | str = EditFormat.AUTO,
    check: bool = False,
    partial: bool = False,
    options: EngineOptions | None = None,
    record: bool | None = None,
    policy: Policy | None = None,
    full_rewrite: bool = False,
    allow_policy_edit: bool = False,
    strict: bool = False,
    origin: CallOrigin = TEXT_REPLY,
    workspace_prefix: str | None = WORKSPACE_PREFIX,
) -> ApplyReport:
    """Apply every edit in `model_output` to the files under `root`, atomically.

    Nothing is written unless every edit located (or, with `partial`, at least
    one did) and every guard of the policy passed; with `check`, nothing is
    written at all and the report carries the diff that would be. `policy`
    defaults to the workspace's (`patchsmith.toml` / `pyproject.toml`); `record`
    (default: the policy's `record`) keeps the attempt in `.patchsmith/`. A change to
    the policy itself is refused (PROTECTED_PATH) unless `allow_policy_edit`. Never
    raises for bad input: a refusal is a report whose `status` is `refused` and
    whose `errors` say what to fix. No reply deletes code it did not show:
    placeholder lines are merged by their anchors or refused, and a whole file that
    stops early or drops most of a large file is refused unless `full_rewrite`
    says the files are being rewritten.
    `strict` refuses any edit that locates only with a
    tolerance beyond whitespace (`EngineOptions.strict()`; ignored when `options` is
    given). Each file's `placements` say where every edit landed and by which tolerance;
    `warnings` name what to double-check.
    A path may be absolute under `workspace_prefix` (`/workspace/src/app.py`; `None`: no
    prefix) or under the root, wherever the edit names it. `origin` says what kind of call
    the text came in (a text reply by default, `CallOrigin.tool_call("str_replace")` for
    one editor call): the hints name the right next call for it.
    """
    if isinstance(model_output, bytes):
        # Bytes from a subprocess or a socket: undecodable ones survive as escapes.
        model_output = model_output.decode("utf-8", "surrogateescape")
    if not isinstance(model_output, str):
        raise TypeError(f"model_output must be str or bytes, not {type(model_output).__name__}")
    # Deferred: the guards load pydantic and the store loads SQLite, and `import
    # patchsmith` must stay cheap.
    from patchsmith.attempt._attempt import (
        applied_before,
        file_reports,
        open_attempt,
        outside_policy_file,
        review_and_commit,
        unsupported_modes,
    )
    from patchsmith.guards import GuardContext
    from patchsmith.store import AttemptKind

    digest = hashlib.sha256(model_output.encode("utf-8", "surrogatepass")).hexdigest()
    opened = open_attempt(
        root,
        check=check,
        policy=policy,
        allow_policy_edit=allow_policy_edit,
        record=record,
        kind=AttemptKind.APPLY,
        proposal_id=f"sha256:{digest[:16]}",
        input_text=model_output,
        with_base_commit=True,
        origin=origin,
    )
    if isinstance(opened, ApplyReport):
        return opened
    workspace, rules, unreadable, attempt = opened
    script = parse_edits(model_output, format)
    special = unsupported_modes(script)
    if special:
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=special, check=check))
    earlier = applied_before(workspace, attempt.proposal_id, script)
    if earlier is not None:
        note = f"already applied by attempt {earlier}; nothing was written"
        return attempt.finish(ApplyReport(ApplyStatus.ALREADY_APPLIED, check=check, notes=(note,)))
    with Transaction(workspace) as transaction:
        plan = stage_script(
            script,
            workspace,
            transaction,
            options=options or (EngineOptions.strict() if strict else EngineOptions.default()),
            partial=partial,
            size_limit=rules.max_file_bytes if rules.guard_enabled("file_size") else None,
            origin=origin,
            workspace_prefix=workspace_prefix,
        )
        files = file_reports(plan)
        if unreadable is not None and outside_policy_file(
            unreadable, [p for f in files for p in (f.path, f.new_path) if p is not None]
        ):
            # The workspace's policy cannot be read: only a change to that file alone
            # goes on (judged by the defaults); anything else is refused as before.
            return attempt.finish(
                ApplyReport(ApplyStatus.REFUSED, errors=(unreadable,), check=check)
            )
        changes = transaction.changes
        if plan.failures and (not partial or not changes):
            refused = ApplyReport(
                ApplyStatus.REFUSED, files, plan.failures, check=check, warnings=plan.warnings
            )
            return attempt.finish(refused, changes, transaction.diff())
        if not changes and plan.modes_in_place and not plan.failures:
            note = "mode already set: " + ", ".join(plan.modes_in_place)
            report = ApplyReport(ApplyStatus.ALREADY_APPLIED, files, check=check, notes=(note,))
            return attempt.finish(report)
        if not changes:
            failure = PatchFailure(
                FailureCode.NO_CHANGE,
                "the edits leave every file as it is",
                hint="Nothing to apply; check that the edit is not already in place.",
            )
            return attempt.finish(ApplyReport(ApplyStatus.REFUSED, files, (failure,), check=check))
        status = ApplyStatus.PARTIAL if plan.failures else ApplyStatus.APPLIED
        report = review_and_commit(
            attempt,
            transaction,
            GuardContext(rules, root=workspace.root, full_rewrite=full_rewrite),
            ApplyReport(status, files, plan.failures, warnings=plan.warnings),
            check=check,
        )
        blamed = _blame_edits(report.errors, files)
        if blamed != report.errors:
            report = replace(report, errors=blamed)
        if report.status is ApplyStatus.PARTIAL and not check:
            # The failures must describe the files as the partial write left them.
            written = {
                c.path: after for c in changes if (after := sha256_of(c.new_content)) is not None
            }
            errors = tuple(
                replace(e, current_sha256=written[e.file]) if e.file in written else e
                for e in report.errors
            )
            report = replace(report, errors=errors)
        return report


_ERROR_LINE = re.compile(r"\bline (\d+)")


def _blame_edits(
    errors: tuple[PatchFailure, ...], files: tuple[FileReport, ...]
) -> tuple[PatchFailure, ...]:
    """A SYNTAX_ERROR names the edit that landed nearest above the error's line."""
    out = []
    for error in errors:
        found = _ERROR_LINE.search(error.message)
        if error.code is FailureCode.SYNTAX_ERROR and error.hunk is None and found:
            line = int(found.group(1))
            placements = [p for f in files if f.path == error.file for p in f.placements]
            above = [p for p in placements if p.line <= line]
            blamed = max(above, key=lambda p: p.line) if above else None
            if blamed is not None:
                error = replace(
                    error,
                    hunk=blamed.hunk,
                    message=f"{error.message} (edit {blamed.hunk + 1} landed at line "
                    f"{blamed.line}, by {blamed.tolerance})",
                )
        out.append(error)
    return tuple(out)
