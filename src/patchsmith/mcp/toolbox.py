"""`Toolbox`: the MCP tools as plain functions on one workspace, without the SDK.

The server (`patchsmith.mcp.server`) only lists `Toolbox.tools()` and forwards each
call to `Toolbox.call(name, arguments)`; everything a tool does is here, testable
without a client. The root, the policy, the recording choice, the workspace prefix
and the verification profiles are fixed when the toolbox is made: no argument can
widen them. Every edit goes through the library (`apply`, `write_file`, `propose`,
`run_recipe`), so through the usual transaction, guards and audit store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused, invalid_arguments, refused
from patchsmith.formats.script import Action, EditFormat
from patchsmith.mcp.arguments import (
    ApplyArgs,
    CreateArgs,
    EditorArgs,
    FreezeArgs,
    InsertArgs,
    JudgeArgs,
    LogArgs,
    ProposeArgs,
    ReadFileArgs,
    RevertArgs,
    RunRecipeArgs,
    ShowArgs,
    StrReplaceArgs,
    ToolArgs,
    UndoEditArgs,
    VerifyArgs,
    ViewArgs,
    WriteFileArgs,
    input_schema,
)
from patchsmith.mcp.history import EditHistory, Snapshot, current_sha256, restore
from patchsmith.mcp.outputs import (
    AttemptList,
    AttemptShown,
    EditResult,
    FileView,
    Frozen,
    Judged,
    RecipeResult,
    ToolOutput,
    VerifyResult,
    output_schema,
)
from patchsmith.mcp.paths import ROOT, map_path
from patchsmith.mcp.results import ToolResult, failed, from_report
from patchsmith.mcp.views import bounded_lines
from patchsmith.model.origin import CallOrigin
from patchsmith.model.report import ApplyReport
from patchsmith.policy import Policy, load_policy, matches
from patchsmith.runtime.paths import STATE_DIR_NAME, under_root
from patchsmith.runtime.textfile import TextFile
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import DB_FILE_NAME, Store, keep_open
from patchsmith.verify.profiles import ProfileSet, load_profiles

__all__ = ["DEFAULT_PREFIX", "Effect", "ToolSpec", "Toolbox", "tool_specs"]

DEFAULT_PREFIX = "/workspace"
"""The absolute directory editor-tool clients use for the workspace root."""

MAX_LISTED = 1000
"""`view` of a directory lists at most this many entries."""

_LIST_DEPTH = 2
_AMBIGUOUS_LIMIT = 20

_A = TypeVar("_A", bound=ToolArgs)


class Effect(StrEnum):
    """What a tool can do to the workspace: its annotations are derived from these."""

    WRITES = "writes"
    """Changes the workspace's files."""
    REMOVES = "removes"
    """Can delete a file or take text out of one (a destructive update)."""
    RECORDS = "records"
    """Writes the audit store or a git branch, not the working files."""
    RUNS_PROGRAMS = "runs_programs"
    """Runs the repository's own programs (trusted workspaces only, in the sandbox)."""
    READS_STORE = "reads_store"
    """Reads the audit store (on the thread that holds its connection)."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what it does, the models of its arguments and result, its effects.

    `idempotent` says a second identical call adds nothing to what the first did (it
    answers already-applied or is refused); tools that may do more each time say no.
    """

    name: str
    description: str
    arguments: type[ToolArgs]
    output: type[ToolOutput]
    effects: frozenset[Effect] = frozenset()
    idempotent: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.arguments)

    @property
    def output_schema(self) -> dict[str, Any]:
        return output_schema(self.output)

    @property
    def read_only(self) -> bool:
        """Whether the tool leaves the workspace, its store and its git refs as they were."""
        return not self.effects & {Effect.WRITES, Effect.REMOVES, Effect.RECORDS}

    @property
    def destructive(self) -> bool:
        return Effect.REMOVES in self.effects

    @property
    def beside_edits(self) -> bool:
        """Whether calls may run while an edit runs: read-only, and not using the store."""
        return self.read_only and Effect.READS_STORE not in self.effects

    def annotations(self) -> dict[str, object]:
        """The MCP tool annotations (`readOnlyHint`, ...), as the protocol spells them."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.read_only or self.idempotent,
            # Only this workspace: the repository's programs run sandboxed, network off
            # unless a profile turns it on.
            "openWorldHint": False,
        }

    def definition(self) -> dict[str, object]:
        """The tool as `tools/list` lists it (what `patchsmith tools --flavor mcp` prints)."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations(),
        }


class Toolbox:
    """The MCP tools bound to one workspace root and the policy it had when this was made."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        workspace_prefix: str | None = DEFAULT_PREFIX,
        record: bool | None = None,
        policy: Policy | None = None,
        trust: bool | None = None,
    ) -> None:
        """Bind the tools to `root` (a directory), loading its policy and profiles now.

        `trust` true lets the workspace run its own programs (the `verify` tool, a
        proposal's plan and commands, a recipe's postconditions on apply) for this
        server's life; `None` asks the trust store on every call (`patchsmith trust`).
        Dry runs (`check`, a recipe without `apply`) run none of them.

        Raises `PatchRefused` (FILE_NOT_FOUND, INVALID_POLICY) when the root is not a
        directory or its policy cannot be read: a server should not start then.
        """
        try:
            self._workspace = Workspace(root, recover=False)
        except ValueError as exc:
            raise PatchRefused([PatchFailure(FailureCode.FILE_NOT_FOUND, str(exc))]) from None
        self.root = self._workspace.root
        rules = policy if policy is not None else load_policy(self.root)
        if isinstance(rules, PatchFailure):
            raise PatchRefused([rules])
        self.policy: Policy = rules
        self.record = record
        self.trust = trust
        prefixes = [workspace_prefix] if workspace_prefix else []
        self._bases = (*prefixes, str(self._workspace.real_root), str(self.root))
        self.workspace_prefix = workspace_prefix
        self.profiles: ProfileSet | PatchFailure = load_profiles(self.root)
        self.history = EditHistory()
        self._handlers: dict[str, Callable[[Mapping[str, object]], ToolResult]] = {
            "read_file": self._bind(ReadFileArgs, self.read_file),
            "view": self._bind(ViewArgs, self.view),
            "apply": self._bind(ApplyArgs, self.apply),
            "str_replace": self._bind(StrReplaceArgs, self.str_replace),
            "insert": self._bind(InsertArgs, self.insert),
            "create": self._bind(CreateArgs, self.create),
            "undo_edit": self._bind(UndoEditArgs, self.undo_edit),
            "str_replace_editor": self._bind(EditorArgs, self.editor),
            "write_file": self._bind(WriteFileArgs, self.write_file),
            "propose": self._bind(ProposeArgs, self.propose),
            "run_recipe": self._bind(RunRecipeArgs, self.run_recipe),
            "verify": self._bind(VerifyArgs, self.verify),
            "log": self._bind(LogArgs, self.log),
            "show": self._bind(ShowArgs, self.show),
            "revert": self._bind(RevertArgs, self.revert),
            "judge": self._bind(JudgeArgs, self.judge),
            "freeze": self._bind(FreezeArgs, self.freeze),
        }

    # -- the tool list ------------------------------------------------------------------------

    def tools(self) -> tuple[ToolSpec, ...]:
        """Every tool this workspace offers (`verify` only when it has profiles)."""
        offered = tuple(spec for spec in _SPECS if spec.name != "verify" or self._can_verify())
        return offered

    def _can_verify(self) -> bool:
        return isinstance(self.profiles, PatchFailure) or bool(self.profiles.profiles)

    def state_dir(self) -> Path:
        return self._workspace.real_root / STATE_DIR_NAME

    def keep_store_open(self) -> AbstractContextManager[None]:
        """One store connection for every call made inside this block (from one thread)."""
        return keep_open(self.state_dir())

    # -- dispatch -----------------------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, object] | None) -> ToolResult:
        """Run tool `name`; bad input of any kind is an `is_error` result, never an exception."""
        handler = self._handlers.get(name)
        if handler is None or name not in {spec.name for spec in self.tools()}:
            known = ", ".join(spec.name for spec in self.tools())
            return failed(
                invalid_arguments(f"no tool named {name!r}", f"the tools are: {known}").failures
            )
        try:
            return handler(arguments or {})
        except PatchRefused as refusal:
            return failed(refusal.failures)

    def _bind(
        self, model: type[_A], tool: Callable[[_A], ToolResult]
    ) -> Callable[[Mapping[str, object]], ToolResult]:
        def handler(arguments: Mapping[str, object]) -> ToolResult:
            try:
                parsed = model.model_validate(decode_json_strings(arguments, model))
            except ValidationError as exc:
                raise invalid_arguments(
                    _problems(exc), "send the arguments the tool's schema names"
                ) from None
            return tool(parsed)

        return handler

    # -- paths --------------------------------------------------------------------------------

    def _mapped(self, path: str) -> str:
        mapped = map_path(path, self._bases)
        if isinstance(mapped, PatchFailure):
            raise refused(mapped)
        return mapped

    def _file(self, path: str) -> str:
        """The checked workspace-relative path of a file argument."""
        mapped = self._mapped(path)
        resolved = self._workspace.resolve(mapped)
        if isinstance(resolved, PatchFailure):
            raise refused(resolved)
        return resolved

    # -- reading ------------------------------------------------------------------------------

    def read_file(self, args: ReadFileArgs) -> ToolResult:
        """A text file's sha256 and numbered lines: `view_range` (or start/end_line) for some."""
        relative = self._file(args.path)
        if args.view_range is not None and (args.start_line, args.end_line) != (None, None):
            raise invalid_arguments(
                "send view_range or start_line/end_line, not both", file=relative
            )
        start, end = args.view_range if args.view_range is not None else (None, None)
        return self._read(relative, args.start_line or start, args.end_line or end, args.max_chars)

    def _read(
        self, relative: str, start: int | None, end: int | None, max_chars: int
    ) -> ToolResult:
        self._refuse_forbidden(relative)
        if start is not None and start < 1:
            raise invalid_arguments(
                f"the range starts at {start}; lines count from 1", file=relative
            )
        read = self._workspace.read(relative)
        if isinstance(read, PatchFailure):
            raise refused(read)
        lines = read.text.splitlines(keepends=True)
        total = len(lines)
        first = start or 1
        last = total if end is None or end == -1 else min(end, total)
        if first > max(total, 1):
            raise invalid_arguments(
                f"line {first} is past the end: {relative} has {total} lines", file=relative
            )
        if end is not None and end != -1 and end < first:
            raise invalid_arguments(
                f"the range ends at {end}, before its start {first}", file=relative
            )
        shown = bounded_lines(lines, first, last, max_chars)
        shown_last = first + len(shown.lines) - 1
        content: dict[str, object] = {
            "status": "ok",
            "path": relative,
            "sha256": read.sha256,
            "encoding": read.encoding.value,
            "total_lines": total,
            "start_line": first,
            "end_line": shown_last,
            "truncated": shown.truncated,
        }
        header = f"{relative} (sha256 {read.sha256}; lines {first}-{shown_last} of {total})"
        text = "\n".join([header, *shown.lines])
        if shown.truncated:
            text += "\n" + _read_on(shown_last, last, end, total, max_chars, cut=shown.cut)
        return ToolResult(content, text)

    def _refuse_forbidden(self, relative: str) -> None:
        """FORBIDDEN_PATH for a file the policy forbids (by its name or its link's target).

        A forbidden file (`.env`, `secrets/**`) is one no edit may touch; its content is
        not handed to the model either, in clear or masked.
        """
        if self._forbidden(relative):
            raise refused(
                PatchFailure(
                    FailureCode.FORBIDDEN_PATH,
                    f"path is forbidden: {relative} (the policy keeps it from being read or "
                    "written through the server)",
                    file=relative,
                    hint="forbidden: " + ", ".join(self.policy.forbidden),
                    rule="forbidden_paths",
                )
            )

    def _forbidden(self, path: str) -> bool:
        """Whether the policy forbids `path` (by its name, or its link's target)."""
        if not self.policy.forbidden or not self.policy.guard_enabled("forbidden_paths"):
            return False
        if matches(self.policy.forbidden, path):
            return True
        resolved = self._workspace.resolve(path)
        if isinstance(resolved, PatchFailure):
            return False
        return matches(
            self.policy.forbidden, self._workspace.canonical(resolved, follow_final=True)
        )

    def view(self, args: ViewArgs) -> ToolResult:
        """A file's numbered lines (`view_range` for some), or a directory's listing."""
        mapped = self._mapped(args.path)
        directory = self._directory(mapped)
        if directory is None:
            start, end = args.view_range if args.view_range is not None else (None, None)
            return self._read(self._file(mapped), start, end, args.max_chars)
        if args.view_range is not None:
            raise invalid_arguments(
                "view_range is for files; this path is a directory", file=args.path
            )
        return self._listing(directory)

    def _directory(self, mapped: str) -> str | None:
        """The workspace-relative directory `mapped` names (`.` for the root), or None."""
        stripped = mapped.rstrip("/\\")
        if mapped == ROOT or not stripped or stripped == ROOT:
            return ROOT
        resolved = self._workspace.resolve(stripped)
        if isinstance(resolved, PatchFailure):
            raise refused(resolved)
        return resolved if self._workspace.disk_path(resolved).is_dir() else None

    def _listing(self, directory: str) -> ToolResult:
        base = self.root if directory == ROOT else self._workspace.disk_path(directory)
        entries, truncated = _walk(base, "" if directory == ROOT else directory + "/")
        shown = directory if directory != ROOT else "."
        text = f"{shown}/ ({len(entries)} entries, hidden ones left out"
        text += ", truncated)" if truncated else ")"
        content: dict[str, object] = {
            "status": "ok",
            "path": shown,
            "kind": "directory",
            "entries": entries,
            "truncated": truncated,
        }
        return ToolResult(content, "\n".join([text, *entries]))

    # -- editing ------------------------------------------------------------------------------

    def apply(self, args: ApplyArgs) -> ToolResult:
        """Apply model output in any format: all or nothing, `check` for a dry run."""
        from patchsmith.attempt.api import apply

        format = EditFormat(args.format)
        # The patch may name files as /workspace/...; map them as the intake will, so the
        # undo snapshot is taken of the files the edit really writes.
        bases = tuple(b for b in (self.workspace_prefix, os.fspath(self.root)) if b)
        touched = tuple(under_root(path, bases) for path in _paths_in(args.patch, format))

        def run() -> ApplyReport:
            return apply(
                args.patch,
                self.root,
                format=format,
                check=args.check,
                partial=args.partial,
                record=self.record,
                policy=self.policy,
                full_rewrite=args.full_rewrite,
                workspace_prefix=self.workspace_prefix,
            )

        return from_report(self._edit(touched, run))

    def str_replace(self, args: StrReplaceArgs) -> ToolResult:
        """Replace `old_str`, which must occur once, with `new_str`."""
        relative = self._file(args.path)
        call = {
            "command": "str_replace",
            "path": relative,
            "old_str": args.old_str,
            "new_str": args.new_str,
        }
        return self._editor_call(relative, call)

    def insert(self, args: InsertArgs) -> ToolResult:
        """Insert text after line `insert_line` (0: at the top)."""
        text = args.new_str if args.new_str is not None else args.insert_text
        if text is None:
            raise invalid_arguments("insert needs new_str (or insert_text)", file=args.path)
        relative = self._file(args.path)
        call = {
            "command": "insert",
            "path": relative,
            "insert_line": args.insert_line,
            "new_str": text,
        }
        return self._editor_call(relative, call)

    def create(self, args: CreateArgs) -> ToolResult:
        """Create a new file; an existing one is refused (FILE_ALREADY_EXISTS)."""
        relative = self._file(args.path)
        call = {"command": "create", "path": relative, "file_text": args.file_text}
        return self._editor_call(relative, call)

    def _editor_call(self, relative: str, call: Mapping[str, object]) -> ToolResult:
        from patchsmith.attempt.api import apply

        reply = json.dumps(call, ensure_ascii=False)

        def run() -> ApplyReport:
            return apply(
                reply,
                self.root,
                format=EditFormat.STR_REPLACE,
                record=self.record,
                policy=self.policy,
                origin=CallOrigin.tool_call(str(call["command"])),
            )

        return from_report(self._edit((relative,), run))

    def editor(self, args: EditorArgs) -> ToolResult:
        """The editor-tool family's one tool: dispatch on `command`."""
        given = args.model_dump(exclude_none=True, exclude={"command"})
        allowed = {
            "view": {"path", "view_range", "max_chars"},
            "create": {"path", "file_text"},
            "str_replace": {"path", "old_str", "new_str"},
            "insert": {"path", "insert_line", "new_str", "insert_text"},
            "undo_edit": {"path"},
        }[args.command]
        # Strict-mode clients send every key, the unused ones null (dropped above).
        extra = sorted(set(given) - allowed)
        if extra:
            raise invalid_arguments(f"{args.command} takes no {', '.join(extra)}", file=args.path)
        # Each command is the tool of the same name.
        return self._handlers[args.command](given)

    def write_file(self, args: WriteFileArgs) -> ToolResult:
        """Replace a file whole, if it still has the sha256 it was read with."""
        from patchsmith.attempt.direct import write_file

        relative = self._file(args.path)

        def run() -> ApplyReport:
            return write_file(
                self.root,
                relative,
                args.content,
                args.expected_sha256,
                args.reason or "write_file",
                args.allow_create,
                record=self.record,
                policy=self.policy,
                full_rewrite=args.full_rewrite,
            )

        return from_report(self._edit((relative,), run))

    def undo_edit(self, args: UndoEditArgs) -> ToolResult:
        """Undo this server's last edit of a file, if the file is still as that edit left it."""
        relative = self._file(args.path)
        key = self._workspace.canonical(relative, follow_final=True)
        snapshot = self.history.last(key)
        if snapshot is None:
            raise refused(
                PatchFailure(
                    FailureCode.RECORD_NOT_FOUND,
                    f"no edit of {relative} made through this server is left to undo",
                    file=relative,
                    hint="undo_edit undoes this session's own edits, latest first",
                )
            )
        report = restore(Workspace(self.root), snapshot, policy=self.policy, record=self.record)
        if report.written:
            self.history.pop(key)
        undone: dict[str, object] = {"undone_attempt_id": snapshot.attempt_id}
        result = from_report(report, extra=undone)
        if not report.written:
            return result
        which = f"attempt {snapshot.attempt_id}" if snapshot.attempt_id else "its last edit"
        lead = f"Undone: {relative} is again as it was before {which}.\n\n"
        return replace(result, text=lead + result.text)

    def _edit(self, paths: tuple[str, ...], run: Callable[[], ApplyReport]) -> ApplyReport:
        """Run an edit, remembering each file it wrote as it was before (for `undo_edit`)."""
        before: dict[str, tuple[str, TextFile | None]] = {}
        for path in paths:
            resolved = self._workspace.resolve(path)
            if isinstance(resolved, PatchFailure):
                continue
            key = self._workspace.canonical(resolved, follow_final=True)
            read = self._workspace.read(resolved) if self._workspace.lexists(resolved) else None
            if not isinstance(read, PatchFailure):
                before[key] = (resolved, read)
        report = self._without_forbidden_excerpts(run())
        if report.written:
            self._remember(report, before)
        return report

    def _without_forbidden_excerpts(self, report: ApplyReport) -> ApplyReport:
        """`report` without the excerpts of files the policy forbids (their lines stay home)."""
        if not any(f.excerpt and f.file and self._forbidden(f.file) for f in report.errors):
            return report
        errors = tuple(
            replace(f, excerpt=None) if f.excerpt and f.file and self._forbidden(f.file) else f
            for f in report.errors
        )
        return replace(report, errors=errors)

    def _remember(
        self, report: ApplyReport, before: Mapping[str, tuple[str, TextFile | None]]
    ) -> None:
        recorded = self._recorded_before(report.attempt_id)
        for written in report.files:
            if not written.written:
                continue
            for path in (written.path, written.new_path):
                if path is None:
                    continue
                resolved = self._workspace.resolve(path)
                if isinstance(resolved, PatchFailure):
                    continue
                key = self._workspace.canonical(resolved, follow_final=True)
                seen = before.get(key)
                after = current_sha256(self._workspace, resolved)
                moved = written.action in (Action.MOVE, Action.DELETE)
                if seen is None or moved or not isinstance(after, str):
                    self.history.forget(key)
                    continue
                old = seen[1]
                old_sha = old.sha256 if old is not None else None
                if recorded is not None and recorded.get(key, old_sha) != old_sha:
                    # Something changed the file between the snapshot and the edit.
                    self.history.forget(key)
                    continue
                self.history.push(
                    key,
                    Snapshot(
                        path=resolved,
                        text=old.text if old is not None else None,
                        before_sha256=old_sha,
                        after_sha256=after,
                        attempt_id=report.attempt_id,
                    ),
                )

    def _recorded_before(self, attempt_id: str | None) -> dict[str, str | None] | None:
        """Each file's sha256 before the attempt, as its audit record says (None: unrecorded)."""
        if attempt_id is None:
            return None
        try:
            with Store.open(self.state_dir()) as store:
                record = store.get(attempt_id)
        except PatchRefused:
            return None
        if record is None:
            return None
        return {f.path: f.before_sha256 for f in record.files}

    # -- proposals, recipes, verification -----------------------------------------------------

    def propose(self, args: ProposeArgs) -> ToolResult:
        """Apply a PatchProposal under the server's policy (narrowed by it, never loosened)."""
        from patchsmith.attempt.propose import propose

        proposal: Any = args.proposal
        report = propose(
            proposal,
            self.root,
            check=args.check,
            record=self.record,
            policy=self.policy,
            verify=True if args.verify else None,
            trust=self.trust,
        )
        return from_report(self._without_forbidden_excerpts(report))

    def run_recipe(self, args: RunRecipeArgs) -> ToolResult:
        """Run a codemod recipe: a dry run (the diff), or applied all or nothing."""
        from patchsmith.codemod import Recipe, parse_recipe, run_recipe

        if (args.recipe is None) == (args.recipe_yaml is None):
            raise invalid_arguments("send exactly one of recipe (an id) and recipe_yaml (its text)")
        source: str | Recipe
        if args.recipe is not None:
            if _looks_like_path(args.recipe):
                raise invalid_arguments(
                    f"recipe {args.recipe!r} looks like a path; recipe takes an id",
                    "send a recipe file's text as recipe_yaml",
                )
            source = args.recipe
        else:
            parsed = parse_recipe(args.recipe_yaml or "", source="recipe_yaml")
            if isinstance(parsed, PatchFailure):
                raise refused(parsed)
            source = parsed
        report = run_recipe(
            source,
            self.root,
            apply=args.apply,
            paths=args.paths,
            policy=self.policy,
            record=self.record,
            verify=True if args.verify else None,
            trust=self.trust,
            progress=_recipe_progress,
        )
        return ToolResult(report.to_json(), report.to_text(), is_error=not report.ok)

    def verify(self, args: VerifyArgs) -> ToolResult:
        """Run the workspace's verification profiles; report only what the change broke."""
        from patchsmith.verify.workflow import verify

        if isinstance(self.profiles, PatchFailure):
            raise refused(self.profiles)
        if args.base is not None and args.base.startswith("-"):
            raise invalid_arguments(
                f"base {args.base!r} is not a revision", "send a commit or HEAD"
            )
        report = verify(
            self.root,
            args.profiles,
            base=args.base,
            full=args.full,
            profile_set=self.profiles,
            trust=self.trust,
            in_copy=True,  # the tool is read-only: nothing a profile writes may land here
        )
        if report.errors:
            raise refused(*report.errors)
        return ToolResult(report.to_json(), report.summary(), is_error=not report.passed)

    # -- the audit store ----------------------------------------------------------------------

    def log(self, args: LogArgs) -> ToolResult:
        """The attempts recorded in this workspace, newest first."""
        attempts = []
        if (self.state_dir() / DB_FILE_NAME).is_file():
            with Store.open(self.state_dir()) as store:
                attempts = store.list_attempts(args.limit)
        lines = [
            f"{a.id}  {a.created_at}  {a.kind.value:<7}  {a.status.value:<15}  "
            f"{len(a.files)} file(s)  proposal {a.proposal_id}"
            for a in attempts
        ]
        content: dict[str, object] = {
            "status": "ok",
            "attempts": [a.summary_json() for a in attempts],
            "errors": [],
        }
        return ToolResult(content, "\n".join(lines) or "no attempts recorded")

    def show(self, args: ShowArgs) -> ToolResult:
        """One recorded attempt: files, guard decisions, failures and diff."""
        if not (self.state_dir() / DB_FILE_NAME).is_file():
            raise _not_found(
                f"nothing is recorded under {self.root.name}", "record an attempt first"
            )
        with Store.open(self.state_dir()) as store:
            matches = store.find_ids(args.id, limit=_AMBIGUOUS_LIMIT)
            records = [r for m in matches if (r := store.get(m)) is not None]
        if len(records) == 1:
            record = records[0]
            diff = record.applied_diff or record.staged_diff
            text = (
                f"attempt {record.id}: {record.kind.value} {record.status.value}, "
                f"proposal {record.proposal_id}\n"
                + "".join(f"  {f.action.value} {f.path}\n" for f in record.files)
                + "".join(f"  {f.code.value}: {f.message}\n" for f in record.failures)
                + (diff or "no diff recorded\n")
            )
            return ToolResult({"status": "ok", "attempt": record.to_json(), "errors": []}, text)
        if records:
            shown = ", ".join(r.id for r in records)
            refusal = _not_found(
                f"id prefix {args.id!r} matches several attempts: {shown}",
                "give more characters of the id",
            )
            result = failed(refusal.failures)
            result.content["matches"] = [r.summary_json() for r in records]
            return result
        raise _not_found(f"no attempt with id {args.id!r}", "list the ids with the log tool")

    # -- finishing a run ----------------------------------------------------------------------

    def revert(self, args: RevertArgs) -> ToolResult:
        """Undo an applied attempt whose files are still as it left them."""
        from patchsmith.pipeline.revert import revert

        def run() -> ApplyReport:
            return revert(
                args.id, self.root, check=args.check, record=self.record, policy=self.policy
            )

        # No file is remembered for undo_edit: every file the revert wrote is forgotten.
        return from_report(self._edit((), run))

    def judge(self, args: JudgeArgs) -> ToolResult:
        """Score a recorded attempt or run on the deterministic rubric."""
        from patchsmith.pipeline.judge import judge

        judgement = judge(args.subject, self.root, kind=args.kind, record=args.record)
        lines = [
            f"{judgement.kind.value} {judgement.subject}: {judgement.verdict.value.upper()} "
            f"score {judgement.score:.2f}"
        ]
        for c in judgement.criteria:
            score = f"{c.score:.2f}" if c.applies else " n/a"
            lines.append(f"  {score}  x{c.weight:g}  {c.name:<13} {c.reason}")
        lines.extend(f"note: {note}" for note in judgement.notes)
        return ToolResult(judgement.to_json(), "\n".join(lines), is_error=not judgement.ok)

    def freeze(self, args: FreezeArgs) -> ToolResult:
        """A run's net change as one diff, and (in git) a commit on a new branch."""
        from patchsmith.mcp.results import bounded_diff
        from patchsmith.pipeline.freeze import freeze

        frozen = freeze(args.run_id, self.root, branch=args.branch, commit=args.commit)
        text = (
            f"run {frozen.run_id}: {len(frozen.files)} file(s) from "
            f"{len(frozen.attempts)} attempt(s)"
        )
        if frozen.branch is not None:
            text += f"; branch {frozen.branch} at {frozen.commit}"
        return ToolResult(frozen.to_json(), text + "\n\nDiff:\n" + bounded_diff(frozen.diff))


def _read_on(shown: int, last: int, end: int | None, total: int, limit: int, *, cut: bool) -> str:
    """The note ending a view that stopped at `max_chars`: how to see the rest."""
    ways = []
    if cut:
        ways.append(f"a larger max_chars shows line {shown} whole")
    if shown < last:
        ways.append(f"read on with view_range [{shown + 1}, {end or -1}]")
    return f"[shown up to line {shown} of {total}, within max_chars {limit}: {'; '.join(ways)}]"


def _recipe_progress(step: str, done: int, total: int) -> None:
    from patchsmith.runtime.progress import report

    report(f"{step} ({done}/{total})")


def _not_found(message: str, hint: str) -> PatchRefused:
    return refused(PatchFailure(FailureCode.RECORD_NOT_FOUND, message, hint=hint))


def _looks_like_path(name: str) -> bool:
    return any(c in name for c in "/\\") or name.endswith((".yaml", ".yml", ".json"))


def _paths_in(patch: str, format: EditFormat) -> tuple[str, ...]:
    """The files an edit names (for undo snapshots); parsing twice is cheap next to applying."""
    from patchsmith.formats import parse_edits

    script = parse_edits(patch, format)
    found: list[str] = []
    for edit in script.edits:
        found.append(edit.path)
        if edit.new_path:
            found.append(edit.new_path)
    return tuple(dict.fromkeys(found))


def _walk(base: Path, prefix: str) -> tuple[list[str], bool]:
    """Entries under `base` to depth 2, hidden ones left out, symlinked directories not entered."""
    entries: list[str] = []

    def visit(directory: Path, shown: str, depth: int) -> Iterator[str]:
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
                yield from visit(Path(child.path), shown + child.name + "/", depth + 1)

    for entry in visit(base, prefix, 1):
        if len(entries) >= MAX_LISTED:
            return entries, True
        entries.append(entry)
    return entries, False


def decode_json_strings(
    arguments: Mapping[str, object], model: type[ToolArgs]
) -> dict[str, object]:
    """`arguments` with JSON text decoded where the field takes no string.

    Some clients send a list or an object argument as its JSON text
    (`"view_range": "[1, 20]"`); a field that accepts strings keeps its text as sent.
    """
    from patchsmith.formats.str_replace import decode_arguments

    decoded: dict[str, object] = {}
    for key, value in arguments.items():
        field = model.model_fields.get(key)
        if field is not None and isinstance(value, str) and not _takes_str(field.annotation):
            value = decode_arguments(value)
        decoded[key] = value
    return decoded


def _takes_str(annotation: object) -> bool:
    from typing import get_args

    if annotation is str:
        return True
    return any(_takes_str(arg) for arg in get_args(annotation))


def _problems(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - 5
    return "invalid arguments: " + "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


_READ: frozenset[Effect] = frozenset()
_EDIT = frozenset({Effect.WRITES, Effect.REMOVES})
_ADD = frozenset({Effect.WRITES})
_RUN = frozenset({Effect.WRITES, Effect.REMOVES, Effect.RUNS_PROGRAMS})

_FULL_REWRITE = (
    " A write that drops most of a large file (LARGE_REMOVAL) or its ending "
    "(TRUNCATED_OUTPUT) is refused unless full_rewrite is true."
)

_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        "Read a text file: its sha256 (pass it to write_file as expected_sha256) and "
        "numbered lines, at most max_chars characters of them (a note says how to read "
        "on); view_range [first, last] for a range.",
        ReadFileArgs,
        FileView,
        _READ,
    ),
    ToolSpec(
        "view",
        "View a file's numbered lines (view_range [first, last] for some, at most "
        "max_chars characters) or list a directory (two levels, hidden entries left out). "
        "`.` or the workspace prefix is the root.",
        ViewArgs,
        FileView,
        _READ,
    ),
    ToolSpec(
        "apply",
        "Apply edits written in any format (unified diff, apply_patch envelope, "
        "SEARCH/REPLACE, whole files, str_replace calls, lazy snippets), prose and fences "
        "around them allowed; they may create, rewrite and delete files. All or nothing; "
        "check=true is a dry run. A refusal says why and shows the file's real lines: "
        "resend the edit against them." + _FULL_REWRITE,
        ApplyArgs,
        EditResult,
        _EDIT,
    ),
    ToolSpec(
        "str_replace",
        "Replace old_str, which must occur exactly once in the file, with new_str.",
        StrReplaceArgs,
        EditResult,
        _EDIT,
    ),
    ToolSpec(
        "insert",
        "Insert new_str after line insert_line (0 = at the top of the file).",
        InsertArgs,
        EditResult,
        _ADD,
    ),
    ToolSpec(
        "create",
        "Create a new file with file_text (an existing file is refused).",
        CreateArgs,
        EditResult,
        _ADD,
        idempotent=True,
    ),
    ToolSpec(
        "undo_edit",
        "Undo the last edit this server made to a file, if the file is still as that edit "
        "left it (otherwise refused, nothing written); undoing a create deletes the file.",
        UndoEditArgs,
        EditResult,
        _EDIT,
    ),
    ToolSpec(
        "str_replace_editor",
        "Edit files like a text editor, one command per call: view, create, str_replace, "
        "insert, undo_edit (the arguments of the tools of the same names).",
        EditorArgs,
        ToolOutput,  # a view's result or an edit's
        _EDIT,
    ),
    ToolSpec(
        "write_file",
        "Replace a file whole with content, if it still has expected_sha256 (from "
        "read_file); null expected_sha256 and allow_create true for a new file." + _FULL_REWRITE,
        WriteFileArgs,
        EditResult,
        _EDIT,
        idempotent=True,
    ),
    ToolSpec(
        "propose",
        "Apply a PatchProposal (objective, expected and forbidden files, preconditions, "
        "operations, postconditions, verification plan) under the workspace policy; its "
        "operations may delete files.",
        ProposeArgs,
        EditResult,
        _RUN,
    ),
    ToolSpec(
        "run_recipe",
        "Run a codemod recipe (an id, or recipe_yaml): a dry run showing the diff, or "
        "apply=true to write it all or nothing.",
        RunRecipeArgs,
        RecipeResult,
        _RUN,
    ),
    ToolSpec(
        "verify",
        "Run the workspace's verification profiles (tests, type checks, linters) on a "
        "private copy of it and report only the failures the working tree introduced "
        "since base. Sends a progress notification per profile; cancel stops it.",
        VerifyArgs,
        VerifyResult,
        frozenset({Effect.RUNS_PROGRAMS}),
    ),
    ToolSpec(
        "log",
        "List the attempts recorded in this workspace's audit store, newest first.",
        LogArgs,
        AttemptList,
        frozenset({Effect.READS_STORE}),
    ),
    ToolSpec(
        "show",
        "Show one recorded attempt: its files, guard decisions, failures and diff.",
        ShowArgs,
        AttemptShown,
        frozenset({Effect.READS_STORE}),
    ),
    ToolSpec(
        "revert",
        "Undo an applied attempt (id or unique prefix): every file it touched gets back "
        "the exact bytes it had, if it is still as the attempt left it (else refused with "
        "what changed); a created file is deleted. check=true is a dry run.",
        RevertArgs,
        EditResult,
        _EDIT,
        idempotent=True,
    ),
    ToolSpec(
        "judge",
        "Score a recorded attempt or run on the deterministic rubric (outcome, guards, "
        "verification, scope, size, drift); the judgement is recorded.",
        JudgeArgs,
        Judged,
        frozenset({Effect.RECORDS}),
    ),
    ToolSpec(
        "freeze",
        "Compose a run's applied attempts into one diff and, in a git checkout, commit it "
        "as a new branch (HEAD, the index and the working tree untouched).",
        FreezeArgs,
        Frozen,
        frozenset({Effect.RECORDS}),
        idempotent=True,
    ),
)


def tool_specs() -> tuple[ToolSpec, ...]:
    """Every tool the server can offer (`Toolbox.tools()` leaves out `verify` without profiles)."""
    return _SPECS
