"""Every ambiguous edit names where it matched: `candidates`, the lines in the message, and a
bounded excerpt per place; where anything applies is unchanged (only the refusal speaks).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import apply
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.origin import CallOrigin

REPEATED = "def f{n}():\n    x = 1\n    return x\n\n"


def _tree(tmp_path: Path, copies: int) -> Path:
    text = "".join(REPEATED.format(n=n) for n in range(copies))
    return make_tree(tmp_path / "ws", {"m.py": text.encode()})


def _only(report_errors: tuple[PatchFailure, ...]) -> PatchFailure:
    assert 1 == len(report_errors), report_errors
    return report_errors[0]


def _call(old_str: str, path: str = "m.py") -> str:
    return json.dumps({"command": "str_replace", "path": path, "old_str": old_str, "new_str": "y"})


class TestStrReplace:
    def test_candidates_message_and_excerpt(self, tmp_path: Path) -> None:
        """old_str four times: lines 2, 6, 10 and 14 named in candidates, message and excerpt."""
        root = _tree(tmp_path, 4)
        before = snapshot_tree(root)

        failure = _only(apply(_call("    x = 1\n"), root, record=False).errors)

        assert FailureCode.AMBIGUOUS_MATCH is failure.code
        assert (2, 6, 10, 14) == failure.candidates
        assert "occurs 4 times in m.py, at lines 2, 6, 10 and 14" in failure.message
        assert failure.excerpt is not None
        for n, line in enumerate((2, 6, 10, 14), 1):
            assert f"-- place {n} of 4: line {line} --" in failure.excerpt
        assert failure.hint is not None and "old_str longer" in failure.hint
        assert 1.0 == failure.similarity
        assert before == snapshot_tree(root)

    def test_json_carries_the_candidates(self, tmp_path: Path) -> None:
        """`to_json` lists the candidate lines (what an MCP client and `--json` read)."""
        root = _tree(tmp_path, 2)

        data = apply(_call("return x"), root, record=False).errors[0].to_json()

        assert [3, 7] == data["candidates"]

    def test_excerpt_is_bounded_and_names_the_rest(self, tmp_path: Path) -> None:
        """Forty places: four shown in full, the rest listed by line, the message bounded."""
        root = _tree(tmp_path, 40)

        failure = _only(apply(_call("    x = 1\n"), root, record=False).errors)

        assert 40 == len(failure.candidates)
        assert failure.excerpt is not None
        assert 4 == failure.excerpt.count("-- place ")
        assert "-- also at lines 18, 22" in failure.excerpt
        assert len(failure.excerpt.splitlines()) < 30
        assert "and 32 more" in failure.message

    def test_one_line_twice_is_named_once(self, tmp_path: Path) -> None:
        """Two occurrences on one line: one candidate, and the message says 'on lines'."""
        root = make_tree(tmp_path / "ws", {"a.py": b"x = x\n"})

        failure = _only(apply(_call("x", "a.py"), root, record=False).errors)

        assert (1,) == failure.candidates
        assert "occurs 2 times in a.py, on lines 1" in failure.message

    def test_empty_old_str_names_no_lines_in_a_tool_call(self, tmp_path: Path) -> None:
        """An empty old_str says so, and a tool call is not told about 'lines 1-1'."""
        root = _tree(tmp_path, 1)

        report = apply(_call(""), root, record=False, origin=CallOrigin.tool_call("str_replace"))

        failure = _only(report.errors)
        assert FailureCode.MALFORMED_PATCH is failure.code
        assert "empty old_str" in failure.message
        assert "lines 1-1" not in report.feedback()

    @settings(max_examples=25, deadline=None)
    @given(copies=st.integers(2, 12), width=st.integers(1, 3))
    def test_candidates_are_exactly_the_matches(
        self, tmp_path_factory: pytest.TempPathFactory, copies: int, width: int
    ) -> None:
        """The candidates are the 1-based lines where old_str starts, nothing more or less."""
        root = _tree(tmp_path_factory.mktemp("c"), copies)
        text = (root / "m.py").read_text()
        old = "".join(text.splitlines(keepends=True)[1 : 1 + width])
        starts = []
        at = text.find(old)
        while at >= 0:
            starts.append(text.count("\n", 0, at) + 1)
            at = text.find(old, at + 1)

        failure = _only(apply(_call(old), root, record=False).errors)

        assert tuple(starts) == failure.candidates


class TestHunks:
    def test_ambiguous_hunk_names_its_lines(self, tmp_path: Path) -> None:
        """A hunk that fits three places: its message and candidates name lines 2, 6, 10."""
        root = _tree(tmp_path, 3)
        diff = "--- a/m.py\n+++ b/m.py\n@@\n     x = 1\n-    return x\n+    return 0\n"

        failure = _only(apply(diff, root, record=False).errors)

        assert FailureCode.AMBIGUOUS_MATCH is failure.code
        assert (2, 6, 10) == failure.candidates
        assert failure.message.endswith("at lines 2, 6 and 10")

    @pytest.mark.parametrize("fmt", ["search_replace"])
    def test_ambiguous_block_names_its_lines(self, tmp_path: Path, fmt: str) -> None:
        """A SEARCH block that fits twice names both places."""
        root = _tree(tmp_path, 2)
        reply = "m.py\n```\n<<<<<<< SEARCH\n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n```\n"

        failure = _only(apply(reply, root, record=False, format=fmt).errors)

        assert (2, 6) == failure.candidates
        assert "at lines 2 and 6" in failure.message


class TestLazySnippet:
    def test_ambiguous_chunk_names_its_lines(self, tmp_path: Path) -> None:
        """A snippet chunk whose lines fit two functions: candidates, message and places."""
        body = "    x = 1\n    y = 2\n    return x\n"
        root = make_tree(
            tmp_path / "ws", {"m.py": f"def f():\n{body}\n\ndef g():\n{body}".encode()}
        )
        reply = (
            "m.py\n```python\n# ... existing code ...\n    x = 1\n    z = 3\n    y = 2\n"
            "# ... existing code ...\n```\n"
        )

        failure = _only(apply(reply, root, record=False, format="lazy_snippet").errors)

        assert FailureCode.AMBIGUOUS_MATCH is failure.code
        assert (2, 8) == failure.candidates
        assert failure.message.endswith("at lines 2 and 8")
        assert failure.excerpt is not None and "-- place 2 of 2: line 8 --" in failure.excerpt
