"""Fuzz targets, one per parser: any text gives a structured result, never an exception.

Inputs are built from the markers each format reacts to, mixed with arbitrary text, so
the parsers' edge paths are reached within a small budget (these run in CI with the rest
of the suite). A failing example is a bug: the parser must turn it into a `ParseProblem`
or a refusal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.attempt.api import apply
from patchsmith.errors import PatchFailure
from patchsmith.formats import parse_edits
from patchsmith.formats.registry import parser_for
from patchsmith.formats.script import EditFormat, EditScript
from patchsmith.model.proposal import PatchProposal, load_proposal
from patchsmith.model.report import ApplyReport, ApplyStatus

FRAGMENTS = (
    "--- a/a.py",
    "+++ b/a.py",
    "--- /dev/null",
    "+++ b/new.py",
    "diff --git a/a.py b/a.py",
    "@@ -1,2 +1,2 @@",
    "@@ -0,0 +1 @@",
    "@@ @@",
    "@@ def f():",
    " x = 1",
    "-x = 1",
    "+x = 2",
    "\\ No newline at end of file",
    "*** Begin Patch",
    "*** Update File: a.py",
    "*** Add File: b.py",
    "*** Delete File: a.py",
    "*** Move to: c.py",
    "*** End of File",
    "*** End Patch",
    "<<<<<<< SEARCH",
    "=======",
    ">>>>>>> REPLACE",
    "```",
    "```python",
    "~~~",
    "a.py",
    "...",
    "# ... existing code ...",
    '{"command": "str_replace", "path": "a.py", "old_str": "x = 1", "new_str": "x = 2"}',
    '{"command": "create", "path": "n.py", "file_text": "y\\n"}',
    '{"command": "insert", "path": "a.py", "insert_line": 99, "new_str": "z"}',
    '{"path": "a\\ud800.py", "command": "view"}',
    '{"tool_calls": [{"function": {"arguments": "{\\"command\\": 1}"}}]}',
    "[" * 40,
    "{" * 40,
    "\ud800",
    "\t",
    "\r",
    "",
)

TEXTS = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=24).map(
    "\n".join
)

SMALL = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _parses(fmt: EditFormat, text: str) -> None:
    entry = parser_for(fmt)
    assert entry is not None
    script = entry.parse(text)
    assert isinstance(script, EditScript)
    for problem in script.problems:
        assert 1 <= problem.start_line <= problem.end_line


@SMALL
@given(TEXTS)
def test_udiff(text: str) -> None:
    _parses(EditFormat.UDIFF, text)


@SMALL
@given(TEXTS)
def test_apply_patch(text: str) -> None:
    _parses(EditFormat.APPLY_PATCH, text)


@SMALL
@given(TEXTS)
def test_search_replace(text: str) -> None:
    _parses(EditFormat.SEARCH_REPLACE, text)


@SMALL
@given(TEXTS)
def test_whole_file(text: str) -> None:
    _parses(EditFormat.WHOLE_FILE, text)


@SMALL
@given(TEXTS)
def test_str_replace_json(text: str) -> None:
    _parses(EditFormat.STR_REPLACE, text)


@SMALL
@given(TEXTS)
def test_auto_detection(text: str) -> None:
    script = parse_edits(text)
    assert isinstance(script, EditScript)
    assert script.edits or script.problems or not text.strip()


PROPOSALS = st.one_of(
    TEXTS,
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    ).map(lambda value: {"operations": value, "id": "p"}),
)


@SMALL
@given(PROPOSALS)
def test_proposals(source: str | dict[str, object]) -> None:
    if isinstance(source, str) and "\n" not in source and Path(source).exists():
        return  # a one-line text naming a real file is read as that file
    loaded = load_proposal(source)
    assert isinstance(loaded, PatchProposal | PatchFailure)


@SMALL
@given(TEXTS)
def test_apply_end_to_end(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """The whole pipeline: a report every time, and a checked run leaves the tree as it was."""
    root = make_tree(tmp_path_factory.mktemp("ws"), {"a.py": b"x = 1\ny = 2\n", "b.py": b"q\n"})
    before = snapshot_tree(root)
    report = apply(text, root, check=True, record=False)
    assert isinstance(report, ApplyReport)
    assert before == snapshot_tree(root)
    if report.status is ApplyStatus.REFUSED:
        assert report.errors
