"""`Editor`: the exact argument dicts of Anthropic's text-editor tool and OpenHands'
`str_replace_editor`, answered over patchsmith's transactions (apply, guards, revert)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.adapters import Editor, EditorResult
from patchsmith.errors import FailureCode
from patchsmith.policy import Policy

SOURCE = b"def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    return x\n"
OPENHANDS_NULLS = {
    "file_text": None,
    "old_str": None,
    "new_str": None,
    "insert_line": None,
    "view_range": None,
}


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path / "ws",
        {"m.py": SOURCE, "pkg/a.py": b"A = 1\n", ".hidden/x": b"x\n", ".env": b"KEY=1\n"},
    )


@pytest.fixture(name="editor")
def _editor(root: Path) -> Editor:
    return Editor(root)


def _ok(result: EditorResult) -> str:
    assert not result.is_error, result.text
    return result.text


def _codes(result: EditorResult) -> set[FailureCode]:
    assert result.is_error, result.text
    return {f.code for f in result.failures}


class TestAnthropicTextEditor:
    def test_view_file_numbers_lines(self, editor: Editor) -> None:
        """`view` of a file: `N: text` lines, the whole file."""
        text = _ok(
            editor.str_replace_based_edit_tool({"command": "view", "path": "/workspace/m.py"})
        )

        assert text.splitlines()[:3] == ["1: def f():", "2:     x = 1", "3:     return x"]
        assert 7 == len(text.splitlines())

    @pytest.mark.parametrize("view_range", [[2, 3], "[2, 3]"])
    def test_view_range(self, editor: Editor, view_range: object) -> None:
        """`view_range` [start, end] (also sent as JSON text) shows just those lines."""
        args = {"command": "view", "path": "/workspace/m.py", "view_range": view_range}

        assert ["2:     x = 1", "3:     return x"] == _ok(
            editor.str_replace_based_edit_tool(args)
        ).splitlines()

    def test_view_range_to_the_end(self, editor: Editor) -> None:
        """`[start, -1]` shows from start to the end of the file."""
        args = {"command": "view", "path": "/workspace/m.py", "view_range": [6, -1]}

        assert ["6:     x = 1", "7:     return x"] == _ok(
            editor.str_replace_based_edit_tool(args)
        ).splitlines()

    @pytest.mark.parametrize("bad", [[0, 2], [9, 10], [3, 2], [1], "lines 1-2", [True, 2]])
    def test_bad_view_range(self, editor: Editor, bad: object) -> None:
        """A view_range that is not two lines inside the file is INVALID_ARGUMENTS."""
        args = {"command": "view", "path": "m.py", "view_range": bad}

        assert {FailureCode.INVALID_ARGUMENTS} == _codes(editor.str_replace_based_edit_tool(args))

    @pytest.mark.parametrize("path", ["/workspace", "/workspace/", ".", "/workspace/pkg"])
    def test_view_directory(self, editor: Editor, path: str) -> None:
        """`view` of a directory lists two levels, hidden entries left out."""
        text = _ok(editor.str_replace_based_edit_tool({"command": "view", "path": path}))

        assert "pkg/a.py" in text
        assert ".hidden" not in text and ".env" not in text

    def test_a_long_view_stops_and_names_the_range_that_reads_on(self, root: Path) -> None:
        """A file over max_chars is cut at a line, with the view_range that continues."""
        (root / "big.py").write_text("".join(f"value_{n:04} = {n}\n" for n in range(1, 501)))
        editor = Editor(root, max_chars=1000)

        first = _ok(editor.str_replace_based_edit_tool({"command": "view", "path": "big.py"}))

        assert len(first) < 1400
        note = first.splitlines()[-1]
        assert "big.py has 500 lines" in note and "view_range" in note
        shown = int(first.splitlines()[-2].split(":")[0])
        assert f"[{shown + 1}, -1]" in note
        args = {"command": "view", "path": "big.py", "view_range": [shown + 1, -1]}
        rest = _ok(editor.str_replace_based_edit_tool(args))
        assert rest.startswith(f"{shown + 1}: value_")

    def test_str_replace_edits_and_records(self, root: Path, editor: Editor) -> None:
        """`str_replace` with a unique old_str writes through a recorded attempt."""
        result = editor.str_replace_based_edit_tool(
            {
                "command": "str_replace",
                "path": "/workspace/m.py",
                "old_str": "def g():\n    x = 1",
                "new_str": "def g():\n    x = 2",
            }
        )

        text = _ok(result)
        assert "Applied: m.py" in text and "+    x = 2" in text
        assert result.report is not None and result.report.attempt_id in text
        assert b"def g():\n    x = 2\n" in (root / "m.py").read_bytes()

    def test_ambiguous_old_str_lists_the_candidates(self, root: Path, editor: Editor) -> None:
        """An old_str found twice: refused, its lines named, a longer old_str asked for."""
        before = snapshot_tree(root)

        result = editor.str_replace_based_edit_tool(
            {
                "command": "str_replace",
                "path": "/workspace/m.py",
                "old_str": "x = 1",
                "new_str": "x = 2",
            }
        )

        assert {FailureCode.AMBIGUOUS_MATCH} == _codes(result)
        assert (2, 6) == result.failures[0].candidates
        assert "at lines 2 and 6" in result.text
        assert "call str_replace again" in result.text
        assert "whole reply" not in result.text
        assert before == snapshot_tree(root)

    def test_missing_file_suggests_create(self, editor: Editor) -> None:
        """str_replace on a missing file points at create."""
        result = editor.str_replace_based_edit_tool(
            {"command": "str_replace", "path": "/workspace/new.py", "old_str": "a", "new_str": "b"}
        )

        assert {FailureCode.FILE_NOT_FOUND} == _codes(result)
        assert "call create" in result.text

    def test_create_then_create_again(self, root: Path, editor: Editor) -> None:
        """`create` makes a file; a second create of it is refused (FILE_ALREADY_EXISTS)."""
        args = {"command": "create", "path": "/workspace/pkg/new.py", "file_text": "N = 1\n"}

        _ok(editor.str_replace_based_edit_tool(args))
        same = editor.str_replace_based_edit_tool(args)
        other = editor.str_replace_based_edit_tool({**args, "file_text": "N = 2\n"})

        assert b"N = 1\n" == (root / "pkg" / "new.py").read_bytes()
        assert _ok(same).startswith("Already applied")
        assert "undo_edit" not in same.text
        assert {FailureCode.FILE_ALREADY_EXISTS} == _codes(other)
        assert "str_replace" in other.text

    @pytest.mark.parametrize("key", ["insert_text", "new_str"])
    def test_insert(self, root: Path, editor: Editor, key: str) -> None:
        """`insert` after insert_line, with Claude 4's insert_text or the older new_str."""
        args = {"command": "insert", "path": "/workspace/m.py", "insert_line": 0, key: "# top\n"}

        _ok(editor.str_replace_based_edit_tool(args))

        assert (root / "m.py").read_bytes().startswith(b"# top\ndef f():\n")

    def test_insert_with_two_different_texts_is_refused(self, editor: Editor) -> None:
        args = {
            "command": "insert",
            "path": "m.py",
            "insert_line": 1,
            "insert_text": "a\n",
            "new_str": "b\n",
        }

        assert {FailureCode.INVALID_ARGUMENTS} == _codes(editor.str_replace_based_edit_tool(args))

    def test_undo_edit_reverts_this_editors_edits_latest_first(
        self, root: Path, editor: Editor
    ) -> None:
        """Two edits, two undos: the file is back as it was; a third undo has nothing left."""
        path = "/workspace/m.py"
        _ok(
            editor.str_replace_based_edit_tool(
                {"command": "insert", "path": path, "insert_line": 0, "insert_text": "# one\n"}
            )
        )
        _ok(
            editor.str_replace_based_edit_tool(
                {"command": "insert", "path": path, "insert_line": 0, "insert_text": "# two\n"}
            )
        )

        first = _ok(editor.str_replace_based_edit_tool({"command": "undo_edit", "path": path}))
        assert (root / "m.py").read_bytes() == b"# one\n" + SOURCE
        assert first.startswith("Undone: m.py")
        _ok(editor.str_replace_based_edit_tool({"command": "undo_edit", "path": path}))
        assert SOURCE == (root / "m.py").read_bytes()
        third = editor.str_replace_based_edit_tool({"command": "undo_edit", "path": path})
        assert {FailureCode.RECORD_NOT_FOUND} == _codes(third)

    def test_undo_edit_never_overwrites_a_later_change(self, root: Path, editor: Editor) -> None:
        """The file changed after the edit: undo is refused and the file is left as it is."""
        _ok(
            editor.str_replace_based_edit_tool(
                {"command": "insert", "path": "m.py", "insert_line": 0, "insert_text": "# one\n"}
            )
        )
        (root / "m.py").write_bytes(b"changed by hand\n")

        result = editor.str_replace_based_edit_tool({"command": "undo_edit", "path": "m.py"})

        assert {FailureCode.STALE_FILE} == _codes(result)
        assert b"changed by hand\n" == (root / "m.py").read_bytes()

    def test_undo_edit_needs_the_record(self, root: Path) -> None:
        """With recording off there is nothing to revert from: refused, said why."""
        editor = Editor(root, record=False)
        _ok(
            editor.str_replace_based_edit_tool(
                {"command": "insert", "path": "m.py", "insert_line": 0, "insert_text": "# one\n"}
            )
        )

        result = editor.str_replace_based_edit_tool({"command": "undo_edit", "path": "m.py"})

        assert {FailureCode.RECORD_NOT_FOUND} == _codes(result)
        assert "record" in result.text

    @pytest.mark.parametrize(
        "path", ["/etc/passwd", "/workspace/../etc/passwd", "../x.py", "/workspacex/m.py"]
    )
    def test_paths_outside_are_refused(self, root: Path, editor: Editor, path: str) -> None:
        """Absolute paths under no base, and traversal after the prefix, are refused."""
        before = snapshot_tree(root)
        for args in (
            {"command": "view", "path": path},
            {"command": "create", "path": path, "file_text": "x\n"},
        ):
            result = editor.str_replace_based_edit_tool(args)

            assert {FailureCode.PATH_OUTSIDE_WORKSPACE} == _codes(result), args
        assert before == snapshot_tree(root)

    def test_forbidden_file_is_not_shown(self, root: Path) -> None:
        """A file the policy forbids is refused for view: its content is never returned."""
        editor = Editor(root, policy=Policy(forbidden=(".env",)))

        result = editor.str_replace_based_edit_tool({"command": "view", "path": "/workspace/.env"})

        assert {FailureCode.FORBIDDEN_PATH} == _codes(result)
        assert "KEY" not in result.text

    @pytest.mark.parametrize(
        ("args", "says"),
        [
            ({"command": "delete", "path": "m.py"}, "unknown command"),
            ({"path": "m.py"}, "unknown command"),
            ({"command": "view"}, "needs a path"),
            ({"command": "create", "path": "m.py", "old_str": "x"}, "create takes no old_str"),
            ({"command": "insert", "path": "m.py", "insert_line": 1}, "insert needs new_str"),
        ],
    )
    def test_bad_arguments(self, editor: Editor, args: dict[str, object], says: str) -> None:
        result = editor.str_replace_based_edit_tool(args)

        assert {FailureCode.INVALID_ARGUMENTS} == _codes(result)
        assert says in result.text

    def test_tool_result_block(self, editor: Editor) -> None:
        """`tool_result` is the Messages API block answering the call."""
        result = editor.str_replace_based_edit_tool({"command": "view", "path": "pkg/a.py"})

        assert {
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "content": "1: A = 1",
            "is_error": False,
        } == result.tool_result("toolu_01")
        assert "1: A = 1" == str(result)


class TestOpenHandsEditor:
    def test_strict_mode_nulls_and_cat_n_view(self, editor: Editor) -> None:
        """Every key sent, unused ones null (and metadata keys): a `cat -n` view."""
        args = {"command": "view", "path": "/workspace/pkg/a.py", **OPENHANDS_NULLS}
        args["security_risk"] = "LOW"

        assert "     1\tA = 1" == _ok(editor.str_replace_editor(args))

    def test_edit_cycle(self, root: Path, editor: Editor) -> None:
        """create, str_replace, insert, undo_edit with OpenHands' argument shapes."""
        path = "/workspace/pkg/b.py"
        _ok(
            editor.str_replace_editor(
                {**OPENHANDS_NULLS, "command": "create", "path": path, "file_text": "B = 1\n"}
            )
        )
        _ok(
            editor.str_replace_editor(
                {
                    **OPENHANDS_NULLS,
                    "command": "str_replace",
                    "path": path,
                    "old_str": "B = 1",
                    "new_str": "B = 2",
                }
            )
        )
        _ok(
            editor.str_replace_editor(
                {
                    **OPENHANDS_NULLS,
                    "command": "insert",
                    "path": path,
                    "insert_line": 1,
                    "new_str": "C = 3",
                }
            )
        )
        assert b"B = 2\nC = 3\n" == (root / "pkg" / "b.py").read_bytes()

        _ok(editor.str_replace_editor({"command": "undo_edit", "path": path}))
        assert b"B = 2\n" == (root / "pkg" / "b.py").read_bytes()

    def test_str_replace_without_new_str_deletes_the_text(self, root: Path, editor: Editor) -> None:
        """new_str left out (null) replaces old_str with nothing, as the tool documents."""
        _ok(
            editor.str_replace_editor(
                {
                    **OPENHANDS_NULLS,
                    "command": "str_replace",
                    "path": "m.py",
                    "old_str": "def f():\n    x = 1\n    return x\n\n",
                }
            )
        )

        assert (root / "m.py").read_bytes().startswith(b"def g():\n")


class TestConstruction:
    def test_root_must_be_a_directory(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="not a directory"):
            Editor(tmp_path / "missing")

    def test_max_chars_has_a_floor(self, root: Path) -> None:
        with pytest.raises(ValueError, match="max_chars"):
            Editor(root, max_chars=10)

    def test_arguments_must_be_an_object(self, editor: Editor) -> None:
        result = editor.str_replace_based_edit_tool(json.loads('["view"]'))  # type: ignore[arg-type]

        assert {FailureCode.INVALID_ARGUMENTS} == _codes(result)
