"""The shared strategies draw what they promise: real edits and model-style diffs of them."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.strategies import Damage, DiffCase, Edit, edits, model_diffs, render_unified, texts

_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def _apply_strictly(source: str, diff: str) -> str:
    """Apply a clean unified diff by its line numbers, failing on any context mismatch."""
    old = source.splitlines(keepends=True)
    new: list[str] = []
    cursor = 0
    lines = diff.splitlines(keepends=True)
    in_hunk = False
    for index, line in enumerate(lines):
        header = _HEADER.match(line)
        if header:
            in_hunk = True
            start = int(header.group(1))
            count = 1 if header.group(2) is None else int(header.group(2))
            # A zero-length old side is written one line before where it goes.
            start = start if count == 0 else start - 1
            new.extend(old[cursor:start])
            cursor = start
            continue
        # File headers come before the first hunk; inside one, an added "++ " line
        # reads "+++ " and a removed "-- " line reads "--- ".
        if line.startswith("\\") or (not in_hunk and line.startswith(("--- ", "+++ "))):
            continue
        ending_dropped = index + 1 < len(lines) and lines[index + 1].startswith("\\")
        body = line[1:-1] if ending_dropped else line[1:]
        if line[0] in " -":
            assert old[cursor] == body
            cursor += 1
        if line[0] in " +":
            new.append(body)
    new.extend(old[cursor:])
    return "".join(new)


class TestTexts:
    """Source texts."""

    @given(text=texts())
    def test_one_line_ending_style(self, text: str) -> None:
        """A text uses LF or CRLF throughout, never a bare CR."""
        assert "\r" not in text.replace("\r\n", "")

    def test_reaches_astral_cjk_crlf_and_no_final_newline(self) -> None:
        """The strategy reaches emoji, CJK, tabs, CRLF and a missing final newline."""
        seen: set[str] = set()

        @settings(max_examples=400, derandomize=True, database=None)
        @given(text=texts())
        def collect(text: str) -> None:
            seen.update(
                kind
                for kind, present in {
                    "astral": any(ord(c) > 0xFFFF for c in text),
                    "cjk": any("\u4e00" <= c <= "\u9fff" for c in text),
                    "tab": "\t" in text,
                    "crlf": "\r\n" in text,
                    "no_final_newline": bool(text) and not text.endswith("\n"),
                    "trailing_space": " \n" in text or " \r\n" in text,
                }.items()
                if present
            )

        collect()

        assert {"astral", "cjk", "tab", "crlf", "no_final_newline", "trailing_space"} == seen


class TestEdits:
    """Real edits."""

    @given(edit=edits())
    def test_changes_the_text(self, edit: Edit) -> None:
        """An edit always changes the source."""
        assert edit.source != edit.target

    @given(edit=edits())
    def test_keeps_line_ending_style(self, edit: Edit) -> None:
        """The target keeps the source's line ending style."""
        if "\r\n" in edit.target:
            assert "\r\n" in edit.source


class TestRenderUnified:
    """Clean diffs."""

    @given(edit=edits(), context=st.integers(0, 5))
    @example(edit=Edit(source="", target="++ \n"), context=0)  # an added line "+++ "
    def test_clean_diff_applies_to_target(self, edit: Edit, context: int) -> None:
        """Applying a clean rendered diff by its line numbers gives the target."""
        diff = render_unified(edit.source, edit.target, context=context)

        assert edit.target == _apply_strictly(edit.source, diff)

    def test_no_newline_marker(self) -> None:
        """A last line without a newline is followed by git's marker."""
        diff = render_unified("a\nb", "a\nc")

        assert "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" in diff


class TestModelDiffs:
    """Damaged model diffs."""

    @given(case=model_diffs(damage=False))
    def test_undamaged_is_clean(self, case: DiffCase) -> None:
        """Without damage the diff is exactly the clean rendering, in some context size."""
        assert case.damage == ()
        assert case.target == _apply_strictly(case.source, case.diff)

    @given(case=model_diffs())
    def test_crlf_damage(self, case: DiffCase) -> None:
        """A CRLF-damaged diff has no bare LF."""
        if Damage.CRLF_DIFF in case.damage:
            assert "\n" not in case.diff.replace("\r\n", "")

    @given(case=model_diffs())
    def test_second_file(self, case: DiffCase) -> None:
        """Second-file damage appends another file's section; otherwise there is one file."""
        assert (Damage.SECOND_FILE in case.damage) == ("+++ b/g.txt" in case.diff)

    @given(case=model_diffs())
    def test_prose_damage(self, case: DiffCase) -> None:
        """Prose damage fences the diff."""
        assert (Damage.PROSE_AND_FENCE in case.damage) == ("```diff" in case.diff)

    @given(case=model_diffs())
    def test_bare_headers(self, case: DiffCase) -> None:
        """Bare-header damage leaves no numbered hunk header in the edited file's section."""
        first_file = case.diff.split("--- a/g.txt")[0]
        numbered = any(_HEADER.match(line) for line in first_file.splitlines())
        if Damage.BARE_HEADER in case.damage or Damage.NO_HUNK_HEADERS in case.damage:
            assert not numbered or "@@ -1 +1 @@" in case.diff
        else:
            assert numbered

    def test_reaches_every_damage(self) -> None:
        """Every kind of damage is drawn."""
        seen: set[Damage] = set()

        @settings(max_examples=300, derandomize=True, database=None)
        @given(case=model_diffs())
        def collect(case: DiffCase) -> None:
            seen.update(case.damage)

        collect()

        assert set(Damage) == seen
