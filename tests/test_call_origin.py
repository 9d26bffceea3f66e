"""Feedback worded for the call the model made: a text reply, one tool call, or a proposal.

Snapshots of real refusals live in tests/snapshots/feedback/flavors/; after a deliberate
wording change regenerate them with `PATCHSMITH_UPDATE_SNAPSHOTS=1` set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

from patchsmith import apply, propose
from patchsmith.attempt.direct import write_file
from patchsmith.model.origin import PROPOSAL, TEXT_REPLY, CallFlavor, CallOrigin
from patchsmith.model.report import ApplyReport

SNAPSHOTS = Path(__file__).parent / "snapshots" / "feedback" / "flavors"
SOURCE = b"def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    return x\n"
STR_REPLACE = CallOrigin.tool_call("str_replace")


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"m.py": SOURCE})


def _call(command: str, **arguments: object) -> str:
    return json.dumps({"command": command, **arguments})


def _snapshot(name: str, report: ApplyReport) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    text = report.feedback() + "\n"
    if os.environ.get("PATCHSMITH_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text


def _proposal(text: str) -> dict[str, object]:
    return {
        "proposal_id": "p-origin",
        "run_id": "r-origin",
        "attempt_no": 1,
        "strategy": "HYBRID",
        "objective": "return a constant",
        "expected_files": ["m.py"],
        "operations": [{"type": "patch", "format": "udiff", "text": text}],
    }


AMBIGUOUS_DIFF = "--- a/m.py\n+++ b/m.py\n@@\n     x = 1\n-    return x\n+    return 0\n"


class TestToolCall:
    def test_ambiguous_old_str(self, root: Path) -> None:
        """A single str_replace is told to call str_replace again with a longer old_str."""
        report = apply(
            _call("str_replace", path="m.py", old_str="    x = 1\n", new_str="    x = 2\n"),
            root,
            record=False,
            origin=STR_REPLACE,
        )

        text = report.feedback()
        assert "resend the whole reply" not in text.lower()
        assert "call str_replace again" in text
        assert "old_str longer" in text
        assert STR_REPLACE == report.origin
        _snapshot("tool_call-AMBIGUOUS_MATCH", report)

    def test_missing_file_suggests_create(self, root: Path) -> None:
        """str_replace on a missing file points at `create`, not at a /dev/null diff."""
        report = apply(
            _call("str_replace", path="new.py", old_str="x", new_str="y"),
            root,
            record=False,
            origin=STR_REPLACE,
        )

        hint = report.errors[0].hint or ""
        assert "call create" in hint
        assert "/dev/null" not in hint
        _snapshot("tool_call-FILE_NOT_FOUND", report)

    def test_create_over_an_existing_file_suggests_str_replace(self, root: Path) -> None:
        """create on an existing file points at str_replace/insert, not at a diff."""
        report = apply(
            _call("create", path="m.py", file_text="x\n"),
            root,
            record=False,
            origin=CallOrigin.tool_call("create"),
        )

        hint = report.errors[0].hint or ""
        assert "str_replace" in hint and "diff" not in hint
        assert "call create again" in report.feedback()

    def test_a_problem_in_the_call_names_no_reply_lines(self, root: Path) -> None:
        """A malformed call is not located at 'lines 1-1' of a reply that does not exist."""
        report = apply(
            _call("str_replace", path="m.py", old_str="", new_str="y"),
            root,
            record=False,
            origin=STR_REPLACE,
        )

        assert not report.errors[0].message.startswith("lines ")
        assert "make the call again" in (report.errors[0].hint or "")
        _snapshot("tool_call-MALFORMED_PATCH", report)

    def test_write_file_is_a_tool_call(self, root: Path) -> None:
        """`write_file` reports its origin as the write_file tool."""
        report = write_file(root, "m.py", "x = 1\n", "0" * 64, "rewrite", record=False)

        assert CallOrigin(CallFlavor.TOOL_CALL, "write_file") == report.origin


class TestTextReply:
    def test_text_reply_keeps_the_whole_reply_wording(self, root: Path) -> None:
        """A text reply (the default) is still asked for the whole reply, every edit included."""
        report = apply(AMBIGUOUS_DIFF, root, record=False)

        assert TEXT_REPLY == report.origin
        assert "resend the whole reply, every edit included" in report.feedback()
        _snapshot("text-AMBIGUOUS_MATCH", report)

    def test_str_replace_json_in_a_reply_suggests_create_too(self, root: Path) -> None:
        """Editor calls written as JSON in a reply still get the editor's next call."""
        report = apply(_call("str_replace", path="nope.py", old_str="x"), root, record=False)

        assert "call create" in (report.errors[0].hint or "")


class TestProposal:
    def test_proposal_is_asked_for_the_proposal(self, root: Path) -> None:
        """A refused proposal is asked to resend the proposal, every operation included."""
        report = propose(_proposal(AMBIGUOUS_DIFF), root, record=False, allow_unverified=True)

        assert PROPOSAL == report.origin
        text = report.feedback()
        assert "resend the proposal, every operation included" in text
        assert "whole reply" not in text
        assert "AMBIGUOUS_MATCH" in text
        assert (report.errors[0].hint or "").startswith("Nothing was written. Resend the proposal")
        _snapshot("proposal-AMBIGUOUS_MATCH", report)


class TestOriginValue:
    def test_json_and_constructors(self) -> None:
        """`tool_call` names the tool; `to_json` gives flavor and tool."""
        assert {"flavor": "tool_call", "tool": "insert"} == CallOrigin.tool_call("insert").to_json()
        assert {"flavor": "text", "tool": None} == TEXT_REPLY.to_json()
        assert not TEXT_REPLY.is_tool_call and STR_REPLACE.is_tool_call

    def test_settled_is_idempotent_for_every_flavor(self, root: Path) -> None:
        """Settling twice never stacks the retry wording."""
        for origin in (TEXT_REPLY, STR_REPLACE, PROPOSAL):
            report = apply(AMBIGUOUS_DIFF, root, record=False, origin=origin)

            assert report == report.settled()
            assert 1 == (report.errors[0].hint or "").count("Nothing was written")
