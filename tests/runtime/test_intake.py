"""`stage_script`: edit scripts located in memory and staged as one change per file."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.runtime.conftest import MakeTree
from tests.workspace_snapshot import snapshot_tree

from patchsmith.engine.model import EngineOptions, Hunk
from patchsmith.errors import FailureCode
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditOp,
    EditScript,
    FileEdit,
    InsertText,
    ParseProblem,
    SearchReplace,
    WholeContent,
)
from patchsmith.model.report import HunkPlacement
from patchsmith.runtime.intake import FileOutcome, StagePlan, stage_script
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace


def _hunk(*lines: str) -> Hunk:
    return Hunk(tuple(line + "\n" for line in lines))


def _edit(
    path: str, *ops: EditOp, action: Action = Action.UPDATE, new_path: str | None = None
) -> FileEdit:
    return FileEdit(path, action, tuple(ops), new_path)


def _stage(
    root: Path, *edits: FileEdit, partial: bool = False, problems: tuple[ParseProblem, ...] = ()
) -> tuple[StagePlan, dict[str, str | None]]:
    """Stage `edits` against `root`; the plan and each staged path's new text (None = gone)."""
    script = EditScript(EditFormat.AUTO, tuple(edits), problems)
    with Transaction(Workspace(root)) as transaction:
        plan = stage_script(
            script, Workspace(root), transaction, options=EngineOptions.default(), partial=partial
        )
        staged: dict[str, str | None] = {}
        for change in transaction.changes:
            if change.old_path is not None and change.old_path != change.path:
                staged[change.old_path] = None
            staged[change.path] = change.new_text
    return plan, staged


def _codes(plan: StagePlan) -> list[FailureCode]:
    return [f.code for f in plan.failures]


class TestStageScript:
    def test_stages_nothing_on_disk(self, make_workspace: MakeTree) -> None:
        """Staging changes files only in the transaction, never on disk."""
        root = make_workspace({"a.txt": b"a\nb\n"})
        before = snapshot_tree(root)

        plan, staged = _stage(root, _edit("a.txt", _hunk(" a", "-b", "+B")))

        assert [] == _codes(plan)
        assert {"a.txt": "a\nB\n"} == staged
        assert before == snapshot_tree(root)

    def test_outcomes_per_file(self, make_workspace: MakeTree) -> None:
        """Each touched file gets one outcome with its applied and total counts."""
        root = make_workspace({"a.txt": b"a\nb\n"})

        plan, _ = _stage(
            root,
            _edit("a.txt", _hunk("-a", "+A"), _hunk("-b", "+B")),
            _edit("n.txt", WholeContent("n\n"), action=Action.CREATE),
        )

        placed = (HunkPlacement(0, 1, "direct"), HunkPlacement(1, 2, "direct"))
        assert (
            FileOutcome("a.txt", Action.UPDATE, 2, 2, placements=placed),
            FileOutcome("n.txt", Action.CREATE, 1, 1),
        ) == plan.files

    def test_problems_are_malformed(self, make_workspace: MakeTree) -> None:
        """Each parse problem is a MALFORMED_PATCH naming its lines, and nothing is staged."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, staged = _stage(
            root,
            _edit("a.txt", _hunk("-a", "+A")),
            problems=(ParseProblem("truncated hunk", 4, 6),),
        )

        assert [FailureCode.MALFORMED_PATCH] == _codes(plan)
        assert "lines 4-6: truncated hunk" == plan.failures[0].message
        assert {} == staged

    def test_empty_script(self, make_workspace: MakeTree) -> None:
        """A script with no edit and no problem is MALFORMED_PATCH ('no edit found')."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(root)

        assert [FailureCode.MALFORMED_PATCH] == _codes(plan)
        assert "no edit found" in plan.failures[0].message

    def test_partial_stages_located_files_only(self, make_workspace: MakeTree) -> None:
        """With partial, the file whose edits located is staged and the other is not."""
        root = make_workspace({"a.txt": b"a\n", "b.txt": b"b\n"})

        plan, staged = _stage(
            root, _edit("a.txt", _hunk("-a", "+A")), _edit("b.txt", _hunk("-z", "+Z")), partial=True
        )

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == _codes(plan)
        assert {"a.txt": "A\n"} == staged

    def test_partial_stages_located_hunks_of_a_file(self, make_workspace: MakeTree) -> None:
        """With partial, the hunks that located in a file are staged without the failed one."""
        root = make_workspace({"a.txt": b"a\nb\n"})

        plan, staged = _stage(
            root, _edit("a.txt", _hunk("-a", "+A"), _hunk("-z", "+Z")), partial=True
        )

        assert [1] == [f.hunk for f in plan.failures]
        assert {"a.txt": "A\nb\n"} == staged


class TestActions:
    def test_delete_then_recreate_is_update(self, make_workspace: MakeTree) -> None:
        """Deleting a file then writing it again in one script is an update of the original."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, staged = _stage(
            root,
            _edit("a.txt", action=Action.DELETE),
            _edit("a.txt", WholeContent("new\n")),
        )

        assert [] == _codes(plan)
        assert {"a.txt": "new\n"} == staged
        assert Action.UPDATE == plan.files[0].action

    def test_create_then_delete_stages_nothing(self, make_workspace: MakeTree) -> None:
        """A file created then deleted in one script leaves nothing staged."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, staged = _stage(
            root,
            _edit("n.txt", WholeContent("n\n"), action=Action.CREATE),
            _edit("n.txt", action=Action.DELETE),
        )

        assert [] == _codes(plan)
        assert {} == staged

    def test_delete_twice(self, make_workspace: MakeTree) -> None:
        """Deleting the same file twice is FILE_NOT_FOUND for the second."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(
            root, _edit("a.txt", action=Action.DELETE), _edit("a.txt", action=Action.DELETE)
        )

        assert [FailureCode.FILE_NOT_FOUND] == _codes(plan)
        assert "already deleted" in plan.failures[0].message

    def test_delete_content_check_ignores_endings_and_trailing_space(
        self, make_workspace: MakeTree
    ) -> None:
        """A deletion's expected text matches a CRLF file with trailing spaces."""
        root = make_workspace({"a.txt": b"a  \r\nb\r\n"})

        plan, staged = _stage(root, _edit("a.txt", WholeContent("a\nb\n"), action=Action.DELETE))

        assert [] == _codes(plan)
        assert {"a.txt": None} == staged

    def test_delete_missing_file(self, make_workspace: MakeTree) -> None:
        """Deleting a file that does not exist is FILE_NOT_FOUND."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(root, _edit("b.txt", action=Action.DELETE))

        assert [FailureCode.FILE_NOT_FOUND] == _codes(plan)

    def test_move_without_target(self, make_workspace: MakeTree) -> None:
        """A move that names no target is MALFORMED_PATCH."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(root, _edit("a.txt", action=Action.MOVE))

        assert [FailureCode.MALFORMED_PATCH] == _codes(plan)

    def test_move_of_deleted_file(self, make_workspace: MakeTree) -> None:
        """Moving (and editing) a file this script deleted is FILE_NOT_FOUND, not a crash."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(
            root,
            _edit("a.txt", action=Action.DELETE),
            _edit("a.txt", _hunk("-a", "+A"), action=Action.MOVE, new_path="b.txt"),
        )

        assert [FailureCode.FILE_NOT_FOUND] == _codes(plan)

    def test_move_target_outside(self, make_workspace: MakeTree) -> None:
        """A move target outside the root is PATH_OUTSIDE_WORKSPACE."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(root, _edit("a.txt", action=Action.MOVE, new_path="../b.txt"))

        assert [FailureCode.PATH_OUTSIDE_WORKSPACE] == _codes(plan)

    def test_move_onto_itself_is_an_edit(self, make_workspace: MakeTree) -> None:
        """A move to the same path only applies the edits."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, staged = _stage(
            root, _edit("a.txt", _hunk("-a", "+A"), action=Action.MOVE, new_path="./a.txt")
        )

        assert [] == _codes(plan)
        assert {"a.txt": "A\n"} == staged

    def test_edit_under_moved_name(self, make_workspace: MakeTree) -> None:
        """A file moved earlier in the script can be edited under its new name."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, staged = _stage(
            root,
            _edit("a.txt", action=Action.MOVE, new_path="b.txt"),
            _edit("b.txt", _hunk("-a", "+A")),
        )

        assert [] == _codes(plan)
        assert {"a.txt": None, "b.txt": "A\n"} == staged

    def test_delete_under_moved_name(self, make_workspace: MakeTree) -> None:
        """A file moved then deleted under its new name is simply deleted."""
        root = make_workspace({"a.txt": b"a\n", "c.txt": b"c\n"})

        plan, staged = _stage(
            root,
            _edit("a.txt", action=Action.MOVE, new_path="b.txt"),
            _edit("b.txt", action=Action.DELETE),
        )

        assert [] == _codes(plan)
        assert {"a.txt": None} == staged

    def test_two_moves_to_one_target(self, make_workspace: MakeTree) -> None:
        """Two files moved to one path is refused (CONFLICTING_EDITS)."""
        root = make_workspace({"a.txt": b"a\n", "b.txt": b"b\n"})

        plan, _ = _stage(
            root,
            _edit("a.txt", action=Action.MOVE, new_path="c.txt"),
            _edit("b.txt", action=Action.MOVE, new_path="c.txt"),
        )

        assert FailureCode.CONFLICTING_EDITS in _codes(plan)

    def test_create_twice(self, make_workspace: MakeTree) -> None:
        """Creating the same file twice is FILE_ALREADY_EXISTS for the second."""
        root = make_workspace({})

        plan, _ = _stage(
            root,
            _edit("n.txt", WholeContent("1\n"), action=Action.CREATE),
            _edit("n.txt", WholeContent("1\n"), action=Action.CREATE),
        )

        assert [FailureCode.FILE_ALREADY_EXISTS] == _codes(plan)
        assert "with exactly this content" in plan.failures[0].message


class TestOps:
    def test_insert_at_top_and_end(self, make_workspace: MakeTree) -> None:
        """insert after line 0 and after the last line, in the file's CRLF endings."""
        root = make_workspace({"a.txt": b"a\r\nb"})

        plan, staged = _stage(root, _edit("a.txt", InsertText(0, "top"), InsertText(3, "end\n")))

        assert [] == _codes(plan)
        assert {"a.txt": "top\r\na\r\nb\r\nend\r\n"} == staged

    @pytest.mark.parametrize("line", [-1, 3])
    def test_insert_out_of_range(self, make_workspace: MakeTree, line: int) -> None:
        """An insert_line outside the file is MALFORMED_PATCH with the valid range."""
        root = make_workspace({"a.txt": b"a\nb\n"})

        plan, _ = _stage(root, _edit("a.txt", InsertText(line, "x")))

        assert [FailureCode.MALFORMED_PATCH] == _codes(plan)
        assert "between 0 and 2" in (plan.failures[0].hint or "")

    def test_exact_replace_in_crlf_file(self, make_workspace: MakeTree) -> None:
        """An LF old_str spanning lines matches a CRLF file and new lines get CRLF."""
        root = make_workspace({"a.txt": b"a\r\nb\r\nc\r\n"})

        plan, staged = _stage(root, _edit("a.txt", SearchReplace("a\nb", "A\nB", exact=True)))

        assert [] == _codes(plan)
        assert {"a.txt": "A\r\nB\r\nc\r\n"} == staged

    @pytest.mark.parametrize(
        ("raw", "old", "new", "expected"),
        [
            (b"a\r\nb\r\nc\r\n", "b", "b1\nb2", "a\r\nb1\r\nb2\r\nc\r\n"),
            (b"a\r\nlast", "last", "x\ny", "a\r\nx\r\ny"),
            (b"a\r\nb\r\n", "b", "b1\r\nb2", "a\r\nb1\r\nb2\r\n"),
            (b"a\nb\r\nc\n", "a", "a1\na2", "a1\na2\nb\r\nc\n"),
            (b"one line", "one", "1\n2", "1\n2 line"),
        ],
    )
    def test_one_line_old_str_in_crlf_file(
        self, make_workspace: MakeTree, raw: bytes, old: str, new: str, expected: str
    ) -> None:
        """A one-line old_str in a CRLF line gets CRLF endings in new_str; LF lines keep LF."""
        root = make_workspace({"a.txt": raw})

        plan, staged = _stage(root, _edit("a.txt", SearchReplace(old, new, exact=True)))

        assert [] == _codes(plan)
        assert {"a.txt": expected} == staged

    def test_exact_replace_mid_line(self, make_workspace: MakeTree) -> None:
        """An exact old_str may be part of a line."""
        root = make_workspace({"a.txt": b"value = 1\n"})

        _, staged = _stage(root, _edit("a.txt", SearchReplace("= 1", "= 2", exact=True)))

        assert {"a.txt": "value = 2\n"} == staged

    def test_exact_replace_not_found(self, make_workspace: MakeTree) -> None:
        """An exact old_str that differs in whitespace is PATCH_CONTEXT_MISMATCH."""
        root = make_workspace({"a.txt": b"value = 1\n"})

        plan, _ = _stage(root, _edit("a.txt", SearchReplace("value  = 1", "v", exact=True)))

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == _codes(plan)
        assert "1 | value = 1" in (plan.failures[0].excerpt or "")

    def test_exact_replace_overlapping_is_ambiguous(self, make_workspace: MakeTree) -> None:
        """An old_str found at two overlapping places ('aa' in 'aaa') is AMBIGUOUS_MATCH."""
        root = make_workspace({"a.txt": b"aaa\n"})

        plan, _ = _stage(root, _edit("a.txt", SearchReplace("aa", "b", exact=True)))

        assert [FailureCode.AMBIGUOUS_MATCH] == _codes(plan)

    def test_exact_replace_counts_occurrences(self, make_workspace: MakeTree) -> None:
        """An ambiguous old_str's message says how often it occurs."""
        root = make_workspace({"a.txt": b"v\nv\nv\n"})

        plan, _ = _stage(root, _edit("a.txt", SearchReplace("v", "w", exact=True)))

        assert "occurs 3 times" in plan.failures[0].message

    def test_exact_replace_empty(self, make_workspace: MakeTree) -> None:
        """An empty exact old_str never matches."""
        root = make_workspace({"a.txt": b"a\n"})

        plan, _ = _stage(root, _edit("a.txt", SearchReplace("", "x", exact=True)))

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == _codes(plan)

    def test_append_to_crlf_file(self, make_workspace: MakeTree) -> None:
        """An empty SEARCH appends to a CRLF file with CRLF endings."""
        root = make_workspace({"a.txt": b"a\r\n"})

        _, staged = _stage(root, _edit("a.txt", SearchReplace("", "b\nc\n")))

        assert {"a.txt": "a\r\nb\r\nc\r\n"} == staged

    def test_ops_mixed_in_order(self, make_workspace: MakeTree) -> None:
        """A hunk, a block and another hunk for one file apply in order."""
        root = make_workspace({"a.txt": b"a\nb\nc\n"})

        plan, staged = _stage(
            root,
            _edit("a.txt", _hunk("-a", "+A"), SearchReplace("A\n", "AA\n"), _hunk("-c", "+C")),
        )

        assert [] == _codes(plan)
        assert {"a.txt": "AA\nb\nC\n"} == staged

    def test_search_block_uses_line_hint(self, make_workspace: MakeTree) -> None:
        """A SEARCH block occurring twice is placed by its line hint, if given."""
        root = make_workspace({"a.txt": b"x\nb\ny\nb\nz\n"})

        plan, staged = _stage(root, _edit("a.txt", SearchReplace("b\n", "B\n", line_hint=4)))

        assert ([], {"a.txt": "x\nb\ny\nB\nz\n"}) == (_codes(plan), staged)

    def test_hunk_on_empty_file(self, make_workspace: MakeTree) -> None:
        """A hunk against an empty file is refused with a hint to send the whole file."""
        root = make_workspace({"a.txt": b""})

        plan, _ = _stage(root, _edit("a.txt", _hunk("-a", "+b")))

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == _codes(plan)
        assert "empty" in (plan.failures[0].hint or "")
        assert plan.failures[0].excerpt is None

    def test_no_change_hunk(self, make_workspace: MakeTree) -> None:
        """A hunk with only context lines is refused as changing nothing."""
        root = make_workspace({"a.txt": b"a\nb\n"})

        plan, _ = _stage(root, _edit("a.txt", _hunk(" a", " b")))

        assert [FailureCode.NO_CHANGE] == _codes(plan)
        assert "add its '-' and '+' lines" in (plan.failures[0].hint or "")

    def test_whole_content_into_crlf_file(self, make_workspace: MakeTree) -> None:
        """LF whole content for a CRLF file is written with CRLF."""
        root = make_workspace({"a.txt": b"a\r\n"})

        _, staged = _stage(root, _edit("a.txt", WholeContent("b\nc\n")))

        assert {"a.txt": "b\r\nc\r\n"} == staged


class TestPaths:
    def test_absolute_path_inside_root(self, make_workspace: MakeTree) -> None:
        """An absolute path under the root maps to its relative path."""
        root = make_workspace({"d/a.txt": b"a\n"})

        plan, staged = _stage(root, _edit(str(root / "d" / "a.txt"), _hunk("-a", "+A")))

        assert [] == _codes(plan)
        assert {"d/a.txt": "A\n"} == staged

    def test_absolute_path_through_symlinked_root(
        self, make_workspace: MakeTree, tmp_path: Path
    ) -> None:
        """An absolute path under the root's real location also maps inside."""
        real = make_workspace({"a.txt": b"a\n"})
        link = tmp_path / "link"
        link.symlink_to(real)

        plan, staged = _stage(link, _edit(str(real / "a.txt"), _hunk("-a", "+A")))

        assert ([], {"a.txt": "A\n"}) == (_codes(plan), staged)

    def test_headerless_single_file(self, make_workspace: MakeTree) -> None:
        """A nameless edit goes to the workspace's only file even if it will not apply there."""
        root = make_workspace({"only.txt": b"a\n"})

        plan, _ = _stage(root, _edit("", _hunk("-zzz", "+Z")))

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == _codes(plan)
        assert "only.txt" == plan.failures[0].file

    def test_headerless_skips_binary_and_tool_dirs(self, make_workspace: MakeTree) -> None:
        """Guessing ignores binary files and .git (never edited), then finds the one fit."""
        root = make_workspace(
            {
                "bin.dat": b"a\x00\n",
                ".git/x.txt": b"a\n",
                "node_modules/m.js": b"z\n",
                "src/a.txt": b"a\nb\n",
                "src/c.txt": b"c\n",
            }
        )

        plan, staged = _stage(root, _edit("", _hunk("-a", "+A")))

        assert ([], {"src/a.txt": "A\nb\n"}) == (_codes(plan), staged)

    def test_headerless_whole_content_is_ambiguous(self, make_workspace: MakeTree) -> None:
        """Nameless whole content with several files fits them all: AMBIGUOUS_MATCH."""
        root = make_workspace({"a.txt": b"a\n", "b.txt": b"b\n"})

        plan, _ = _stage(root, _edit("", WholeContent("x\n")))

        assert [FailureCode.AMBIGUOUS_MATCH] == _codes(plan)

    def test_headerless_fitting_no_file(self, make_workspace: MakeTree) -> None:
        """A nameless hunk that fits none of several files is MALFORMED_PATCH."""
        root = make_workspace({"a.txt": b"a\n", "b.txt": b"b\n"})

        plan, _ = _stage(root, _edit("", _hunk("-zzz", "+Z")))

        assert [FailureCode.MALFORMED_PATCH] == _codes(plan)
        assert "names no file" in plan.failures[0].message
