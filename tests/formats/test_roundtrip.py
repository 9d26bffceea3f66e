"""Round trips: each format's clean rendering of a change parses back to the right edit."""

from __future__ import annotations

import difflib
import json

from hypothesis import assume, given
from hypothesis import strategies as st
from tests.render import (
    render_apply_patch,
    render_search_replace,
    render_str_replace,
    render_udiff,
    render_whole_file,
)

from patchsmith.engine.model import Hunk
from patchsmith.formats import parse_edits
from patchsmith.formats._diffmap import side_text
from patchsmith.formats.script import Action, EditFormat, SearchReplace, WholeContent

# Lines that look like structure in one format or another, plus ordinary ones.
_TRICKY = ["", " ", "\t", "-- x", "++ y", "--- a/q", "+++ b/q", "@@ z", "\\ x", "*** y", "```", "{"]
_PLAIN = ["x = 1", "def f():", "    return x", "}", "# 中文 😀", "  indented", "a - b + c"]

paths = st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,2}\.(py|md|ts)", fullmatch=True)


def texts(pool: list[str], *, final_newline: bool | None = None) -> st.SearchStrategy[str]:
    def join(parts: tuple[list[str], bool]) -> str:
        lines, ends = parts
        ending = ends if final_newline is None else final_newline
        text = "\n".join(lines)
        return text + "\n" if ending and lines else text

    return st.tuples(st.lists(st.sampled_from(pool), max_size=12), st.booleans()).map(join)


def _changes(old: str, new: str) -> list[str]:
    """The removed and added lines difflib finds (what the envelope must carry)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [
        line
        for tag, a1, a2, b1, b2 in matcher.get_opcodes()
        if tag != "equal"
        for line in old_lines[a1:a2] + new_lines[b1:b2]
    ]


class TestUdiffRoundTrip:
    @given(paths, texts(_PLAIN + _TRICKY), texts(_PLAIN + _TRICKY))
    def test_full_context_update(self, path: str, old: str, new: str) -> None:
        """A whole-file-context diff's sides give back the old and new texts."""
        assume(old != new)
        script = parse_edits(render_udiff(path, old, new, context=1000))

        assert (EditFormat.UDIFF, ()) == (script.format, script.problems)
        edit = script.edits[0]
        hunks = tuple(op for op in edit.ops if isinstance(op, Hunk))
        assert (path, Action.UPDATE) == (edit.path, edit.action)
        assert (old, new) == (side_text(hunks, " -"), side_text(hunks, " +"))

    @given(paths, texts(_PLAIN + _TRICKY))
    def test_create_and_delete(self, path: str, text: str) -> None:
        """Creates and deletes carry the whole text, missing final newline included."""
        created = parse_edits(render_udiff(path, None, text)).edits
        deleted = parse_edits(render_udiff(path, text, None)).edits

        assert [(path, Action.CREATE, (WholeContent(text),))] == [
            (e.path, e.action, e.ops) for e in created
        ]
        assert [(path, Action.DELETE)] == [(e.path, e.action) for e in deleted]
        assert all(op == WholeContent(text) for e in deleted for op in e.ops)


class TestApplyPatchRoundTrip:
    @given(
        paths, texts([*_PLAIN, ""], final_newline=True), texts([*_PLAIN, ""], final_newline=True)
    )
    def test_update(self, path: str, old: str, new: str) -> None:
        """An envelope update parses to an UPDATE whose hunks hold every change."""
        assume(old != new)
        script = parse_edits(render_apply_patch(path, old, new))

        assert (EditFormat.APPLY_PATCH, ()) == (script.format, script.problems)
        edit = script.edits[0]
        hunks = tuple(op for op in edit.ops if isinstance(op, Hunk))
        changed = [line for h in hunks for line in h.lines if line[:1] in "-+"]
        assert (path, Action.UPDATE) == (edit.path, edit.action)
        assert len(_changes(old, new)) == len(changed)

    @given(paths, texts(_PLAIN, final_newline=True))
    def test_add_and_delete(self, path: str, text: str) -> None:
        """Add File is a CREATE with the text; Delete File a DELETE."""
        created = parse_edits(render_apply_patch(path, None, text)).edits
        deleted = parse_edits(render_apply_patch(path, text, None)).edits

        assert [(path, Action.CREATE, (WholeContent(text),))] == [
            (e.path, e.action, e.ops) for e in created
        ]
        assert [(path, Action.DELETE, ())] == [(e.path, e.action, e.ops) for e in deleted]


class TestSearchReplaceRoundTrip:
    @given(paths, texts(_PLAIN + _TRICKY, final_newline=True), texts(_PLAIN, final_newline=True))
    def test_block(self, path: str, old: str, new: str) -> None:
        """A block parses to the same search and replace text for its path."""
        script = parse_edits(render_search_replace(path, old, new))

        assert EditFormat.SEARCH_REPLACE == script.format
        assert [(path, Action.UPDATE, (SearchReplace(old, new),))] == [
            (e.path, e.action, e.ops) for e in script.edits
        ]


class TestWholeFileRoundTrip:
    @given(paths, texts([*_PLAIN, "", "```", "````py", "{"], final_newline=True))
    def test_file(self, path: str, text: str) -> None:
        """A fenced file parses to its exact text (fences inside included); named as the
        whole-file format, it is explicit (the file, never a region)."""
        script = parse_edits(render_whole_file(path, text), EditFormat.WHOLE_FILE)

        assert [(path, Action.UPDATE, (WholeContent(text, explicit=True),))] == [
            (e.path, e.action, e.ops) for e in script.edits
        ]


class TestStrReplaceRoundTrip:
    @given(paths, st.text(min_size=1), st.text())
    def test_call(self, path: str, old: str, new: str) -> None:
        """A str_replace call parses to an exact SearchReplace of the same strings."""
        script = parse_edits(render_str_replace(path, old, new))

        assert [(path, Action.UPDATE, (SearchReplace(old, new, exact=True),))] == [
            (e.path, e.action, e.ops) for e in script.edits
        ]

    @given(paths, st.text())
    def test_create(self, path: str, text: str) -> None:
        """A create call parses to a CREATE with the exact text."""
        script = parse_edits(json.dumps({"command": "create", "path": path, "file_text": text}))

        assert [(path, Action.CREATE, (WholeContent(text),))] == [
            (e.path, e.action, e.ops) for e in script.edits
        ]
        assert render_str_replace(path, None, text).startswith("{")
