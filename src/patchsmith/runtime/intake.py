"""From an `EditScript` to staged changes: every edit located against the workspace's files.

Edits are applied to in-memory copies first (a file may be edited by several
blocks, created then edited, moved then edited); only the final text of each
file is staged in the transaction, so the transaction sees one change per file.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from patchsmith.engine.blocks import Op, block_from_hunk, block_from_search_replace, is_elision
from patchsmith.engine.hunks import apply_block, apply_hunk_list, tolerance_detail
from patchsmith.engine.indent import indent_style
from patchsmith.engine.linespans import LineSpan, SpanLog
from patchsmith.engine.locate import NotPlaced
from patchsmith.engine.model import EngineOptions, Hunk, HunkOutcome, SkipReason, Strategy
from patchsmith.engine.textlines import Lines, dominant_ending, split_lines
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditOp,
    EditScript,
    FileEdit,
    InsertText,
    LazySnippet,
    SearchReplace,
    WholeContent,
)
from patchsmith.model.origin import TEXT_REPLY, CallOrigin
from patchsmith.model.report import ApplyWarning, HunkPlacement, WarningCode
from patchsmith.runtime.paths import WORKSPACE_PREFIX, under_root
from patchsmith.runtime.textfile import TextFile, decode_file
from patchsmith.runtime.transaction import (
    EXECUTABLE_FILE_MODE,
    LAZY_BYTES_MIN_CHARS,
    Transaction,
    with_executable,
)
from patchsmith.runtime.workspace import Workspace

if TYPE_CHECKING:
    from patchsmith.engine.excerpt import Lookalike
    from patchsmith.engine.lazy import SnippetRefused

# Loaded where they are used, not here (docs/decisions/0022): the failure excerpts
# (`engine.excerpt`, `runtime.excerpts`), the lazy-snippet merge (`engine.lazy`,
# `runtime.structure`) and `mmap`; an edit that locates needs none of them.

__all__ = ["FileOutcome", "StagePlan", "stage_script"]

# Bounds for finding the file a header-less diff belongs to.
_GUESS_MAX_FILES = 50_000
_GUESS_MAX_BYTES = 16 * 1024 * 1024
# Never edited (version control and patchsmith's own state), or bytecode only.
_SKIP_DIRS = {".git", ".patchsmith", ".hg", ".svn", "__pycache__"}


class FileOutcome(NamedTuple):
    """What the edits to one file amounted to."""

    path: str
    action: Action
    hunks_applied: int
    hunks_total: int
    new_path: str | None = None
    mode: str | None = None
    """The git mode a `new mode` / `new file mode` line gave the file (`100755`, `100644`)."""
    placements: tuple[HunkPlacement, ...] = ()


class StagePlan(NamedTuple):
    """The per-file outcomes and every failure found while locating edits.

    `modes_in_place` names the files whose mode line asked for the mode they already
    have, and whose text the edit leaves as it is: a mode change already applied.
    """

    files: tuple[FileOutcome, ...]
    failures: tuple[PatchFailure, ...]
    modes_in_place: tuple[str, ...] = ()
    warnings: tuple[ApplyWarning, ...] = ()


@dataclass(eq=False, repr=False)  # working state, never compared or shown: only __init__ is built
class _File:
    """One path's evolving state while the script is applied in memory."""

    path: str
    original: TextFile | None
    """The file as read; a big one without its bytes (`raw` is empty; `sha256` is theirs)."""
    text: str | None
    links: int | None = None
    """The link count `original` was read with, when it keeps its bytes."""
    action: Action = Action.UPDATE
    moved_to: str | None = None
    applied: int = 0
    total: int = 0
    failed: bool = False
    executable: bool | None = None
    """What a git mode line asks of the execute bits; `None`: keep them."""
    whole: bool = False
    """The text was sent whole at least once (the review guard looks closer)."""
    placements: list[HunkPlacement] = field(default_factory=list)
    spans: SpanLog | None = field(default_factory=SpanLog)
    """The lines changed so far (original -> `text`); `None` once an edit rewrote the text
    in a way not tracked by line (the line diff then aligns the whole file)."""

    def changed(self, spans: Sequence[LineSpan] | None) -> None:
        """Compose one more step's changed spans (`None`: not known)."""
        if spans is None:
            self.spans = None
        elif self.spans is not None:
            self.spans.then(spans)


@dataclass(eq=False, repr=False)  # working state, never compared or shown: only __init__ is built
class _Run:
    workspace: Workspace
    options: EngineOptions
    partial: bool
    size_limit: int | None = None
    origin: CallOrigin = TEXT_REPLY
    tool_calls: bool = False
    """The edits are editor tool calls (sent as calls, or as their JSON in a reply)."""
    prefixes: tuple[str, ...] = (WORKSPACE_PREFIX,)
    files: dict[str, _File] = field(default_factory=dict)
    moved: dict[str, _File] = field(default_factory=dict)
    """Files this patch moves, by target path (kept by `_move` and `_delete`)."""
    failures: list[PatchFailure] = field(default_factory=list)
    modes_in_place: list[str] = field(default_factory=list)
    warnings: list[ApplyWarning] = field(default_factory=list)

    def fail(self, failure: PatchFailure) -> None:
        self.failures.append(failure)

    @cached_property
    def disk_files(self) -> list[str]:
        """The workspace's files (`_text_files`), listed on first need: nothing is written
        while a patch is staged, so one listing serves every missing path and path guess."""
        return list(_text_files(self.workspace.root))


def stage_script(
    script: EditScript,
    workspace: Workspace,
    transaction: Transaction,
    *,
    options: EngineOptions,
    partial: bool = False,
    size_limit: int | None = None,
    origin: CallOrigin = TEXT_REPLY,
    workspace_prefix: str | None = WORKSPACE_PREFIX,
) -> StagePlan:
    """Locate every edit of `script`; stage the results unless something failed.

    With `partial`, what located is staged even when other edits failed. A file
    larger than `size_limit` bytes is refused as FILE_TOO_LARGE before it is
    read or parsed (the policy's `max_file_bytes`, when its size guard is on).
    Every path the script names (diff headers, envelope lines, block and file paths,
    tool-call arguments) may be absolute under `workspace_prefix` or the root; the
    rest of it is checked as any relative path is. `origin` words the hints for the
    kind of call the script came in.
    """
    tool_calls = origin.is_tool_call or script.format is EditFormat.STR_REPLACE
    prefixes = (workspace_prefix,) if workspace_prefix else ()
    run = _Run(workspace, options, partial, size_limit, origin, tool_calls, prefixes)
    for problem in script.problems:
        truncated = problem.code is FailureCode.TRUNCATED_OUTPUT
        hint = "Fix what the message names in those lines and resend the edit; nothing was applied."
        where = f"lines {problem.start_line}-{problem.end_line}: "
        if origin.is_tool_call:
            # One call: its arguments are all there is, no line of a reply to point at.
            where = ""
            hint = "Fix what the message names and make the call again; nothing was applied."
        if problem.code is FailureCode.PATH_MISMATCH:
            hint = (
                "Name the same file on the --- and +++ lines; to rename a file, add git's "
                "'rename from'/'rename to' lines (or use '*** Move to:'). Nothing was applied."
            )
        run.fail(
            PatchFailure(
                code=problem.code,
                message=where + problem.message,
                hint="The reply stops before its end: resend the rest of the file, or send "
                "the change as a diff; nothing was applied."
                if truncated
                else hint,
            )
        )
    if not script.edits and not script.problems:
        run.fail(
            PatchFailure(
                code=FailureCode.MALFORMED_PATCH,
                message="no edit found in the text",
                hint="Send a unified diff, an apply_patch envelope, SEARCH/REPLACE blocks, "
                "a fenced whole file after its path, or str_replace tool calls.",
            )
        )
    for edit in script.edits:
        _apply_edit(run, edit)
    outcomes = tuple(
        _outcome(f) for f in run.files.values() if f.total or f.action != Action.UPDATE
    )
    if run.failures and not partial:
        return StagePlan(
            outcomes, tuple(run.failures), tuple(run.modes_in_place), tuple(run.warnings)
        )
    for state in run.files.values():
        if state.failed and not state.applied:
            continue
        failure = _stage(run, transaction, state)
        if failure is not None:
            run.fail(failure)
    return StagePlan(outcomes, tuple(run.failures), tuple(run.modes_in_place), tuple(run.warnings))


def _outcome(state: _File) -> FileOutcome:
    mode = None if state.executable is None else _GIT_MODES[state.executable]
    return FileOutcome(
        state.path,
        state.action,
        state.applied,
        state.total,
        state.moved_to,
        mode,
        tuple(state.placements),
    )


def _stage(run: _Run, tx: Transaction, state: _File) -> PatchFailure | None:
    executable = state.executable
    if state.moved_to is not None:
        if state.text is None:
            return None
        return tx.move(state.path, state.moved_to, state.text, executable=executable)
    if state.original is None:
        if state.text is None:
            return None
        return tx.create(state.path, state.text, EXECUTABLE_FILE_MODE if executable else None)
    if state.text is None:
        return tx.delete(state.path)
    mode = state.original.mode
    if state.text == state.original.text and with_executable(mode, executable) == mode:
        if executable is not None:
            run.modes_in_place.append(state.path)
        return None
    spans = None if state.spans is None else state.spans.spans
    return tx.update(
        state.path,
        state.text,
        executable=executable,
        whole_content=state.whole,
        line_spans=spans,
        read=state.original,
        read_links=state.links,
    )


# -- git modes -------------------------------------------------------------------------------------

_GIT_MODES = {True: "100755", False: "100644"}
_FILE_TYPE_BITS = 0o170000
_REGULAR_FILE = 0o100000


def _executable(edit: FileEdit) -> bool | PatchFailure | None:
    """What the edit's git mode line asks of the execute bits (`None`: no line, keep them).

    Symlink and submodule modes never get here: they are refused before staging.
    """
    if edit.new_mode is None or edit.action is Action.DELETE:
        return None
    try:
        mode = int(edit.new_mode, 8)
    except ValueError:
        mode = 0
    if mode & _FILE_TYPE_BITS != _REGULAR_FILE:
        where = edit.new_path or edit.path or "the file"
        return PatchFailure(
            code=FailureCode.MALFORMED_PATCH,
            message=f"{where}: mode {edit.new_mode!r} is not a file mode git writes",
            file=edit.new_path or edit.path or None,
            hint="Use 'new mode 100755' for an executable file or 'new mode 100644' for a "
            "plain one, or leave the mode line out.",
        )
    return bool(mode & 0o100)


def _set_mode(state: _File, executable: bool | None) -> None:
    """Record a mode line on the file; it counts as one edit, applied when staged."""
    if executable is None:
        return
    state.executable = executable
    state.total += 1
    state.applied += 1


# -- paths and files -----------------------------------------------------------------------------


def _relative(run: _Run, path: str) -> str:
    """Map an absolute path under the workspace prefix or the root (as editor tools send
    them) to a relative one; every path of a script comes through here."""
    workspace = run.workspace
    return under_root(path, (*run.prefixes, str(workspace.root), str(workspace.real_root)))


def _open(run: _Run, path: str, *, must_exist: bool) -> _File | None:
    """The state of `path` (read on first use), or None after recording why not."""
    resolved = run.workspace.resolve(_relative(run, path))
    if isinstance(resolved, PatchFailure):
        run.fail(resolved)
        return None
    if resolved in run.files:
        return run.files[resolved]
    moved_here = run.moved.get(resolved)
    if moved_here is not None:
        # Edited under the name an earlier part of this patch moved it to.
        return moved_here
    original: TextFile | None = None
    links: int | None = None
    # One `stat` says whether it is a file, a folder or nothing, and how big it is.
    info = run.workspace.stat_resolved(resolved)
    if info is not None and stat.S_ISREG(info.st_mode):
        too_large = _too_large(run, resolved, info.st_size)
        if too_large is not None:
            run.fail(too_large)
            return None
        raw = run.workspace.read_resolved(resolved, info)
        read = raw if isinstance(raw, PatchFailure) else decode_file(raw.path, raw.raw, raw.mode)
        if isinstance(read, PatchFailure):
            run.fail(read)
            return None
        assert not isinstance(raw, PatchFailure)  # `read` would be that failure
        # A big file is kept without its bytes while the text is edited (they would
        # otherwise sit beside its text, its lines and the new text); the transaction
        # reads them again and checks them against `sha256` (or encodes the text back and
        # checks that, keeping the text as its bytes). A smaller file keeps them and their
        # link count, and the transaction takes them as read (the commit compares them
        # with the disk, under its lock).
        if len(read.raw) < LAZY_BYTES_MIN_CHARS:
            original, links = read, raw.links
        else:
            original = read._replace(raw=b"")
    elif info is not None and stat.S_ISDIR(info.st_mode):
        run.fail(
            PatchFailure(
                code=FailureCode.FILE_NOT_FOUND,
                message=f"{resolved} is a directory, not a file",
                file=resolved,
                hint="Name a file inside it; patchsmith edits files only.",
            )
        )
        return None
    elif must_exist:
        from patchsmith.runtime.excerpts import nearest_paths

        near = nearest_paths(run.disk_files, resolved)
        hint = (
            "Check the path (list the directory first), or create the file "
            "with a /dev/null diff or '*** Add File:'."
        )
        if run.tool_calls:
            hint = (
                "Check the path (view the directory first), or call create with the "
                "file's whole text (file_text) to make it."
            )
        if near:
            hint = "Nearest existing paths: " + ", ".join(near) + ". " + hint
        run.fail(
            PatchFailure(
                code=FailureCode.FILE_NOT_FOUND,
                message=f"{resolved} does not exist",
                file=resolved,
                hint=hint,
            )
        )
        return None
    state = _File(resolved, original, original.text if original else None, links=links)
    run.files[resolved] = state
    return state


def _too_large(run: _Run, path: str, size: int) -> PatchFailure | None:
    """FILE_TOO_LARGE for a file over the size limit, found by its size alone (never read)."""
    if run.size_limit is None:
        return None
    if size <= run.size_limit:
        return None
    return PatchFailure(
        code=FailureCode.FILE_TOO_LARGE,
        message=f"{path} is {size} bytes, above the limit of {run.size_limit}; "
        "patchsmith does not read or edit it",
        file=path,
        hint="Edit this file another way, or raise max_file_bytes in the policy.",
    )


def _sha(state: _File) -> str | None:
    return state.original.sha256 if state.original else None


# -- one file edit ---------------------------------------------------------------------------------


def _apply_edit(run: _Run, edit: FileEdit) -> None:
    executable = _executable(edit)
    if isinstance(executable, PatchFailure):
        run.fail(executable)
        return
    path = edit.path
    if not path:
        guessed = _guess_file(run, edit.ops)
        if guessed is None:
            return
        path = guessed
    if edit.action is Action.CREATE:
        _create(run, path, edit, executable)
    elif edit.action is Action.DELETE:
        _delete(run, path, edit)
    elif edit.action is Action.MOVE:
        _move(run, path, edit, executable)
    else:
        _update(run, path, edit, executable)


def _create(run: _Run, path: str, edit: FileEdit, executable: bool | None) -> None:
    state = _open(run, path, must_exist=False)
    if state is None:
        return
    content = "".join(op.text for op in edit.ops if isinstance(op, WholeContent))
    state.total += 1
    if state.text is not None:
        same = state.text == content
        run.fail(
            PatchFailure(
                code=FailureCode.FILE_ALREADY_EXISTS,
                message=f"{state.path} already exists"
                + (" with exactly this content" if same else ""),
                file=state.path,
                hint="Edit it with str_replace or insert (view it first), or create a "
                "file at another path."
                if run.tool_calls
                else "Send an update (a diff with context) instead of a new file, "
                "or delete the file first.",
                current_sha256=_sha(state),
            )
        )
        state.failed = True
        return
    state.text = content
    state.action = Action.CREATE
    state.applied += 1
    # The mode of a new file is part of creating it, not an edit of its own.
    state.executable = executable


def _delete(run: _Run, path: str, edit: FileEdit) -> None:
    state = _open(run, path, must_exist=True)
    if state is None:
        return
    state.total += 1
    if state.text is None:
        _fail_deleted(run, state)
        return
    expected = "".join(op.text for op in edit.ops if isinstance(op, WholeContent))
    if expected and _normalised(expected) != _normalised(state.text):
        from patchsmith.engine.excerpt import closest_region

        contents = split_lines(state.text).contents
        region = closest_region(contents, split_lines(expected).contents)
        run.fail(
            _with_excerpt(
                PatchFailure(
                    code=FailureCode.PATCH_CONTEXT_MISMATCH,
                    message=f"{state.path} does not hold the lines the deletion removes",
                    file=state.path,
                    hint="Re-read the file; delete it with '*** Delete File:' or a diff "
                    "whose removed lines are its exact current text.",
                    current_sha256=_sha(state),
                ),
                contents,
                region,
            )
        )
        state.failed = True
        return
    state.text = None
    state.action = Action.DELETE
    # Moved earlier in this patch, then deleted under its new name: the original goes.
    if state.moved_to is not None:
        run.moved.pop(state.moved_to, None)
    state.moved_to = None
    state.applied += 1


def _fail_deleted(run: _Run, state: _File) -> None:
    run.fail(
        PatchFailure(
            code=FailureCode.FILE_NOT_FOUND,
            message=f"{state.path} was already deleted by this patch",
            file=state.path,
        )
    )
    state.failed = True


def _normalised(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").rstrip("\n").split("\n")]


def _move(run: _Run, path: str, edit: FileEdit, executable: bool | None) -> None:
    state = _open(run, path, must_exist=True)
    if state is None or edit.new_path is None:
        if edit.new_path is None:
            run.fail(
                PatchFailure(FailureCode.MALFORMED_PATCH, f"the move of {path} names no target")
            )
        return
    if state.text is None:
        _fail_deleted(run, state)
        return
    target = run.workspace.resolve(_relative(run, edit.new_path))
    if isinstance(target, PatchFailure):
        run.fail(target)
        return
    if target != state.path and (run.workspace.exists(target) or target in run.files):
        run.fail(
            PatchFailure(
                code=FailureCode.FILE_ALREADY_EXISTS,
                message=f"cannot move {state.path} to {target}: {target} already exists",
                file=target,
                hint="Choose a free target path, or delete the existing file first.",
            )
        )
        state.failed = True
        return
    _run_ops(run, state, edit.ops)
    _set_mode(state, executable)
    state.action = Action.MOVE
    if state.moved_to is not None:
        run.moved.pop(state.moved_to, None)
    state.moved_to = target if target != state.path else None
    if state.moved_to is not None:
        run.moved[state.moved_to] = state
        state.applied += 1
        state.total += 1


def _update(run: _Run, path: str, edit: FileEdit, executable: bool | None) -> None:
    whole = all(isinstance(op, WholeContent) for op in edit.ops) and edit.ops
    creates = all(isinstance(op, SearchReplace) and not op.search for op in edit.ops) and edit.ops
    state = _open(run, path, must_exist=not (whole or creates))
    if state is None:
        return
    if whole:
        state.whole = True
    if state.text is None:
        state.action = Action.CREATE
        state.text = ""
        state.changed(None)
        if state.original is not None:
            # Deleted earlier in this same patch: recreating it is an update of the original.
            state.action = Action.UPDATE
    _run_ops(run, state, edit.ops)
    _set_mode(state, executable)


def _run_ops(run: _Run, state: _File, ops: Sequence[EditOp]) -> None:
    """Apply ops in order to `state.text`, grouping consecutive hunks."""
    pending: list[Hunk] = []
    for op in ops:
        if isinstance(op, Hunk):
            pending.append(op)
            continue
        if pending:
            _run_hunks(run, state, pending)
            pending = []
        _run_op(run, state, op)
    if pending:
        _run_hunks(run, state, pending)


def _run_hunks(run: _Run, state: _File, hunks: list[Hunk]) -> None:
    assert state.text is not None
    first = state.total
    result = apply_hunk_list(state.text, hunks, run.options)
    state.total += result.total
    state.applied += result.applied
    if result.applied:
        state.text = result.text
        state.changed(result.spans)
    for outcome in result.outcomes:
        if outcome.applied:
            _placed(run, state, first + outcome.index, outcome)
            continue
        if not outcome.applied:
            state.failed = True
            run.fail(
                _hunk_failure(
                    state, first + outcome.index, outcome, hunks[outcome.index], partial=run.partial
                )
            )


def _run_op(run: _Run, state: _File, op: EditOp) -> None:
    assert state.text is not None
    state.total += 1
    index = state.total - 1
    if not isinstance(op, (InsertText, SearchReplace)) or (
        isinstance(op, SearchReplace) and (op.exact or not op.search)
    ):
        state.changed(None)  # the line diff of these edits is found by aligning the texts
    if isinstance(op, (WholeContent, LazySnippet)):
        _snippet(run, state, op, index)
    elif isinstance(op, InsertText):
        _insert(run, state, op, index)
    elif isinstance(op, SearchReplace):
        if op.exact:
            _exact_replace(run, state, op, index)
        else:
            _search_replace(run, state, op, index)


def _snippet(run: _Run, state: _File, op: WholeContent | LazySnippet, index: int) -> None:
    """A fenced file or snippet: placeholders merged, a bare region placed, or the whole text."""
    from patchsmith.engine.lazy import MergeKind, SnippetMerge, SnippetRefused, merge_snippet
    from patchsmith.runtime.structure import structure_for

    assert state.text is not None
    explicit = isinstance(op, WholeContent) and op.explicit
    merged = (
        SnippetMerge(op.text, MergeKind.WHOLE)
        if explicit or not state.text
        else merge_snippet(
            state.text, op.text, state.path, structure=structure_for(state.path, state.text)
        )
    )
    if isinstance(merged, SnippetRefused):
        state.failed = True
        run.fail(_snippet_failure(state, index, merged))
        return
    if merged.kind is MergeKind.WHOLE:
        state.text = _with_file_endings(merged.text, state.text)
        state.whole = True
    else:
        state.text = merged.text
        if merged.by_structure:
            chunks = ", ".join(str(n) for n in merged.by_structure)
            note = (
                f"snippet chunk {chunks} placed right after the block its placeholder ends "
                "(its first lines occur elsewhere too, but nowhere else after the chunk before)"
            )
            run.warnings.append(ApplyWarning(WarningCode.TOLERANCE_USED, note, state.path, index))
    state.applied += 1


def _snippet_failure(state: _File, index: int, refused: SnippetRefused) -> PatchFailure:
    from patchsmith.engine.excerpt import closest_region
    from patchsmith.engine.lazy import SnippetRefusal

    assert state.text is not None
    contents = split_lines(state.text).contents
    if refused.reason is SnippetRefusal.BREAKS_SYNTAX:
        failure = PatchFailure(
            code=FailureCode.SYNTAX_ERROR,
            message=f"snippet for {state.path}: {refused.detail}",
            file=state.path,
            hunk=index,
            hint=(
                "The file parsed before and the merged snippet does not; the excerpt is the "
                "merged text around the problem. Check the lines next to each placeholder "
                "(or send a diff); nothing was applied."
            ),
            current_sha256=_sha(state),
        )
        at = max((refused.line or 1) - 1, 0)
        return _with_excerpt(failure, refused.merged.splitlines(), (at, at + 1), margin=5)
    if refused.reason is SnippetRefusal.AMBIGUOUS:
        places = ", ".join(str(c + 1) for c in refused.candidates[:8])
        code = FailureCode.AMBIGUOUS_MATCH
        hint = (
            f"The lines next to a placeholder occur at lines {places}; keep more unchanged "
            "lines around the change (or send a diff) so that they match one place only."
        )
        first = refused.candidates[0] if refused.candidates else 0
        region: tuple[int, int] | None = (
            first,
            min(first + max(len(refused.chunk), 1), len(contents)),
        )
    else:
        code = FailureCode.PATCH_CONTEXT_MISMATCH
        region = closest_region(contents, list(refused.chunk))
        hint = (
            "Keep at least one unchanged line, copied exactly from the file, next to each "
            "'... existing code ...' placeholder (or send a diff); nothing was applied."
        )
    candidates = tuple(c + 1 for c in refused.candidates)
    failure = PatchFailure(
        code=code,
        message=f"snippet for {state.path}: {refused.detail}"
        + (f", at lines {_places(candidates)}" if candidates else ""),
        file=state.path,
        hunk=index,
        hint=hint,
        current_sha256=_sha(state),
        candidates=candidates,
    )
    if len(candidates) > 1:
        shown = _candidates_excerpt(state.path, contents, candidates, len(refused.chunk))
        return replace(failure, excerpt=shown)
    return _with_excerpt(failure, contents, region)


def _with_file_endings(new_text: str, old_text: str) -> str:
    """Whole new content written with LF goes back with the file's CRLF endings."""
    if "\r\n" in new_text or not old_text:
        return new_text
    if dominant_ending(split_lines(old_text).endings) == "\r\n":
        return new_text.replace("\n", "\r\n")
    return new_text


def _insert(run: _Run, state: _File, op: InsertText, index: int) -> None:
    assert state.text is not None
    lines = split_lines(state.text)
    if not 0 <= op.after_line <= len(lines):
        state.failed = True
        run.fail(
            PatchFailure(
                code=FailureCode.MALFORMED_PATCH,
                message=f"insert_line {op.after_line} is outside {state.path} ({len(lines)} lines)",
                file=state.path,
                hunk=index,
                hint=f"Use an insert_line between 0 and {len(lines)}.",
                current_sha256=_sha(state),
            )
        )
        return
    eol = dominant_ending(lines.endings)
    added = split_lines(op.text if op.text.endswith("\n") else op.text + "\n")
    contents = lines.contents[: op.after_line] + added.contents + lines.contents[op.after_line :]
    endings = lines.endings[: op.after_line] + [eol] * len(added) + lines.endings[op.after_line :]
    for i in range(len(endings) - 1):
        endings[i] = endings[i] or eol
    state.text = Lines(contents, endings).text
    first = max(op.after_line - 1, 0)
    state.changed([LineSpan(first, op.after_line, first, op.after_line + len(added))])
    state.applied += 1


def _exact_replace(run: _Run, state: _File, op: SearchReplace, index: int) -> None:
    """str_replace semantics: `old_str` must occur exactly once, verbatim."""
    assert state.text is not None
    search, replace_with = op.search, op.replace
    count = _occurrences(state.text, search)
    if count == 0 and search and "\r\n" in state.text and "\r\n" not in search:
        search, replace_with = search.replace("\n", "\r\n"), replace_with.replace("\n", "\r\n")
        count = _occurrences(state.text, search)
    if count == 1:
        replace_with = _match_line_ending(state.text, search, replace_with)
        state.text = state.text.replace(search, replace_with, 1)
        state.applied += 1
        return
    state.failed = True
    contents = split_lines(state.text).contents
    wanted = op.search.split("\n")
    if count == 0:
        failure = PatchFailure(
            code=FailureCode.PATCH_CONTEXT_MISMATCH,
            message=f"old_str was not found verbatim in {state.path}",
            file=state.path,
            hunk=index,
            hint="Copy old_str exactly from the excerpt (whitespace included) and retry.",
            current_sha256=_sha(state),
        )
    else:
        lines = _starting_lines(state.text, search)
        places = _places(lines)
        on = "at" if len(lines) == count else "on"
        failure = PatchFailure(
            code=FailureCode.AMBIGUOUS_MATCH,
            message=f"old_str occurs {count} times in {state.path}, {on} lines {places}",
            file=state.path,
            hunk=index,
            hint=f"Make old_str longer (or narrower): it occurs {on} lines {places} (the "
            "excerpt shows each); add a neighbouring line that only the place meant has, "
            "so that old_str occurs exactly once.",
            current_sha256=_sha(state),
            similarity=1.0,
            candidates=lines,
        )
        excerpt = _candidates_excerpt(state.path, contents, lines, len(wanted))
        run.fail(replace(failure, excerpt=excerpt))
        return
    from patchsmith.engine.excerpt import closest_region

    run.fail(_with_excerpt(failure, contents, closest_region(contents, wanted)))


def _match_line_ending(text: str, search: str, replacement: str) -> str:
    """`replacement` with bare LFs as CRLF when the line it lands on ends in CRLF.

    A one-line `old_str` carries no line ending of its own, so a multi-line `new_str`
    would otherwise put bare LFs into a CRLF file.
    """
    if "\n" not in replacement:
        return replacement
    start = text.find(search)
    end = text.find("\n", start + len(search))
    if end < 0:  # on the last line, which has no ending: the line before decides
        end = text.rfind("\n", 0, start)
    if end <= 0 or text[end - 1] != "\r":
        return replacement
    # A match that starts inside a CRLF ("\n" right after the file's "\r") keeps that "\r"
    # before it: the replacement's first "\n" completes it and must not get one of its own.
    before = "\r" if start > 0 and text[start - 1] == "\r" else ""
    return re.sub(r"(?<!\r)\n", "\r\n", before + replacement)[len(before) :]


_MAX_CANDIDATES = 100


def _starting_lines(text: str, needle: str) -> tuple[int, ...]:
    """The 1-based lines where `needle` starts in `text`, each once, the first hundred."""
    found: list[int] = []
    line, counted = 1, 0
    at = text.find(needle)
    while at >= 0 and len(found) < _MAX_CANDIDATES:
        line += text.count("\n", counted, at)
        counted = at
        if not found or found[-1] != line:
            found.append(line)
        at = text.find(needle, at + 1)
    return tuple(found)


def _places(lines: Sequence[int]) -> str:
    """`12, 40 and 77`, or the first few and how many more."""
    shown = [str(n) for n in lines[:_MAX_PLACES_NAMED]]
    more = len(lines) - len(shown)
    if more > 0:
        return ", ".join(shown) + f" and {more} more"
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _occurrences(text: str, needle: str) -> int:
    """Where `needle` starts in `text`, overlapping places included ("aa" is twice in "aaa")."""
    first = text.find(needle) if needle else -1
    if first < 0:
        return 0
    if text.find(needle, first + 1) < 0:
        return 1
    return max(text.count(needle), 2)


def _search_replace(run: _Run, state: _File, op: SearchReplace, index: int) -> None:
    assert state.text is not None
    if not op.search:
        state.text = _append(state.text, op.replace)
        state.applied += 1
        return
    block = block_from_search_replace(op.search, op.replace, op.line_hint)
    lines = split_lines(state.text)
    style = indent_style(lines.contents) if run.options.indent_tolerant else None
    result = apply_block(lines, block, run.options, style)
    if isinstance(result, NotPlaced):
        state.failed = True
        outcome = HunkOutcome(
            index=index,
            applied=False,
            hunk_text=op.search,
            reason=result.reason,
            detail=result.detail,
            candidates=tuple(c + 1 for c in result.candidates),
        )
        run.fail(
            _block_failure(
                state, index, outcome, block.old, block.hint, "SEARCH block", partial=run.partial
            )
        )
        return
    placed = result[1]
    if "\r" in state.text and not run.options.keep_line_endings:
        state.changed(None)  # every CRLF line became LF
    else:
        first = max(placed.start - 1, 0)
        grown = len(result[0]) - len(lines)
        state.changed([LineSpan(first, placed.end, first, placed.end + grown)])
    state.text = result[0].text
    state.applied += 1
    outcome = HunkOutcome(
        index=index,
        applied=True,
        hunk_text=op.search,
        strategy=placed.strategy,
        line=placed.start + 1,
        detail=tolerance_detail(placed),
    )
    _placed(run, state, index, outcome)


# Tolerances that match lines which are not the file's own (beyond whitespace, punctuation
# and indentation): worth a warning, since the model's picture of the file was off.
_LOOSE = {Strategy.PARTIAL_CONTEXT, Strategy.STALE_CONTEXT, Strategy.FUZZY_CONTEXT}


def _placed(run: _Run, state: _File, index: int, outcome: HunkOutcome) -> None:
    """Record where an applied edit landed, by which tolerance, and what to double-check."""
    strategy = outcome.strategy or Strategy.DIRECT
    state.placements.append(HunkPlacement(index, outcome.line or 1, strategy.value, outcome.detail))
    for note in outcome.notes:
        run.warnings.append(ApplyWarning(WarningCode.ANCHOR_ELSEWHERE, note, state.path, index))
    if strategy in _LOOSE:
        run.warnings.append(
            ApplyWarning(
                WarningCode.TOLERANCE_USED,
                f"located by {strategy.value} at line {outcome.line}"
                + (f": {outcome.detail}" if outcome.detail else ""),
                state.path,
                index,
            )
        )


def _append(text: str, addition: str) -> str:
    if not text:
        return addition
    eol = dominant_ending(split_lines(text).endings)
    if not text.endswith("\n"):
        text += eol
    if eol == "\r\n" and "\r\n" not in addition:
        addition = addition.replace("\n", "\r\n")
    return text + addition


# -- failures --------------------------------------------------------------------------------------

_CODES = {
    SkipReason.NO_MATCH: FailureCode.PATCH_CONTEXT_MISMATCH,
    SkipReason.AMBIGUOUS: FailureCode.AMBIGUOUS_MATCH,
    SkipReason.SHORT_AMBIGUOUS_CONTEXT: FailureCode.AMBIGUOUS_MATCH,
    SkipReason.ALREADY_APPLIED: FailureCode.ALREADY_APPLIED,
    SkipReason.NO_CHANGE: FailureCode.NO_CHANGE,
    SkipReason.EMPTY_HUNK: FailureCode.MALFORMED_PATCH,
    SkipReason.MALFORMED: FailureCode.MALFORMED_PATCH,
    SkipReason.NOT_ATTEMPTED: FailureCode.PATCH_CONTEXT_MISMATCH,
    SkipReason.ANCHOR_NOT_FOUND: FailureCode.ANCHOR_NOT_FOUND,
}


def _hunk_failure(
    state: _File, index: int, outcome: HunkOutcome, hunk: Hunk, *, partial: bool
) -> PatchFailure:
    block = block_from_hunk(hunk)
    return _block_failure(state, index, outcome, block.old, block.hint, "hunk", partial=partial)


def _block_failure(
    state: _File,
    index: int,
    outcome: HunkOutcome,
    old: Sequence[str],
    hint_line: int | None,
    what: str,
    *,
    partial: bool,
) -> PatchFailure:
    from patchsmith.engine.excerpt import MAX_LOOKALIKES, lookalikes, similar_regions

    assert state.text is not None
    reason = outcome.reason or SkipReason.NO_MATCH
    # A model resends against the file on disk, so a missing match is shown there (earlier
    # edits of this patch are not written); the other reasons speak of the text as staged.
    # With `partial`, the file is written with the edits that located, so it is shown so.
    shown = state.text
    if reason is SkipReason.NO_MATCH and state.original is not None and not partial:
        shown = state.original.text
    contents = split_lines(shown).contents
    code = _CODES[reason]
    number = index + 1
    ambiguous = reason is SkipReason.AMBIGUOUS and bool(outcome.candidates)
    # An ambiguous match is shown at each place it matched, so no region like it is sought;
    # otherwise the regions are found once, for the excerpt (the best) and the look-alikes.
    found = [] if ambiguous else similar_regions(contents, old, hint_line, limit=MAX_LOOKALIKES)
    best = found[0] if found else None
    region = (best.start, best.end) if best else None
    if region is None and not ambiguous:
        region = _fallback_region(contents, old, hint_line)
    message = f"{what} {number} of {state.path}: {outcome.detail or reason.value}"
    similarity = best.score if best else (0.0 if contents and any(x.strip() for x in old) else None)
    excerpt: str | None = None
    alike: list[Lookalike] = []
    if ambiguous or reason is SkipReason.NO_MATCH:
        starts = [c - 1 for c in outcome.candidates if 0 < c <= len(contents)] if ambiguous else []
        alike = lookalikes(contents, old, hint_line, starts, regions=None if ambiguous else found)
    named = next((x for x in alike if x.named), None)
    if ambiguous:
        message += f", at lines {_places(outcome.candidates)}"
        places = ", ".join(str(c) for c in outcome.candidates[:_MAX_PLACES_NAMED])
        more = len(outcome.candidates) - _MAX_PLACES_NAMED
        hint = (
            f"The {what}'s old lines occur at lines {places}"
            + (f" and {more} more places" if more > 0 else "")
            + "; add unchanged lines around the change until it matches only one place."
        )
        if alike:
            hint += " These places look alike: `lookalikes` lists the lines where each differs."
        if named is not None:
            hint += _named_hint(what, named)
        shown_first = [named.start + 1] if named is not None else []
        order = [*shown_first, *(c for c in outcome.candidates if c not in shown_first)]
        excerpt = _candidates_excerpt(state.path, contents, order, len(old))
        similarity = 1.0
    elif len(alike) >= 2:
        spans = ", ".join(f"{x.start + 1}-{x.end}" for x in alike)
        message += f"; {len(alike)} regions look alike: lines {spans}"
        target = named or alike[0]
        region = (target.start, target.end)
        hint = (
            f"Lines {spans} of {state.path} look alike (see the excerpt, "
            f"lines {target.start + 1}-{target.end} first). "
            f"Make the unchanged and removed lines of {what} {number} the exact current text "
            f"of the one the change is for, with enough unchanged lines that tell it apart."
        )
        if named is not None:
            hint += _named_hint(what, named)
        order = [x.start + 1 for x in alike]
        excerpt = _candidates_excerpt(state.path, contents, order, len(old))
    elif reason is SkipReason.ANCHOR_NOT_FOUND:
        hint = (
            f"The @@ line of {what} {number} must name a line of {state.path} above the change "
            "(a function or class header, copied exactly), or be left empty."
        )
    elif reason is SkipReason.ALREADY_APPLIED:
        hint = f"The file already contains this change; drop {what} {number}."
    elif reason is SkipReason.NO_CHANGE:
        hint = f"{what.capitalize()} {number} changes nothing; add its '-' and '+' lines."
    elif region is not None:
        if not _any_line_exists(contents, old):
            message += (
                f"; none of its {sum(1 for x in old if x.strip())} non-blank old lines occurs "
                f"anywhere in {state.path}"
            )
        if best is not None:
            message += (
                f"; most similar region: lines {region[0] + 1}-{region[1]} "
                f"(similarity {best.score:.2f})"
            )
        hint = (
            f"Make the unchanged and removed lines of {what} {number} the exact current text "
            f"of lines {region[0] + 1}-{region[1]} of {state.path} (shown in the excerpt)."
        )
    else:
        hint = f"{state.path} is empty; send its whole content instead."
    from patchsmith.errors.lookalike import LookAlike  # only a refused hunk has look-alikes

    failure = PatchFailure(
        code=code,
        message=message,
        file=state.path,
        hunk=index,
        hint=hint,
        current_sha256=_sha(state),
        similarity=similarity,
        candidates=outcome.candidates if reason is SkipReason.AMBIGUOUS else (),
        lookalikes=tuple(
            LookAlike(x.start + 1, x.end, x.score, tuple(i + 1 for i in x.differing), named=x.named)
            for x in alike
        ),
    )
    if excerpt is not None:
        return replace(failure, excerpt=excerpt)
    # A wider margin than other excerpts: context the model misremembered may sit just
    # outside the region its remembered lines resemble.
    return _with_excerpt(failure, contents, region, margin=5)


_MAX_PLACES_NAMED = 8


def _named_hint(what: str, named: Lookalike) -> str:
    return (
        f" Its line numbers point at lines {named.start + 1}-{named.end}: the repair must "
        "stay there, not move to a look-alike."
    )


_MAX_CANDIDATE_EXCERPTS = 4
_CANDIDATE_LINES = 12


def _fallback_region(
    contents: Sequence[str], old: Sequence[str], hint_line: int | None
) -> tuple[int, int] | None:
    """Where to look when nothing in the file resembles the edit: its line number, or the top."""
    from patchsmith.engine.excerpt import closest_region

    return closest_region(contents, old, hint_line)


def _any_line_exists(contents: Sequence[str], old: Sequence[str]) -> bool:
    keys = {" ".join(line.split()) for line in contents}
    return any(" ".join(x.split()) in keys for x in old if x.strip())


def _candidates_excerpt(
    path: str, contents: Sequence[str], candidates: Sequence[int], size: int
) -> str:
    """Every place an ambiguous edit matched (the first few shown in full), numbered."""
    from patchsmith.runtime.excerpts import masked_excerpt

    parts = []
    for n, line in enumerate(candidates[:_MAX_CANDIDATE_EXCERPTS], 1):
        start = line - 1
        end = min(start + min(max(size, 1), _CANDIDATE_LINES), len(contents))
        parts.append(f"-- place {n} of {len(candidates)}: line {line} --")
        parts.append(masked_excerpt(path, contents, (start, end), margin=1))
    rest = candidates[_MAX_CANDIDATE_EXCERPTS:]
    if rest:
        parts.append("-- also at lines " + ", ".join(str(x) for x in rest[:20]) + " --")
    return "\n".join(parts)


def _with_excerpt(
    failure: PatchFailure,
    contents: Sequence[str],
    region: tuple[int, int] | None,
    *,
    margin: int = 3,
) -> PatchFailure:
    if region is None:
        return failure
    from patchsmith.runtime.excerpts import masked_excerpt

    excerpt = masked_excerpt(failure.file or "", contents, region, margin=margin)
    return replace(failure, excerpt=excerpt)


# -- header-less diffs ---------------------------------------------------------------------------


def _guess_file(run: _Run, ops: Sequence[EditOp]) -> str | None:
    """The one workspace file that every op of a path-less edit fits, or None (recorded why).

    Every file is a candidate: a cheap byte search for words of the edit's old
    lines skips the files that cannot fit, and the rest are tried in full. The
    search is bounded (`_GUESS_MAX_FILES` files, `_GUESS_MAX_BYTES` per file
    tried in full); when a bound is hit the edit is refused, since the file left
    out might have been a second fit.
    """
    candidates = run.disk_files
    if _TOO_MANY in candidates:
        _guess_refused(run, f"the workspace has more than {_GUESS_MAX_FILES} files")
        return None
    if len(candidates) == 1:
        return candidates[0]
    probes = _probes(ops)
    fits: list[str] = []
    for path in candidates:
        if probes and not _may_hold(run.workspace.root / path, probes):
            continue
        if (run.workspace.root / path).stat().st_size > _GUESS_MAX_BYTES:
            _guess_refused(run, f"{path} may fit and is larger than {_GUESS_MAX_BYTES} bytes")
            return None
        read = run.workspace.read(path)
        if isinstance(read, PatchFailure):
            continue
        scratch = _Run(run.workspace, run.options, partial=False)
        state = _File(path, read, read.text)
        _run_ops(scratch, state, ops)
        if ops and not scratch.failures and state.text != read.text:
            fits.append(path)
            if len(fits) > 1:
                break
    if len(fits) == 1:
        return fits[0]
    run.fail(
        PatchFailure(
            code=FailureCode.MALFORMED_PATCH if not fits else FailureCode.AMBIGUOUS_MATCH,
            message="the edit names no file, and it fits "
            + ("no file of the workspace" if not fits else f"{fits[0]} and {fits[1]}"),
            hint=_NAME_THE_FILE,
        )
    )
    return None


_NAME_THE_FILE = (
    "Name the file: '--- a/PATH' and '+++ b/PATH' lines before a diff's hunks, "
    "or the path on the line before a SEARCH/REPLACE block."
)


def _guess_refused(run: _Run, why: str) -> None:
    run.fail(
        PatchFailure(
            code=FailureCode.MALFORMED_PATCH,
            message=f"the edit names no file, and not every file could be tried: {why}",
            hint=_NAME_THE_FILE,
        )
    )


# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_WORD = r"[A-Za-z0-9_]{3,}"


def _probes(ops: Sequence[EditOp]) -> tuple[bytes, ...]:
    """Words every fitting file must hold: the longest word of each removed line.

    Every tolerance keeps ASCII letters, digits and underscores, and a removed
    line must match its file line, so a file without one of these words cannot
    fit. Context lines may be altered, so they give no probe.
    """
    words: list[bytes] = []
    word = re.compile(_WORD)
    for op in ops:
        if isinstance(op, Hunk):
            removed = [line[1:] for line in op.lines if line.startswith("-")]
        elif isinstance(op, SearchReplace):
            block = block_from_search_replace(op.search, op.replace)
            removed = [ln.text for ln in block.lines if ln.op is Op.REMOVE]
        else:
            continue
        for text in removed:
            found = word.findall(text)
            if found and not is_elision(text):
                words.append(max(found, key=len).encode("ascii"))
    return tuple(dict.fromkeys(words))


def _may_hold(path: Path, probes: tuple[bytes, ...]) -> bool:
    """Whether the file holds every probe (searched in place, never read whole)."""
    import mmap

    try:
        with path.open("rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return False
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return all(view.find(probe) >= 0 for probe in probes)
    except (OSError, ValueError):
        return True  # unreadable here: let the full read report on it


_TOO_MANY = "\0too many files"


def _text_files(root: Path) -> Iterator[str]:
    """Every regular file under `root` outside version-control and state directories."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if full.is_symlink() or not full.is_file():
                continue
            count += 1
            if count > _GUESS_MAX_FILES:
                yield _TOO_MANY
                return
            yield full.relative_to(root).as_posix()
