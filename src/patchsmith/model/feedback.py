"""The model-facing repair message: what was written, what failed, what to resend, bounded.

A repair loop that resends only the failed edit after an all-or-nothing refusal
loses every edit that did locate (nothing was written), so the message always
opens with what happened to the workspace and the hints say what a retry must
contain. It reads the report through the small protocols below, never its module:
`patchsmith.model.report` imports this one, and not the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Protocol

from patchsmith.errors import PatchFailure
from patchsmith.formats.script import Action
from patchsmith.model.origin import TEXT_REPLY, CallFlavor, CallOrigin

__all__ = ["DEFAULT_FEEDBACK_CHARS", "MIN_FEEDBACK_CHARS", "render_feedback", "settle_hint"]

DEFAULT_FEEDBACK_CHARS = 4000
"""About a thousand tokens: room for a few failures with their excerpts."""
MIN_FEEDBACK_CHARS = 200


class FileLike(Protocol):
    """What feedback reads of one file's outcome (`patchsmith.model.report.FileReport`)."""

    @property
    def path(self) -> str: ...
    @property
    def new_path(self) -> str | None: ...
    @property
    def action(self) -> Action: ...
    @property
    def written(self) -> bool: ...
    @property
    def hunks_total(self) -> int: ...
    @property
    def hunks_located(self) -> int: ...


class WarningLike(Protocol):
    """What feedback reads of a warning (`patchsmith.model.report.ApplyWarning`)."""

    @property
    def code(self) -> StrEnum: ...
    @property
    def message(self) -> str: ...
    @property
    def file(self) -> str | None: ...
    @property
    def hunk(self) -> int | None: ...


class ReportLike(Protocol):
    """What feedback reads of a report (`patchsmith.model.report.ApplyReport`)."""

    @property
    def status(self) -> StrEnum: ...
    @property
    def check(self) -> bool: ...
    @property
    def files(self) -> Sequence[FileLike]: ...
    @property
    def errors(self) -> Sequence[PatchFailure]: ...
    @property
    def warnings(self) -> Sequence[WarningLike]: ...
    @property
    def origin(self) -> CallOrigin: ...


_REFUSED_PREFIX = (
    "Nothing was written. Resend the whole reply, every edit included, with this fixed: "
)
_PARTIAL_PREFIX = "Not written. "
_PROPOSAL_PREFIX = (
    "Nothing was written. Resend the proposal, every operation included, with this fixed: "
)


def _tool(origin: CallOrigin) -> str:
    return origin.tool or "the tool"


def _refused_prefix(origin: CallOrigin) -> str:
    """What a refused edit's hint opens with: the next call, worded for the call made."""
    if origin.flavor is CallFlavor.TOOL_CALL:
        return f"Nothing was written. Call {_tool(origin)} again with this fixed: "
    if origin.flavor is CallFlavor.PROPOSAL:
        return _PROPOSAL_PREFIX
    return _REFUSED_PREFIX


_SHRUNK_EXCERPT_LINES = 8


def _edits(indexes: Sequence[int]) -> str:
    numbers = [str(i + 1) for i in indexes]
    return ("edit " if len(numbers) == 1 else "edits ") + ", ".join(numbers)


def _failed_edits(errors: Sequence[PatchFailure], path: str) -> set[int]:
    return {e.hunk for e in errors if e.file == path and e.hunk is not None}


def written_parts(files: Sequence[FileLike], errors: Sequence[PatchFailure]) -> list[str]:
    """`a.py (edits 1, 3)` for each file whose change was written, in report order."""
    parts = []
    for f in files:
        if not f.written:
            continue
        failed = _failed_edits(errors, f.path)
        done = [i for i in range(f.hunks_total) if i not in failed]
        target = f" -> {f.new_path}" if f.new_path else ""
        if f.hunks_total > 1 or failed:
            parts.append(f"{f.path}{target} ({_edits(done)})")
        else:
            parts.append(f"{f.path}{target} ({f.action.value})")
    return parts


def settle_hint(
    failure: PatchFailure,
    status: str,
    check: bool,
    files: Sequence[FileLike],
    errors: Sequence[PatchFailure],
    origin: CallOrigin = TEXT_REPLY,
) -> PatchFailure:
    """`failure` with a hint that says what a retry must resend, given the final status
    and the kind of call the change came in (`origin`).

    Only failures of one edit (`hunk` set) are rewritten; the others concern the
    whole reply and are framed by the report's opening sentence.
    """
    if failure.hunk is None or failure.hint is None:
        return failure
    hint = failure.hint
    prefix = _refused_prefix(origin)
    if hint.startswith((prefix, _REFUSED_PREFIX, _PROPOSAL_PREFIX, _PARTIAL_PREFIX)):
        return failure
    if status == "refused" or check:
        return replace(failure, hint=prefix + hint)
    if status != "partial":
        return failure
    written = next((f for f in files if f.written and f.path == failure.file), None)
    if written is None:
        kept = f"{failure.file} was not changed"
    else:
        failed = _failed_edits(errors, written.path)
        done = [i for i in range(written.hunks_total) if i not in failed]
        kept = f"{failure.file} was written with its {_edits(done)}"
    return replace(
        failure,
        hint=f"{_PARTIAL_PREFIX}{kept}; resend only this edit, against the file as it now is: "
        + hint,
    )


def _opening(report: ReportLike) -> str:
    status = report.status.value
    if report.check and status != "refused":
        return "Check only: nothing was written; every edit located and passed the guards."
    if status == "refused":
        origin = report.origin
        if origin.flavor is CallFlavor.TOOL_CALL:
            return (
                f"Refused: nothing was written. Fix the problem below and call {_tool(origin)} "
                "again (or the tool its hint names)."
            )
        located = sum(f.hunks_located for f in report.files)
        also = (
            f" ({located} edit(s) did locate, but a refusal keeps none of them)" if located else ""
        )
        if origin.flavor is CallFlavor.PROPOSAL:
            return (
                "Refused: nothing was written" + also + ". Fix the problems below and resend "
                "the proposal, every operation included."
            )
        return (
            "Refused: nothing was written" + also + ". Fix the problems below and resend the "
            "whole reply, every edit included."
        )
    if status == "partial":
        parts = written_parts(report.files, report.errors)
        return (
            "Partly applied. Written: " + ("; ".join(parts) or "nothing") + ". Not written: "
            "the edits below. Resend only those, against the files as they now are."
        )
    if status == "already_applied":
        return "Already applied: the workspace already holds this change; nothing was written."
    parts = written_parts(report.files, report.errors)
    return "Applied: " + ("; ".join(parts) or "no file changed") + "."


def _failure_text(number: int, failure: PatchFailure, excerpt_lines: int | None) -> str:
    where = ""
    if failure.file:
        where = f" in {failure.file}"
    if failure.hunk is not None:
        where += f", edit {failure.hunk + 1}"
    lines = [f"[{number}] {failure.code.value}{where}: {failure.message}"]
    if failure.rule:
        lines.append(f"    rule: {failure.rule}")
    if failure.hint:
        lines.append(f"    fix: {failure.hint}")
    if failure.current_sha256:
        lines.append(
            f"    current sha256 of {failure.file or 'the file'}: {failure.current_sha256}"
        )
    if failure.excerpt and excerpt_lines != 0:
        shown = failure.excerpt.splitlines()
        cut = excerpt_lines is not None and len(shown) > excerpt_lines
        if cut:
            shown = shown[:excerpt_lines]
        lines.append(f"    {failure.file or 'the file'} now has:")
        lines.extend(f"      {line}" for line in shown)
        if cut:
            lines.append("      (excerpt shortened)")
    return "\n".join(lines)


def render_feedback(report: ReportLike, max_chars: int) -> str:
    """See `patchsmith.model.report.ApplyReport.feedback`."""
    if max_chars < MIN_FEEDBACK_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_FEEDBACK_CHARS}, got {max_chars}")
    head = _opening(report)
    tail = [
        f"- {w.code.value}"
        + (f" in {w.file}" if w.file else "")
        + (f", edit {w.hunk + 1}" if w.hunk is not None else "")
        + f": {w.message}"
        for w in report.warnings
    ]
    for excerpt_lines in (None, _SHRUNK_EXCERPT_LINES, 0):
        text = _assemble(head, report.errors, tail, excerpt_lines, max_chars)
        if text is not None:
            return text
    return _assemble_dropping(head, report.errors, tail, max_chars)


def _join(head: str, blocks: Sequence[str], tail: Sequence[str]) -> str:
    parts = [head, *blocks]
    if tail:
        parts.append("Warnings:\n" + "\n".join(tail))
    return "\n\n".join(parts)


def _assemble(
    head: str,
    errors: Sequence[PatchFailure],
    tail: Sequence[str],
    excerpt_lines: int | None,
    max_chars: int,
) -> str | None:
    blocks = [_failure_text(n, e, excerpt_lines) for n, e in enumerate(errors, 1)]
    text = _join(head, blocks, tail)
    return text if len(text) <= max_chars else None


def _assemble_dropping(
    head: str, errors: Sequence[PatchFailure], tail: Sequence[str], max_chars: int
) -> str:
    blocks = [_failure_text(n, e, 0) for n, e in enumerate(errors, 1)]
    for keep in range(len(blocks), -1, -1):
        rest = len(blocks) - keep
        more = (
            [f"({rest} more problem(s) not shown; the JSON report lists them all)"] if rest else []
        )
        text = _join(head, [*blocks[:keep], *more], tail if keep == len(blocks) else [])
        if len(text) <= max_chars:
            return text
    return (head[: max_chars - 3] + "...") if len(head) > max_chars else head
