"""Line alignment over its budget: cut at lines unique on both sides, not one big replace."""

from __future__ import annotations

import difflib
from itertools import pairwise
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from tests.workspace_snapshot import make_tree

import patchsmith
from patchsmith.engine.linediff import line_opcodes


def rebuilt(old: list[str], new: list[str], budget: int) -> list[str]:
    """`new` as the opcodes rebuild it from `old`, checking that they tile both sides."""
    out: list[str] = []
    i = j = 0
    for tag, i1, i2, j1, j2 in line_opcodes(old, new, budget):
        assert (i, j) == (i1, j1)
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
            out.extend(old[i1:i2])
        else:
            out.extend(new[j1:j2])
        i, j = i2, j2
    assert (i, j) == (len(old), len(new))
    return out


def changes(old: list[str], new: list[str], budget: int) -> list[tuple[str, int, int, int, int]]:
    return [code for code in line_opcodes(old, new, budget) if code[0] != "equal"]


class TestAnchors:
    def test_edits_far_apart_stay_small(self) -> None:
        """A long file of unique lines with two edits: two changes, not everything between."""
        old = [f"line {i}\n" for i in range(20_000)]
        new = list(old)
        new[10] = "changed\n"
        new[19_990] = "changed too\n"

        assert [
            ("replace", 10, 11, 10, 11),
            ("replace", 19_990, 19_991, 19_990, 19_991),
        ] == changes(old, new, 1000)

    def test_a_moved_line(self) -> None:
        old = [f"line {i}\n" for i in range(5_000)]
        new = list(old)
        new.insert(3, new.pop(4_000))

        assert 2 == len(changes(old, new, 1000))
        assert new == rebuilt(old, new, 1000)

    def test_repeated_lines_have_no_anchor(self) -> None:
        """Nothing unique to cut at: still one replacement, as before."""
        old = ["a\n", "b\n"] * 3_000
        new = ["b\n", "a\n", "c\n"] * 2_000

        assert [("replace", 0, 6_000, 0, 6_000)] == line_opcodes(old, new, 1000)

    def test_repeated_lines_between_anchors_join_the_equal_run(self) -> None:
        """`}` and blank lines between unique lines are equal gaps: one equal run around
        each change, exactly the changed lines replaced."""
        old = [x for i in range(3_000) for x in (f"def f{i}() {{", f"  return {i};", "}", "")]
        new = list(old)
        new[1] = "  return -1;"
        new[4 * 2_000 + 1] = "  return -2;"
        codes = line_opcodes(old, new, 1000)

        assert [("replace", 1, 2, 1, 2), ("replace", 8_001, 8_002, 8_001, 8_002)] == [
            c for c in codes if c[0] != "equal"
        ]
        assert all(a[0] != "equal" or b[0] != "equal" for a, b in pairwise(codes))
        assert new == rebuilt(old, new, 1000)

    @given(
        st.lists(st.sampled_from(["a", "b", "c", "d", "e"]) | st.text(max_size=3), max_size=40),
        st.lists(st.sampled_from(["a", "b", "c", "d", "e"]) | st.text(max_size=3), max_size=40),
        st.sampled_from([0, 3, 20, 4_000_000]),
    )
    def test_always_a_valid_script(self, old: list[str], new: list[str], budget: int) -> None:
        assert new == rebuilt(old, new, budget)

    @given(
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
    )
    def test_a_short_middle_is_difflibs_answer(
        self, head: list[str], mid_old: list[str], mid_new: list[str], tail: list[str]
    ) -> None:
        """Within the budget, the opcodes are difflib's for what is left once the common
        ends are cut, the one opcode written without difflib (a side empty, or one line
        each) included."""
        old, new = head + mid_old + tail, head + mid_new + tail
        same_head = next(
            (n for n, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
            min(len(old), len(new)),
        )
        rest = min(len(old), len(new)) - same_head
        same_tail = next(
            (n for n in range(rest) if old[-1 - n] != new[-1 - n]),
            rest,
        )
        middle = difflib.SequenceMatcher(
            None, old[same_head : len(old) - same_tail], new[same_head : len(new) - same_tail]
        ).get_opcodes()
        expected = [
            (tag, i1 + same_head, i2 + same_head, j1 + same_head, j2 + same_head)
            for tag, i1, i2, j1, j2 in middle
            if tag != "equal"
        ]
        assert changes(old, new, 4_000_000) == expected


def test_apply_records_only_what_changed(tmp_path: Path) -> None:
    """The recorded diff of two far-apart edits holds two hunks, not the whole file."""
    lines = [f"value_{i} = {i}\n" for i in range(10_000)]
    root = make_tree(tmp_path / "w", {"data.txt": "".join(lines).encode()})
    reply = (
        "--- a/data.txt\n+++ b/data.txt\n@@ -1,2 +1,2 @@\n-value_0 = 0\n+value_0 = -1\n"
        " value_1 = 1\n@@ -9999,2 +9999,2 @@\n value_9998 = 9998\n-value_9999 = 9999\n"
        "+value_9999 = -1\n"
    )

    report = patchsmith.apply(reply, root)

    assert report.ok, report.errors
    assert 2 == report.diff.count("\n@@ ")
    assert len(report.diff) < 1_000
