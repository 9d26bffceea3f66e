"""Edges of the verify workflow: odd tool output, private copies, summaries, missing tools."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import patchsmith.verify
from patchsmith.cli import main
from patchsmith.formats.script import Action
from patchsmith.model.evidence import Evidence, RunSide, ToolFailure
from patchsmith.runtime.change import FileChange
from patchsmith.verify.parsers import ParserInput, ParserName, parse_output
from patchsmith.verify.parsers.base import relative_path
from patchsmith.verify.profiles import Profile, ProfileKind
from patchsmith.verify.report import (
    MAX_MESSAGE_CHARS,
    ProfileOutcome,
    VerifyReport,
    with_excerpts,
)
from patchsmith.verify.runner import run_profile
from patchsmith.verify.trees import apply_changes, export_commit, git_tree_id, tree_digest


class TestOddToolOutput:
    @pytest.mark.parametrize("stdout", ["", "not json", '{"a": 1}', "[1, 2]"])
    def test_ruff_without_its_array_finds_nothing(self, stdout: str) -> None:
        """Output that is not ruff's array of objects yields no failure (never an error)."""
        assert [] == parse_output(ParserName.RUFF, ParserInput(stdout, ""))

    def test_ruff_item_without_location(self) -> None:
        """A diagnostic without a location still counts, with no place."""
        item = {"message": "bad", "code": None, "filename": "/w/a.py", "location": None}

        [found] = parse_output(ParserName.RUFF, ParserInput(json.dumps([item]), "", root="/w"))

        assert ("a.py", None, None, None, "bad") == (
            found.file,
            found.line,
            found.col,
            found.code,
            found.message,
        )

    def test_mypy_skips_broken_lines_and_notes(self) -> None:
        """Lines that are not JSON objects and notes are skipped; line 0 means no line."""
        lines = [
            "{broken",
            "[1]",
            json.dumps({"file": "a.py", "line": 3, "severity": "note", "message": "n"}),
            json.dumps(
                {"file": "a.py", "line": 0, "column": -1, "severity": "error", "message": "m"}
            ),
        ]

        [found] = parse_output(ParserName.MYPY, ParserInput("\n".join(lines), ""))

        assert ("a.py", None, None, None, "m") == (
            found.file,
            found.line,
            found.col,
            found.code,
            found.message,
        )

    def test_relative_path(self) -> None:
        """`./x` loses its dot; an absolute path under the root is made relative; others stay."""
        assert "x.py" == relative_path(" ./x.py", "/w")
        assert "pkg/x.py" == relative_path("/w/pkg/x.py", "/w")
        assert "/elsewhere/x.py" == relative_path("/elsewhere/x.py", "/w")
        assert "/w/x.py" == relative_path("/w/x.py", "")


class TestPrivateCopies:
    def test_digest_sees_content_links_and_the_executable_bit(self, tmp_path: Path) -> None:
        """Any of these changes the tree digest; the same tree digests the same."""
        (tmp_path / "a.sh").write_text("echo\n")
        first = tree_digest(tmp_path)
        assert first == tree_digest(tmp_path)
        (tmp_path / "a.sh").chmod(0o755)
        executable = tree_digest(tmp_path)
        (tmp_path / "link").symlink_to("a.sh")
        linked = tree_digest(tmp_path)

        assert len({first, executable, linked}) == 3

    def test_apply_changes_writes_moves_deletes_and_replaces_links(self, tmp_path: Path) -> None:
        """A copy gets every kind of staged change; a link in the way is replaced by a file."""
        (tmp_path / "old.txt").write_text("o\n")
        (tmp_path / "gone.txt").write_text("g\n")
        (tmp_path / "target.txt").write_text("t\n")
        (tmp_path / "link.txt").symlink_to("target.txt")
        changes = [
            FileChange("moved/new.txt", Action.MOVE, "old.txt", b"o\n", b"n\n", new_mode=0o755),
            FileChange("gone.txt", Action.DELETE, None, b"g\n", None),
            FileChange("link.txt", Action.UPDATE, "link.txt", b"t\n", b"file\n"),
        ]

        apply_changes(tmp_path, changes)

        assert not (tmp_path / "old.txt").exists()
        assert "n\n" == (tmp_path / "moved" / "new.txt").read_text()
        assert os.access(tmp_path / "moved" / "new.txt", os.X_OK)
        assert not (tmp_path / "gone.txt").exists()
        assert not (tmp_path / "link.txt").is_symlink()
        assert ("file\n", "t\n") == (
            (tmp_path / "link.txt").read_text(),
            (tmp_path / "target.txt").read_text(),
        )

    def test_outside_git_there_is_no_tree_to_compare_with(self, tmp_path: Path) -> None:
        """No repository: no tree id, no export (the caller then runs without a base)."""
        (tmp_path / "a.txt").write_text("a\n")

        assert git_tree_id(tmp_path) is None
        assert not export_commit(tmp_path, "HEAD", tmp_path / "out")
        assert not (tmp_path / "out").exists()


def _outcome(*introduced: ToolFailure, base: bool = True, passed: bool = False) -> ProfileOutcome:
    run = Evidence("unit", RunSide.CHANGED, ("t",), 1, 0.25, passed, "0" * 64, introduced)
    return ProfileOutcome("unit", ProfileKind.TEST, (run,), introduced, (), (), base, passed)


class TestReports:
    def test_summary_is_bounded_and_says_what_is_hidden(self) -> None:
        """At most `top` failures, each with its place and excerpt; the rest counted."""
        failures = [
            ToolFailure("pytest", f"boom {n}", "t.py", n, 2, "E", f"t{n}", excerpt=f"{n} | x")
            for n in range(1, 5)
        ]
        report = VerifyReport((_outcome(*failures, base=False),))

        text = report.summary(top=2)

        assert "unit (test): FAILED in 0.25 s — 4 introduced" in text
        assert "(no base run: every failure counts)" in text
        assert "t.py:1:2 [E t1] boom 1\n  1 | x" in text
        assert "boom 3" not in text
        assert "... and 2 more introduced failures" in text

    def test_long_messages_are_cut_for_the_model(self) -> None:
        """A huge message is cut in the bounded JSON, whole in the run with output."""
        huge = ToolFailure("pytest", "x" * (MAX_MESSAGE_CHARS * 2))
        outcome = _outcome(huge)

        short = outcome.to_json()
        full = outcome.to_json(output=True)

        assert short["introduced"][0]["message"].endswith(" [...]")  # type: ignore[index]
        assert len(short["introduced"][0]["message"]) < MAX_MESSAGE_CHARS + 10  # type: ignore[index]
        assert "stdout" in full["runs"][0]  # type: ignore[index]
        assert "failures" in short["runs"][0] and 1 == short["runs"][0]["failures"]  # type: ignore[index]

    def test_excerpts_only_from_inside_the_tree(self, tmp_path: Path) -> None:
        """A place outside the tree, a missing or empty file gets no excerpt; a real one does."""
        (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
        (tmp_path / "empty.py").write_text("")
        failures = tuple(
            ToolFailure("t", "m", file, line)
            for file, line in (("../x.py", 1), ("missing.py", 1), ("empty.py", 1), ("a.py", 99))
        )

        found = with_excerpts(failures, tmp_path, top=10)

        assert [None, None, None] == [f.excerpt for f in found[:3]]
        assert found[3].excerpt is not None and "three" in found[3].excerpt

    def test_errors_are_listed(self) -> None:
        """A report with an error says so in its summary and JSON."""
        from patchsmith.errors import FailureCode, PatchFailure

        report = VerifyReport(errors=(PatchFailure(FailureCode.UNKNOWN_PROFILE, "no such"),))

        assert "error UNKNOWN_PROFILE: no such" in report.summary()
        assert "error" == report.to_json()["status"]


class TestRuns:
    def test_a_missing_tool_and_a_timeout_are_failures_not_passes(self, tmp_path: Path) -> None:
        """A tool that cannot start, or runs out of time, fails with its reason."""
        missing = Profile(argv=("no-such-tool-here",))
        slow = Profile(
            argv=(sys.executable, "-c", "import time; time.sleep(30)"), timeout_seconds=0.5
        )

        gone = run_profile("gone", missing, tmp_path, RunSide.CHANGED)
        late = run_profile("late", slow, tmp_path, RunSide.CHANGED)

        assert (False, "not-started") == (gone.passed, gone.failures[0].code)
        assert (False, "timeout", True) == (late.passed, late.failures[0].code, late.timed_out)

    def test_a_report_too_large_is_not_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A report file above the bound is ignored: the exit status decides."""
        from patchsmith.verify import runner

        monkeypatch.setattr(runner, "MAX_REPORT_BYTES", 4)
        writer = "import sys; open(sys.argv[1], 'w').write('<testsuites/>'); sys.exit(1)"
        profile = Profile(argv=(sys.executable, "-c", writer, "{report}"), parser="pytest")

        run = run_profile("unit", profile, tmp_path, RunSide.CHANGED)

        assert ["exit-status"] == [f.code for f in run.failures]

    def test_unknown_attribute_of_the_package(self) -> None:
        """`patchsmith.verify.nothing` is an AttributeError naming the module."""
        with pytest.raises(AttributeError, match=r"patchsmith\.verify"):
            patchsmith.verify.nothing  # noqa: B018


def test_list_without_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`verify --list` in an empty folder says nothing was detected or configured."""
    assert 0 == main(["verify", "--list", "-C", str(tmp_path)])
    assert "no profiles detected or configured" in capsys.readouterr().out
