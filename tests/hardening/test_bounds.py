"""Issue 7, findings 8 and 9: bounded costs and structured refusals on hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.attempt.api import apply
from patchsmith.attempt.propose import propose
from patchsmith.cli import main
from patchsmith.engine.blocks import Op, block_from_search_replace
from patchsmith.engine.linediff import alignment_cost, line_opcodes
from patchsmith.errors import FailureCode
from patchsmith.formats import parse_edits
from patchsmith.guards.syntax import SyntaxGuard
from patchsmith.model.report import ApplyStatus
from patchsmith.policy import Policy
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace


def _never_parse(_guard: object, changes: list[object], _ctx: object) -> list[object]:
    """A syntax guard that fails the test if it is given any file to parse."""
    if changes:
        raise AssertionError("the syntax guard was given an over-size file")
    return []


class TestSizeBeforeParse:
    """Finding 8: no parse of a file the size limit refuses."""

    def test_large_file_is_refused_unread(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(SyntaxGuard, "check", _never_parse)
        big = b"first = 1\n" + b"x = 2\n" * 400
        root = make_tree(tmp_path / "ws", {"big.py": big})
        diff = "--- a/big.py\n+++ b/big.py\n@@ -1 +1 @@\n-first = 1\n+first = 2\n"
        before = snapshot_tree(root)
        report = apply(diff, root, record=False, policy=Policy(max_file_bytes=1000))
        assert [FailureCode.FILE_TOO_LARGE] == [e.code for e in report.errors]
        assert "does not read or edit it" in report.errors[0].message
        assert before == snapshot_tree(root)

    def test_large_new_content_skips_later_guards(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(SyntaxGuard, "check", _never_parse)
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        body = "".join(f"+y{i} = {i}\n" for i in range(200))
        diff = f"--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,200 @@\n{body}"
        report = apply(diff, root, record=False, policy=Policy(max_file_bytes=1000))
        assert ApplyStatus.REFUSED == report.status
        assert [FailureCode.FILE_TOO_LARGE] == [e.code for e in report.errors]

    def test_size_guard_off_reads_the_file(self, tmp_path: Path) -> None:
        big = b"first = 1\n" + b"x = 2\n" * 400
        root = make_tree(tmp_path / "ws", {"big.py": big})
        diff = "--- a/big.py\n+++ b/big.py\n@@ -1 +1 @@\n-first = 1\n+first = 2\n"
        policy = Policy(max_file_bytes=1000, guards={"file_size": False})
        assert apply(diff, root, record=False, policy=policy).ok


class TestBoundedAlignment:
    """Finding 8: repetitive SEARCH/REPLACE pairs are aligned at a bounded cost."""

    def test_repetitive_pair_falls_back_to_one_replacement(self) -> None:
        search = "a\nb\n" * 3000
        replace = "b\na\nc\n" * 3000
        assert alignment_cost(search.split("\n"), replace.split("\n")) > 4_000_000
        block = block_from_search_replace(search, replace)
        assert block.old == ["a", "b"] * 3000
        assert block.new == ["b", "a", "c"] * 3000
        assert all(ln.op is not Op.CONTEXT for ln in block.lines)

    def test_small_pair_keeps_difflib_context(self) -> None:
        block = block_from_search_replace("a\nb\nc\n", "a\nB\nc\n")
        assert [Op.CONTEXT, Op.REMOVE, Op.ADD, Op.CONTEXT] == [ln.op for ln in block.lines]

    @pytest.mark.parametrize(
        ("old", "new"),
        [("abcabc", "abcxabc"), ("aaaa", "aa"), ("", "ab"), ("ab", ""), ("xyz", "xyz")],
    )
    def test_opcodes_rebuild_new_within_and_over_budget(self, old: str, new: str) -> None:
        for budget in (0, 10**9):
            rebuilt = []
            for tag, i1, i2, j1, j2 in line_opcodes(old, new, budget):
                rebuilt.extend(old[i1:i2] if tag == "equal" else new[j1:j2])
            assert new == "".join(rebuilt)

    def test_repetitive_pair_applies(self, tmp_path: Path) -> None:
        search = "a\nb\n" * 2000
        replace = "b\na\nc\n" * 2000
        root = make_tree(tmp_path / "ws", {"m.txt": ("x\n" + search + "y\n").encode()})
        text = f"m.txt\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"
        assert apply(text, root, record=False).ok
        assert (root / "m.txt").read_text() == "x\n" + replace + "y\n"


class TestManySections:
    """Finding 8: many file sections parse (the fence walk is linear)."""

    def test_every_section_is_read(self) -> None:
        text = "".join(f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-x\n+y\n" for i in range(3000))
        script = parse_edits(text)
        assert 3000 == len(script.edits)
        assert not script.problems

    def test_fenced_sections_keep_their_fences_out(self) -> None:
        one = "```diff\n--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-x\n+y\n```\n"
        script = parse_edits("intro\n\n" + one + "\n" + one.replace("f.py", "g.py"))
        assert ["f.py", "g.py"] == [e.path for e in script.edits]
        assert not script.problems


class TestHostileJson:
    """Finding 9: a lone surrogate in a path, a proposal nested 100k deep."""

    def test_lone_surrogate_path_is_refused(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        call = '{"command": "str_replace", "path": "a\\ud800.py", "old_str": "x", "new_str": "y"}'
        report = apply(call, root, record=True)
        assert [FailureCode.MALFORMED_PATCH] == [e.code for e in report.errors]
        assert "lone surrogate" in report.errors[0].message

    def test_lone_surrogate_path_through_the_cli(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        call = '{"command": "create", "path": "\\ud800", "file_text": "x"}'
        patch = tmp_path / "call.json"
        patch.write_text(call)
        code = main(["apply", str(patch), "-C", str(root), "--json"])
        out = json.loads(capsys.readouterr().out)
        assert 0 != code
        assert "MALFORMED_PATCH" == out["errors"][0]["code"]

    @pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000])
    def test_deep_proposal_is_refused(self, tmp_path: Path, text: str) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        report = propose(text, root, record=False)
        assert [FailureCode.INVALID_PROPOSAL] == [e.code for e in report.errors]
        assert "deep" in report.errors[0].message

    def test_deep_proposal_through_the_cli(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        proposal = tmp_path / "p.json"
        proposal.write_text("[" * 100_000)
        code = main(["propose", str(proposal), "-C", str(root), "--json"])
        out = json.loads(capsys.readouterr().out)
        assert 0 != code
        assert "INVALID_PROPOSAL" == out["errors"][0]["code"]


class TestManyFiles:
    """Finding 8: staging thousands of files checks overlaps by lookup (was quadratic)."""

    def test_overlapping_paths_still_conflict(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        transaction = Transaction(Workspace(root))
        assert transaction.create("d/e/f.py", "x") is None
        failure = transaction.create("d", "y")
        assert failure is not None
        assert FailureCode.CONFLICTING_EDITS == failure.code
        assert "d/e/f.py" in failure.message

    def test_thousand_files_stage(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})
        text = "".join(f"d{i % 10}/f{i}.py\n```python\nx = {i}\n```\n" for i in range(1000))
        report = apply(text, root, record=False, check=True)
        assert report.ok
        assert 1000 == len(report.files)
