"""Turn the engine's `FileDiff` sections into `FileEdit` values (udiff and apply_patch share it)."""

from __future__ import annotations

from patchsmith.engine.diffparse import DiffParse
from patchsmith.engine.model import FileDiff, Hunk
from patchsmith.formats._assemble import problem
from patchsmith.formats.script import Action, FileEdit, ParseProblem, WholeContent

__all__ = ["edits_from_diffs", "side_text"]


def side_text(hunks: tuple[Hunk, ...], ops: str) -> str:
    """The text of one side of `hunks` (`ops` " +" for new, " -" for old).

    Every line ends with "\\n" unless a "\\ No newline at end of file" marker follows it.
    """
    kept: list[str] = []
    last_op = ""
    for hunk in hunks:
        for line in hunk.lines:
            op = line[:1]
            if op == "\\":
                if last_op in ops and kept and kept[-1].endswith("\n"):
                    kept[-1] = kept[-1][:-1]
                continue
            last_op = op
            if op in ops:
                body = line[1:]
                kept.append(body if body.endswith("\n") else body + "\n")
    return "".join(kept)


def _edit(diff: FileDiff) -> FileEdit | str:
    """The edit for one section, or why there is none."""
    span = (diff.start_line, diff.end_line)
    if diff.binary:
        return "binary patches are not supported"
    if not diff.has_header:
        return FileEdit("", Action.UPDATE, diff.hunks, start_line=span[0], end_line=span[1])
    old, new = diff.old_path, diff.new_path
    if new is not None and old is None:
        content = (WholeContent(side_text(diff.hunks, " +")),)
        return FileEdit(
            new,
            Action.CREATE,
            content,
            new_mode=diff.new_mode,
            start_line=span[0],
            end_line=span[1],
        )
    if old is not None and new is None:
        removed = (WholeContent(side_text(diff.hunks, " -")),) if diff.hunks else ()
        return FileEdit(old, Action.DELETE, removed, start_line=span[0], end_line=span[1])
    if old is None or new is None:
        return "both paths are /dev/null"
    action = Action.UPDATE if old == new else Action.MOVE
    return FileEdit(
        old,
        action,
        diff.hunks,
        new_path=new if action is Action.MOVE else None,
        new_mode=diff.new_mode,
        start_line=span[0],
        end_line=span[1],
    )


def edits_from_diffs(
    parsed: DiffParse, lines: list[str]
) -> tuple[list[FileEdit], list[ParseProblem]]:
    """Map every section to an edit; sections that cannot be edits become problems."""
    edits: list[FileEdit] = []
    problems = [
        problem(lines, p.message, p.start_line, p.end_line, p.code) for p in parsed.problems
    ]
    for diff in parsed.files:
        edit = _edit(diff)
        if isinstance(edit, str):
            problems.append(problem(lines, edit, diff.start_line + 1, diff.end_line))
        else:
            edits.append(edit)
    problems.sort(key=lambda p: p.start_line)
    return edits, problems
