"""Tests for `patchsmith.formats.str_replace`."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.formats import str_replace
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditScript,
    InsertText,
    SearchReplace,
    WholeContent,
)

CALL = {"command": "str_replace", "path": "/repo/x.py", "old_str": "a", "new_str": "b"}


class TestDetect:
    def test_keys(self) -> None:
        """Tool-call keys are detected; other JSON is not."""
        assert str_replace.detect(json.dumps(CALL))
        assert not str_replace.detect('{"name": "x"}')


class TestDecodeArguments:
    def test_json_string(self) -> None:
        """A JSON string is decoded; other values pass through."""
        assert {"a": 1} == str_replace.decode_arguments('{"a": 1}')
        assert "{not json" == str_replace.decode_arguments("{not json")
        assert 3 == str_replace.decode_arguments(3)


class TestParse:
    def test_single_call(self) -> None:
        """str_replace is an exact SearchReplace; absolute paths are kept."""
        script = str_replace.parse(json.dumps(CALL))

        assert EditFormat.STR_REPLACE == script.format
        assert ("/repo/x.py", Action.UPDATE, (SearchReplace("a", "b", exact=True),)) == (
            script.edits[0].path,
            script.edits[0].action,
            script.edits[0].ops,
        )

    def test_list_in_prose_and_fence(self) -> None:
        """A list of calls inside a fence, with prose around, merges per file."""
        calls = [CALL, {**CALL, "old_str": "c", "new_str": "d"}]
        script = str_replace.parse("I will:\n```json\n" + json.dumps(calls, indent=1) + "\n```\n")

        assert 2 == len(script.edits[0].ops)
        assert (2, 16) == (script.edits[0].start_line, script.edits[0].end_line)

    def test_wrappers(self) -> None:
        """name/input, tool_use, arguments strings and function wrappers are opened."""
        wrapped = [
            {"name": "str_replace_editor", "input": CALL},
            {"type": "tool_use", "input": CALL},
            {"arguments": json.dumps(CALL)},
            {"tool_calls": [{"function": {"name": "edit", "arguments": json.dumps(CALL)}}]},
        ]
        for value in wrapped:
            assert 1 == len(str_replace.parse(json.dumps(value)).edits)

    def test_create_and_insert(self) -> None:
        """create is a CREATE with the text; insert an InsertText."""
        script = str_replace.parse(
            json.dumps({"command": "create", "path": "n.py", "file_text": "x"})
            + "\n"
            + json.dumps({"command": "insert", "path": "m.py", "insert_line": "3", "new_str": "y"})
        )

        assert [(Action.CREATE, WholeContent("x")), (Action.UPDATE, InsertText(3, "y"))] == [
            (e.action, e.ops[0]) for e in script.edits
        ]

    def test_view_is_recognised(self) -> None:
        """view changes nothing and is not a problem."""
        script = str_replace.parse('{"command": "view", "path": "x"}')

        assert ((), ()) == (script.edits, script.problems)

    def test_commandless_call(self) -> None:
        """An object with path and old_str is a str_replace."""
        script = str_replace.parse('{"path": "x", "old_str": "a", "new_str": ""}')

        assert SearchReplace("a", "", exact=True) == script.edits[0].ops[0]

    def test_problems(self) -> None:
        """undo_edit, unknown commands and missing fields are problems."""
        bad = [
            {"command": "undo_edit", "path": "x"},
            {"command": "rm", "path": "x"},
            {"command": 5, "path": "x"},
            {"command": "str_replace", "old_str": "a"},
            {"command": "str_replace", "path": "x", "old_str": ""},
            {"command": "str_replace", "path": "x", "old_str": "a", "new_str": 1},
            {"command": "create", "path": "x"},
            {"command": "insert", "path": "x", "new_str": "a"},
            {"command": "insert", "path": "x", "insert_line": 1},
        ]
        for call in bad:
            script = str_replace.parse(json.dumps(call))

            assert ((), 1) == (script.edits, len(script.problems)), call

    def test_invalid_json(self) -> None:
        """Broken JSON gives a covering problem."""
        assert 1 == len(str_replace.parse('{"command": "str_replace", "path": ').problems)

    def test_deep_nesting(self) -> None:
        """Deeply nested JSON is handled without raising."""
        assert () == str_replace.parse("[" * 5000 + "{" + "}" + "]" * 5000).edits
        assert () == str_replace.parse('{"command": ' * 5000).edits

    @given(st.text())
    def test_never_raises(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(str_replace.parse('{"command": ' + text), EditScript)
