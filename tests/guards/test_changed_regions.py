"""Guards that read only the changed lines (the spans the engine located) give the verdicts
they give over the whole file."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.guards.changes import context, update

from patchsmith.engine.linespans import LineSpan, SpanLog
from patchsmith.engine.placeholder import has_line
from patchsmith.guards.omission import PlaceholderGuard
from patchsmith.guards.review import ReviewGuard, measure_drift
from patchsmith.policy import Policy, ReviewPolicy
from patchsmith.runtime.diffstat import change_opcodes, diff_stat, line_diff

_POOL = [
    "x = 1",
    "x = 2",
    "# ...",
    "    # ... existing code ...",
    "// ...",
    "...",
    "# a comment",
    "  # a comment",
    "# another note",
    "import os",
    "import sys",
    "from a import b",
    "y = 3  # a comment",
    "",
    "}",
]


@st.composite
def _edits(draw: st.DrawFn) -> tuple[str, str, tuple[LineSpan, ...]]:
    old = draw(st.lists(st.sampled_from(_POOL), max_size=40))
    current = list(old)
    log = SpanLog()
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(current)))
        stop = draw(st.integers(start, min(start + 4, len(current))))
        added = draw(st.lists(st.sampled_from(_POOL), max_size=4))
        current[start:stop] = added
        log.edit(start, stop, len(added))
    return "".join(f"{x}\n" for x in old), "".join(f"{x}\n" for x in current), log.spans


def _strict() -> Policy:
    return Policy(
        review=ReviewPolicy(
            min_changed_lines=1,
            max_lost_comments=0,
            max_formatting_hunks=None,
            allow_import_reorder=False,
        )
    )


class TestSameVerdicts:
    @settings(max_examples=300, deadline=None)
    @given(case=_edits(), path=st.sampled_from(["a.py", "a.ts", "a.txt"]))
    def test_placeholder_guard(
        self, case: tuple[str, str, tuple[LineSpan, ...]], path: str
    ) -> None:
        old, new, spans = case
        whole = update(path, old, new)
        located = replace(whole, line_spans=spans)
        assert PlaceholderGuard().check([located], context()) == PlaceholderGuard().check(
            [whole], context()
        )

    @settings(max_examples=300, deadline=None)
    @given(case=_edits())
    def test_lost_comments_and_imports(self, case: tuple[str, str, tuple[LineSpan, ...]]) -> None:
        """Whatever valid alignment the opcodes are, lost comments and the import order come
        out as over the whole file."""
        old, new, spans = case
        full = measure_drift("a.py", old, new)
        located = measure_drift("a.py", old, new, diff=line_diff(old, new, spans))
        assert full.lost_comments == located.lost_comments
        assert full.imports_reordered == located.imports_reordered

    def test_many_lost_comments_are_searched_at_once(self) -> None:
        old = "".join(f"# note {n}\nx = {n}\n" for n in range(20))
        new = "".join(f"x = {n}\n" for n in range(20)) + "y = 1  # note 3\n"
        drift = measure_drift("a.py", old, new)
        assert tuple(2 * n + 1 for n in range(20) if n != 3) == drift.lost_comments


class TestRegions:
    def test_placeholder_line_number_from_the_spans(self) -> None:
        old = "".join(f"v{n} = {n}\n" for n in range(200))
        new = old.replace("v150 = 150\n", "    # ... rest unchanged ...\n")
        change = update("a.py", old, new, line_spans=(LineSpan(150, 151, 150, 151),))
        failures = PlaceholderGuard().check([change], context())
        assert ["a.py line(s) 151: '# ... rest unchanged ...'"] == [
            f.message.split(": ", 1)[1] for f in failures
        ]

    def test_placeholder_held_elsewhere_in_the_file_passes(self) -> None:
        old = "# ...\n" + "".join(f"v{n} = {n}\n" for n in range(50))
        new = old.replace("v40 = 40\n", "  # ...  \n")
        change = update("a.py", old, new, line_spans=(LineSpan(41, 42, 41, 42),))
        assert [] == PlaceholderGuard().check([change], context())

    def test_odd_line_breaks_fall_back_to_the_whole_text(self) -> None:
        old = "a = 1\x0cb = 2\n# x\n"
        new = "a = 1\x0cb = 2\n# ...\n"
        change = update("a.py", old, new, line_spans=(LineSpan(1, 2, 1, 2),))
        failures = PlaceholderGuard().check([change], context())
        assert "line(s) 3" in failures[0].message  # numbered as str.splitlines numbers them

    def test_has_line(self) -> None:
        assert has_line("a\n  # ...  \nb", "# ...")
        assert not has_line("a # ...\n", "# ...")
        assert has_line("x\r# ...\r\n", "# ...")
        many = "z # ...\n" * 100 + "# ...\n"
        assert has_line(many, "# ...")
        assert not has_line("z # ...\n" * 100, "# ...")

    def test_review_and_budgets_read_the_located_lines(self) -> None:
        old = "".join(f"# c{n}\nv{n} = {n}\n" for n in range(500))
        new = old.replace("# c250\n", "")
        change = update("a.py", old, new, line_spans=(LineSpan(500, 501, 500, 500),))
        assert 1 == diff_stat(change).removed
        assert [("delete", 500, 501, 500, 500)] == change_opcodes(change).changed()
        failures = ReviewGuard().check([change], context(_strict()))
        assert len(failures) == 1 and "comment lines lost: 1 (line 501" in failures[0].message
