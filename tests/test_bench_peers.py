"""The pure parts of `bench/peers.py`: scoring, fencing and prefix stripping, table rendering.

None of these needs a peer installed.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from bench import peers

# peers.py imports bench/accuracy.py as `accuracy`; use its classes, not a second import's.
Case = peers.Case
Outcome = peers.Outcome


def case(expected: dict[str, str | None] | None) -> Case:
    return Case("id", "cat", {"a.txt": "a\n"}, "patch", expected)


BEFORE = {"a.txt": b"a\n"}
AFTER_OK = {"a.txt": b"b\n"}
PARTIAL = {"a.txt": b"half\n"}


class TestPeerScore:
    def test_success_with_expected_files_is_correct(self) -> None:
        assert peers.peer_score(case({"a.txt": "b\n"}), True, BEFORE, AFTER_OK) is Outcome.CORRECT

    def test_success_with_other_bytes_is_wrong(self) -> None:
        assert peers.peer_score(case({"a.txt": "b\n"}), True, BEFORE, PARTIAL) is Outcome.WRONG

    def test_reported_failure_is_refused_even_after_partial_changes(self) -> None:
        assert peers.peer_score(case({"a.txt": "b\n"}), False, BEFORE, PARTIAL) is Outcome.REFUSED

    def test_must_refuse_needs_failure_and_no_change(self) -> None:
        assert peers.peer_score(case(None), False, BEFORE, BEFORE) is Outcome.CORRECT
        assert peers.peer_score(case(None), False, BEFORE, PARTIAL) is Outcome.WRONG
        assert peers.peer_score(case(None), True, BEFORE, BEFORE) is Outcome.WRONG

    def test_silence_is_wrong(self) -> None:
        assert peers.peer_score(case({"a.txt": "b\n"}), None, BEFORE, BEFORE) is Outcome.WRONG

    def test_deleted_file_expected(self) -> None:
        got = peers.peer_score(case({"a.txt": None}), True, BEFORE, {})
        assert got is Outcome.CORRECT


DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"


class TestFenceUdiff:
    def test_unfenced_is_wrapped(self) -> None:
        assert peers.fence_udiff(DIFF) == "```diff\n" + DIFF + "```\n"

    def test_missing_final_newline_is_added_inside_the_fence(self) -> None:
        assert peers.fence_udiff(DIFF.rstrip("\n")) == "```diff\n" + DIFF + "```\n"

    def test_diff_fence_is_kept(self) -> None:
        text = "Here:\n```diff\n" + DIFF + "```\n"
        assert peers.fence_udiff(text) == text

    @pytest.mark.parametrize("label", ["", "patch", "udiff"])
    def test_other_diff_fences_are_relabelled(self, label: str) -> None:
        text = f"Here:\n```{label}\n" + DIFF + "```\nDone.\n"
        assert peers.fence_udiff(text) == "Here:\n```diff\n" + DIFF + "```\nDone.\n"

    def test_crlf_fence_line_keeps_its_ending(self) -> None:
        text = "```\r\n" + DIFF + "```\r\n"
        assert peers.fence_udiff(text) == "```diff\r\n" + DIFF + "```\r\n"

    def test_a_code_fence_is_not_a_diff_fence(self) -> None:
        text = "```python\nx = 1\n```\n" + DIFF
        assert peers.fence_udiff(text) == "```diff\n" + text + "```\n"


class TestStripGitPrefixes:
    def test_one_sided_prefixes_are_taken_off(self) -> None:
        text = "--- a/x.py\n+++ x.py\n@@\n-a\n+b\n"
        assert peers.strip_git_prefixes(text, ["x.py"]) == "--- x.py\n+++ x.py\n@@\n-a\n+b\n"
        text = "--- x.py\n+++ b/x.py\n"
        assert peers.strip_git_prefixes(text, ["x.py"]) == "--- x.py\n+++ x.py\n"

    def test_a_real_directory_named_b_is_kept(self) -> None:
        text = "--- b/x.py\n+++ b/x.py\n"
        assert peers.strip_git_prefixes(text, ["b/x.py"]) == text
        assert peers.strip_git_prefixes("+++ b/x.py\n", ["b/x.py"]) == "+++ b/x.py\n"

    def test_body_lines_are_untouched(self) -> None:
        text = "@@\n--- a/not-a-header\n"
        assert peers.strip_git_prefixes(text, []) == "@@\n--- not-a-header\n"
        assert peers.strip_git_prefixes(" --- a/x\n", []) == " --- a/x\n"


class TestDiffPaths:
    def test_paths_in_order_without_prefix_or_dev_null(self) -> None:
        text = "+++ b/x.py\t2024\n+++ y.py\n+++ /dev/null\n+++ b/x.py\n"
        assert peers.diff_paths(text) == ["x.py", "y.py"]

    def test_no_headers(self) -> None:
        assert peers.diff_paths("@@\n-a\n+b\n") == []


def scored(tool: str, outcome: Outcome, ms: float, category: str = "c") -> peers.Scored:
    return peers.Scored(tool, "f.jsonl", category, "udiff", outcome, ms / 1000)


RESULTS = [
    scored("one", Outcome.CORRECT, 1.0),
    scored("one", Outcome.REFUSED, 3.0),
    scored("one", Outcome.WRONG, 2.0, "d"),
    scored("two", Outcome.CORRECT, 10.0),
]


class TestTables:
    def test_summarise(self) -> None:
        cell = peers.summarise(RESULTS[:3])
        assert (cell.cases, cell.correct, cell.refused, cell.wrong) == (3, 1, 1, 1)
        assert cell.median_ms == pytest.approx(2.0)
        assert cell.p99_ms == pytest.approx(3.0)

    def test_summarise_nothing(self) -> None:
        cell = peers.summarise([])
        assert cell.cases == 0 and math.isnan(cell.median_ms)

    def test_tool_table(self) -> None:
        lines = peers.tool_table("tool", ["one", "two", "three"], RESULTS)
        assert lines[2] == "| one | 3 | 33.3 | 33.3 | 33.3 | 2.00 | 3.00 |"
        assert lines[3] == "| two | 1 | 100.0 | 0.0 | 0.0 | 10.00 | 10.00 |"
        assert lines[4] == "| three | 0 | - | - | - | - | - |"

    def test_matrix(self) -> None:
        lines = peers.matrix("category", lambda r: r.category, ["one", "two"], RESULTS)
        assert lines[0] == "| category | one | two |"
        assert lines[2] == "| c | 50 / 50 / 0 | 100 / 0 / 0 |"
        assert lines[3] == "| d | 0 / 0 / 100 | - |"

    def test_report_lists_skipped_peers(self) -> None:
        lines = peers.report(["one", "two"], ["aider: offline"], RESULTS, "Run now.")
        assert lines[:3] == ["Run now.", "", "- skipped: aider: offline"]
        assert "| f.jsonl | c | one | 2 | 1 | 1 | 0 | 2.00 | 3.00 |" in lines

    def test_write_markdown_replaces_only_the_block(self, tmp_path: Path) -> None:
        page = tmp_path / "page.md"
        page.write_text(f"intro\n{peers.BEGIN}\nold\n{peers.END}\noutro\n", encoding="utf-8")
        peers.write_markdown(page, ["new"])
        assert page.read_text(encoding="utf-8") == (
            f"intro\n{peers.BEGIN}\nnew\n{peers.END}\noutro\n"
        )

    def test_write_markdown_appends_the_block(self, tmp_path: Path) -> None:
        page = tmp_path / "page.md"
        page.write_text("intro\n", encoding="utf-8")
        peers.write_markdown(page, ["new"])
        assert page.read_text(encoding="utf-8") == f"intro\n\n{peers.BEGIN}\nnew\n{peers.END}\n"
