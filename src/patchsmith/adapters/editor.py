"""`Editor`: Anthropic's text-editor tool and OpenHands' `str_replace_editor`, over transactions.

An agent built for either tool keeps its tool definition and its loop; its tool handler
becomes `editor.str_replace_based_edit_tool(arguments)` (Anthropic) or
`editor.str_replace_editor(arguments)` (OpenHands), fed the exact argument dict the model
sent, and answers with `result.text` (and `result.is_error`). Commands: `view` (a file's
numbered lines, `view_range` for some, or a directory two levels deep), `create`,
`str_replace`, `insert` (`new_str`, or `insert_text` as Claude 4's tool sends it) and
`undo_edit`.

Every edit is one `apply` of the call (all or nothing, the workspace policy's guards, an
audit record), worded for a tool call: a refusal names the call to make next. `undo_edit`
reverts the latest attempt this editor wrote to the file, through `revert`: refused, with
nothing written, when the file changed since. Paths may be absolute under the workspace
prefix (`/workspace/src/app.py`) or the root; anything else outside the root is refused.
A view is cut at `max_chars` characters with a note naming the `view_range` that reads on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from patchsmith.errors import (
    FailureCode,
    PatchFailure,
    PatchRefused,
    invalid_arguments,
    refused,
)
from patchsmith.formats.script import EditFormat
from patchsmith.model.origin import CallOrigin
from patchsmith.model.report import ApplyReport, ApplyStatus
from patchsmith.runtime.paths import WORKSPACE_PREFIX, under_root
from patchsmith.runtime.workspace import Workspace

if TYPE_CHECKING:
    from patchsmith.policy import Policy

__all__ = ["DEFAULT_VIEW_CHARS", "MAX_LISTED", "Editor", "EditorResult"]

DEFAULT_VIEW_CHARS = 16_000
"""A view of a file stops at this many characters (about 4k tokens) unless told otherwise."""
MAX_LISTED = 1000
"""A view of a directory lists at most this many entries."""

_LIST_DEPTH = 2
_MAX_DIFF_CHARS = 6000
_ROOT = "."

_COMMANDS: dict[str, frozenset[str]] = {
    "view": frozenset({"path", "view_range"}),
    "create": frozenset({"path", "file_text"}),
    "str_replace": frozenset({"path", "old_str", "new_str"}),
    "insert": frozenset({"path", "insert_line", "new_str", "insert_text"}),
    "undo_edit": frozenset({"path"}),
}
# The tools' own argument names; other keys (a client's metadata) are left alone.
_ARGUMENTS = frozenset().union(*_COMMANDS.values())


class _Dialect(StrEnum):
    ANTHROPIC = "anthropic"
    OPENHANDS = "openhands"


@dataclass(frozen=True)
class EditorResult:
    """What one call answers: the text the tool returns, whether it is an error, and for an
    edit its report (files, diff, attempt id) and failures as values."""

    text: str
    is_error: bool = False
    report: ApplyReport | None = None
    failures: tuple[PatchFailure, ...] = ()

    def __str__(self) -> str:
        return self.text

    def tool_result(self, tool_use_id: str) -> dict[str, object]:
        """The Messages API `tool_result` content block answering `tool_use_id`."""
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.text,
            "is_error": self.is_error,
        }


class Editor:
    """The editor tools bound to one workspace root; remembers its own edits for `undo_edit`."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        workspace_prefix: str | None = WORKSPACE_PREFIX,
        policy: Policy | None = None,
        record: bool | None = None,
        max_chars: int = DEFAULT_VIEW_CHARS,
    ) -> None:
        """Edit the files under `root` (a directory; `ValueError` otherwise).

        `policy` and `record` are passed to every `apply` and `revert` (default: the
        workspace's policy, which records). `undo_edit` needs the record: with recording
        off it is refused. `max_chars` bounds a view (at least 1000).
        """
        self.root = Path(os.path.abspath(root))
        if not self.root.is_dir():
            raise ValueError(f"workspace root {str(self.root)!r} is not a directory")
        if max_chars < 1000:
            raise ValueError(f"max_chars must be at least 1000, got {max_chars}")
        self.workspace_prefix = workspace_prefix
        self.policy = policy
        self.record = record
        self.max_chars = max_chars
        self._undo: dict[str, list[str]] = {}
        """Attempt ids this editor wrote, per workspace-relative path, newest last."""

    # -- the two tools ----------------------------------------------------------------------

    def str_replace_based_edit_tool(self, arguments: Mapping[str, object]) -> EditorResult:
        """Anthropic's text-editor tool: `{"command": ..., "path": ..., ...}` in, its text out.

        File views number lines as `N: text`.
        """
        return self._call(arguments, _Dialect.ANTHROPIC)

    def str_replace_editor(self, arguments: Mapping[str, object]) -> EditorResult:
        """OpenHands' `str_replace_editor`: the same commands; views as `cat -n` prints them."""
        return self._call(arguments, _Dialect.OPENHANDS)

    # -- dispatch ---------------------------------------------------------------------------

    def _call(self, arguments: Mapping[str, object], dialect: _Dialect) -> EditorResult:
        try:
            if not isinstance(arguments, Mapping):
                raise invalid_arguments(
                    "the arguments are not an object", "send the tool's arguments"
                )
            # Strict-mode clients send every key, the unused ones null.
            given = {str(k): v for k, v in arguments.items() if v is not None}
            command = given.pop("command", None)
            if not isinstance(command, str) or command not in _COMMANDS:
                raise invalid_arguments(
                    f"unknown command {str(command)[:40]!r}",
                    "use one of: " + ", ".join(_COMMANDS),
                )
            extra = sorted(k for k in given if k in _ARGUMENTS and k not in _COMMANDS[command])
            path = given.get("path")
            if extra:
                raise invalid_arguments(
                    f"{command} takes no {', '.join(extra)}",
                    f"{command} takes: " + ", ".join(sorted(_COMMANDS[command])),
                    str(path) if path is not None else None,
                )
            if not isinstance(path, str) or not path.strip():
                raise invalid_arguments(f"{command} needs a path", "send the file's path")
            if command == "view":
                return self._view(path, given.get("view_range"), dialect)
            if command == "undo_edit":
                return self._undo_edit(path)
            return self._edit(command, path, given)
        except PatchRefused as refusal:
            return _error(refusal.failures)

    # -- paths ------------------------------------------------------------------------------

    def _relative(self, path: str) -> str:
        """`path` relative to the root (`.` for the root itself), or refused when absolute
        outside it; `..` and links are checked by the workspace afterwards."""
        bases = tuple(
            b for b in (self.workspace_prefix, str(self.root), os.path.realpath(self.root)) if b
        )
        unified = path.replace("\\", "/")
        if any(unified.rstrip("/") == b.replace("\\", "/").rstrip("/") for b in bases):
            return _ROOT
        relative = under_root(path, bases)
        if relative.replace("\\", "/").startswith("/") or os.path.isabs(relative):
            shown = f"{self.workspace_prefix.rstrip('/')}/" if self.workspace_prefix else "the root"
            raise refused(
                PatchFailure(
                    FailureCode.PATH_OUTSIDE_WORKSPACE,
                    f"path {path[:200]!r} is outside the workspace",
                    file=path[:200],
                    hint=f"use a path under {shown} or one relative to the workspace root",
                )
            )
        return relative or _ROOT

    # -- view -------------------------------------------------------------------------------

    def _view(self, path: str, view_range: object, dialect: _Dialect) -> EditorResult:
        workspace = Workspace(self.root, recover=False)
        relative = self._relative(path)
        stripped = relative.rstrip("/")
        if stripped in ("", _ROOT):
            if view_range is not None:
                raise invalid_arguments(
                    "view_range is for files; this path is a directory", "drop it"
                )
            return self._listing(self.root, "")
        resolved = workspace.resolve(stripped)
        if isinstance(resolved, PatchFailure):
            raise refused(resolved)
        self._refuse_forbidden(workspace, resolved)
        disk = workspace.disk_path(resolved)
        if disk.is_dir():
            if view_range is not None:
                raise invalid_arguments(
                    "view_range is for files; this path is a directory", "drop it"
                )
            return self._listing(disk, resolved + "/")
        read = workspace.read(resolved)
        if isinstance(read, PatchFailure):
            raise refused(read)
        lines = read.text.splitlines()
        first, last = _range(view_range, len(lines), resolved)
        return EditorResult(self._numbered(resolved, lines, first, last, dialect))

    def _numbered(
        self, path: str, lines: list[str], first: int, last: int, dialect: _Dialect
    ) -> str:
        shown: list[str] = []
        size = 0
        number = first
        for number in range(first, last + 1):
            text = lines[number - 1]
            line = f"{number}: {text}" if dialect is _Dialect.ANTHROPIC else f"{number:6}\t{text}"
            if size + len(line) + 1 > self.max_chars and shown:
                number -= 1
                break
            shown.append(line)
            size += len(line) + 1
        else:
            return "\n".join(shown)
        # Cut short: say what was shown and the call that reads on.
        total = len(lines)
        shown.append(
            f"[{path} has {total} lines; shown: lines {first}-{number}, as much as fits in "
            f"{self.max_chars} characters. View the rest with view_range "
            f"[{number + 1}, {last if last < total else -1}], or a narrower range.]"
        )
        return "\n".join(shown)

    def _listing(self, directory: Path, prefix: str) -> EditorResult:
        entries: list[str] = []
        truncated = False
        for entry in _walk(directory, prefix, 1):
            if len(entries) >= MAX_LISTED:
                truncated = True
                break
            entries.append(entry)
        shown = prefix.rstrip("/") or _ROOT
        head = (
            f"{shown}/: files and directories up to {_LIST_DEPTH} levels deep, hidden ones "
            f"left out ({len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
            + (f", cut at {MAX_LISTED}; view a subdirectory for the rest)" if truncated else ")")
        )
        return EditorResult("\n".join([head, *entries]))

    def _refuse_forbidden(self, workspace: Workspace, relative: str) -> None:
        """FORBIDDEN_PATH for a file the policy forbids: its content is not shown."""
        from patchsmith.policy import load_policy, matches

        rules = self.policy if self.policy is not None else load_policy(self.root)
        if isinstance(rules, PatchFailure):
            raise refused(rules)
        if not rules.forbidden or not rules.guard_enabled("forbidden_paths"):
            return
        target = workspace.canonical(relative, follow_final=True)
        if matches(rules.forbidden, relative) or matches(rules.forbidden, target):
            raise refused(
                PatchFailure(
                    FailureCode.FORBIDDEN_PATH,
                    f"path is forbidden: {relative} (the policy keeps it from being read or "
                    "written)",
                    file=relative,
                    hint="forbidden: " + ", ".join(rules.forbidden),
                    rule="forbidden_paths",
                )
            )

    # -- edits ------------------------------------------------------------------------------

    def _edit(self, command: str, path: str, given: Mapping[str, object]) -> EditorResult:
        from patchsmith.attempt.api import apply

        call: dict[str, object] = {"command": command, "path": path}
        if command == "insert":
            text = _insert_text(given, path)
            call.update(insert_line=given.get("insert_line"), new_str=text)
        else:
            call.update({k: v for k, v in given.items() if k in _COMMANDS[command]})
        report = apply(
            json.dumps(call, ensure_ascii=False),
            self.root,
            format=EditFormat.STR_REPLACE,
            record=self.record,
            policy=self.policy,
            origin=CallOrigin.tool_call(command),
            workspace_prefix=self.workspace_prefix,
        )
        self._remember(report)
        if not report.ok:
            return EditorResult(report.feedback(), True, report, report.errors)
        text = report.feedback()
        if report.diff:
            diff = report.diff
            if len(diff) > _MAX_DIFF_CHARS:
                diff = diff[:_MAX_DIFF_CHARS] + f"\n... ({len(report.diff)} characters in all)\n"
            text += "\n\nDiff:\n" + diff.rstrip("\n")
        if report.attempt_id and report.written:
            text += f"\n\nAttempt: {report.attempt_id} (undo_edit reverts it)"
        return EditorResult(text, False, report)

    def _remember(self, report: ApplyReport) -> None:
        if not report.written:
            return
        for written in report.files:
            if not written.written:
                continue
            stack = self._undo.setdefault(written.path, [])
            if report.attempt_id is None:
                stack.clear()  # not recorded: nothing of it can be reverted
            else:
                stack.append(report.attempt_id)

    def _undo_edit(self, path: str) -> EditorResult:
        from patchsmith.pipeline.revert import revert

        relative = self._relative(path)
        resolved = Workspace(self.root, recover=False).resolve(relative)
        if isinstance(resolved, PatchFailure):
            raise refused(resolved)
        stack = self._undo.get(resolved)
        if not stack:
            raise refused(
                PatchFailure(
                    FailureCode.RECORD_NOT_FOUND,
                    f"no edit of {resolved} made through this editor is left to undo",
                    file=resolved,
                    hint="undo_edit undoes this editor's own recorded edits, latest first "
                    "(recording must be on: the policy's record = true)",
                )
            )
        attempt_id = stack[-1]
        report = revert(attempt_id, self.root, record=self.record, policy=self.policy)
        if report.status is ApplyStatus.ALREADY_APPLIED or (report.ok and not report.check):
            stack.pop()
            return EditorResult(
                f"Undone: {resolved} is again as it was before attempt {attempt_id}.",
                False,
                report,
            )
        return _error(report.errors, report)


def _insert_text(given: Mapping[str, object], path: str) -> object:
    """The text an insert adds: `new_str`, or `insert_text` (Claude 4's tool)."""
    new_str, insert_text = given.get("new_str"), given.get("insert_text")
    if new_str is not None and insert_text is not None and new_str != insert_text:
        raise invalid_arguments(
            "insert got both new_str and insert_text, and they differ",
            "send the text once, as new_str or insert_text",
            path,
        )
    text = new_str if new_str is not None else insert_text
    if text is None:
        raise invalid_arguments(
            "insert needs new_str (or insert_text)", "send the text to insert", path
        )
    return text


def _range(view_range: object, total: int, path: str) -> tuple[int, int]:
    """The 1-based inclusive lines `view_range` asks for (`[start, -1]`: to the end)."""
    if view_range is None:
        return 1, total
    from patchsmith.formats.str_replace import decode_arguments

    value = decode_arguments(view_range)
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    ):
        raise invalid_arguments(
            f"view_range {view_range!r} is not two line numbers",
            "send [start, end] (1-based, end -1 for the end of the file)",
            path,
        )
    start, end = int(value[0]), int(value[1])
    last = total if end == -1 else min(end, total)
    if start < 1 or start > max(total, 1):
        raise invalid_arguments(
            f"view_range starts at {start}; {path} has {total} lines",
            f"start between 1 and {max(total, 1)}",
            path,
        )
    if end != -1 and end < start:
        raise invalid_arguments(
            f"view_range ends at {end}, before its start {start}", "send [start, end]", path
        )
    return start, last


def _walk(directory: Path, shown: str, depth: int) -> Iterator[str]:
    """Entries under `directory`, hidden ones left out, symlinked directories not entered."""
    try:
        children = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for child in children:
        if child.name.startswith("."):
            continue
        is_dir = child.is_dir(follow_symlinks=False)
        yield shown + child.name + ("/" if is_dir else "")
        if is_dir and depth < _LIST_DEPTH:
            yield from _walk(Path(child.path), shown + child.name + "/", depth + 1)


def _error(failures: tuple[PatchFailure, ...], report: ApplyReport | None = None) -> EditorResult:
    """A refusal that is not an edit's report: each failure's code, message, fix and lines."""
    lines: list[str] = []
    for failure in failures:
        where = f" in {failure.file}" if failure.file else ""
        lines.append(f"Error: {failure.code.value}{where}: {failure.message}")
        if failure.hint:
            lines.append(f"  fix: {failure.hint}")
        if failure.excerpt:
            lines.append(f"  {failure.file or 'the file'} now has:")
            lines.extend(f"    {line}" for line in failure.excerpt.splitlines())
    return EditorResult("\n".join(lines) or "Error", True, report, failures)
