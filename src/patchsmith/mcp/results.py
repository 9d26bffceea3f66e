"""`ToolResult`: what one MCP tool call answers, as structured content and as text.

The structured content is the JSON the CLI's `--json` prints for the same work (an
`ApplyReport`, a `RecipeReport`, a `VerifyReport`, a `FileView`...); a refusal is
never a protocol error but a result with `is_error` set whose `errors` are
`PatchFailure` objects, so the model sees the code, hint and excerpt and can retry.
The text is what a model reads first: for edits, `ApplyReport.feedback()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from patchsmith.errors import PatchFailure

if TYPE_CHECKING:
    from patchsmith.model.report import ApplyReport

__all__ = ["MAX_DIFF_CHARS", "ToolResult", "bounded_diff", "failed", "from_report"]

MAX_DIFF_CHARS = 6000
"""The text of a successful edit shows at most this much of its diff (the JSON has it all)."""


@dataclass(frozen=True)
class ToolResult:
    """One tool call's answer: JSON content, the text a model reads, and whether it failed."""

    content: dict[str, object]
    text: str
    is_error: bool = False


def failed(failures: Sequence[PatchFailure], *, status: str = "error") -> ToolResult:
    """A refusal that is not an edit report: `{"status", "errors": [PatchFailure...]}`."""
    lines: list[str] = []
    for failure in failures:
        where = f" in {failure.file}" if failure.file else ""
        lines.append(f"{failure.code.value}{where}: {failure.message}")
        if failure.hint:
            lines.append(f"  hint: {failure.hint}")
        if failure.excerpt:
            lines.append("  the file has:")
            lines.extend(f"    {line}" for line in failure.excerpt.splitlines())
    return ToolResult(
        {"status": status, "errors": [f.to_json() for f in failures]},
        "\n".join(lines) or status,
        is_error=True,
    )


def from_report(report: ApplyReport, *, extra: dict[str, object] | None = None) -> ToolResult:
    """An edit's report: its `--json` object, its feedback text, and (when it wrote) its diff."""
    content = report.to_json()
    if extra:
        content.update(extra)
    text = report.feedback()
    if report.ok and report.diff:
        text += "\n\nDiff:\n" + bounded_diff(report.diff)
    if report.attempt_id:
        text += f"\n\nAttempt: {report.attempt_id}"
    return ToolResult(content, text, is_error=not report.ok)


def bounded_diff(diff: str) -> str:
    """`diff`, cut after `MAX_DIFF_CHARS` characters with a note (the JSON has it all)."""
    if len(diff) <= MAX_DIFF_CHARS:
        return diff
    return diff[:MAX_DIFF_CHARS] + f"\n... ({len(diff)} characters in all)\n"
