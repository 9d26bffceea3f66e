"""Applying blocks and hunk lists by content: `patchsmith.engine.hunks`."""

from __future__ import annotations

from dataclasses import replace

from patchsmith.engine.blocks import block_from_hunk, block_from_search_replace
from patchsmith.engine.hunks import apply_block, apply_hunk_list
from patchsmith.engine.locate import NotPlaced
from patchsmith.engine.model import EngineOptions, Hunk, SkipReason, Strategy
from patchsmith.engine.textlines import split_lines

DEFAULT = EngineOptions.default()


def hunk(body: str, **fields: object) -> Hunk:
    """A hunk from body text, one body line per line."""
    return Hunk(tuple(body.splitlines(keepends=True)), **fields)  # type: ignore[arg-type]


def reason(source: str, body: str, **fields: object) -> SkipReason | None:
    """Why the one hunk was not applied (None when it was)."""
    return apply_hunk_list(source, [hunk(body, **fields)], DEFAULT).outcomes[0].reason


class TestApplyBlock:
    def test_applies(self) -> None:
        """A located block gives the new lines and the placement."""
        result = apply_block(
            split_lines("a\nb\n"), block_from_search_replace("b\n", "c\n"), DEFAULT
        )

        assert not isinstance(result, NotPlaced)
        assert (["a", "c"], 1) == (result[0].contents, result[1].start)

    def test_only_context(self) -> None:
        """A block with nothing to change is NO_CHANGE."""
        assert SkipReason.NO_CHANGE == reason("a\nb\n", " a\n b\n")

    def test_change_to_the_same_text(self) -> None:
        """Removing and re-adding the same line is NO_CHANGE."""
        assert SkipReason.NO_CHANGE == reason("a\nb\n", "-a\n+a\n b\n")

    def test_not_found(self) -> None:
        """Old lines absent from the file are NO_MATCH."""
        assert SkipReason.NO_MATCH == reason("a\nb\n", "-zzz\n+y\n")


class TestAlreadyApplied:
    def test_replacement(self) -> None:
        """New lines present and old lines absent: ALREADY_APPLIED."""
        assert SkipReason.ALREADY_APPLIED == reason("a\nB\nc\n", " a\n-b\n+B\n c\n")

    def test_new_lines_twice_is_no_match(self) -> None:
        """New lines present twice prove nothing: NO_MATCH."""
        assert SkipReason.NO_MATCH == reason("a\nB\na\nB\n", " a\n-b\n+B\n")

    def test_deletion_only_blank_new_side(self) -> None:
        """A deletion whose new side is blank cannot be recognised as applied."""
        assert SkipReason.NO_MATCH == reason("x\n", "-gone\n")

    def test_insertion_next_to_context(self) -> None:
        """An insertion whose new lines already surround the matched context is ALREADY_APPLIED."""
        assert SkipReason.ALREADY_APPLIED == reason(
            "import os\nimport re\nx\n", "+import os\n import re\n"
        )

    def test_insertion_first_time(self) -> None:
        """The same insertion applies where its new lines are not yet there."""
        assert reason("import re\nx\n", "+import os\n import re\n") is None

    def test_loosened_match_over_inserted_line(self) -> None:
        """A re-applied insertion whose added line reads as a dropped context line is refused."""
        assert SkipReason.ALREADY_APPLIED == reason("x\ny\n  x\n", " x\n+y\n   x\n")

    def test_line_number_insertion_again(self) -> None:
        """A context-free insertion whose lines already sit at its line number is refused."""
        assert SkipReason.ALREADY_APPLIED == reason(
            "new\nold\n", "+new\n", old_start=0, old_count=0
        )

    def test_line_number_insertion_first_time(self) -> None:
        """The same insertion applies when the lines are not there."""
        assert reason("old\n", "+new\n", old_start=0, old_count=0) is None

    def test_append_again(self) -> None:
        """An End of File append whose lines already end the file is refused."""
        assert SkipReason.ALREADY_APPLIED == reason("a\nz\n", "+z\n", at_eof=True)

    def test_append_longer_than_file(self) -> None:
        """An append longer than the file is applied."""
        assert reason("a\n", "+x\n+y\n", at_eof=True) is None

    def test_ending_only_change_applies(self) -> None:
        """A hunk that only adds the missing final newline is applied, not taken as done."""
        body = "-b\n\\ No newline at end of file\n+b\n"

        assert reason("a\nb", body) is None


class TestApplyHunkList:
    def test_outcomes(self) -> None:
        """Each hunk gets an outcome with index, strategy and 1-based line."""
        result = apply_hunk_list("a\nb\nc\n", [hunk("-b\n+B\n"), hunk("-zzz\n+q\n")], DEFAULT)

        first, second = result.outcomes
        assert (0, True, Strategy.DIRECT, 2) == (
            first.index,
            first.applied,
            first.strategy,
            first.line,
        )
        assert (1, False, SkipReason.NO_MATCH) == (second.index, second.applied, second.reason)
        assert "a\nB\nc\n" == result.text

    def test_candidates_are_one_based(self) -> None:
        """Ambiguous candidates are reported as 1-based lines."""
        result = apply_hunk_list("x\ny\nx\ny\n", [hunk(" x\n-y\n+Y\n")], DEFAULT)

        assert (2, 1, 3) == (len(result.outcomes[0].candidates), *result.outcomes[0].candidates)

    def test_later_hints_follow_earlier_growth(self) -> None:
        """Line numbers of later hunks are shifted by lines earlier hunks added."""
        source = "top\nx\ny\nx\ny\n"
        hunks = [
            hunk("+one\n+two\n top\n", old_start=1, old_count=1),
            hunk(" x\n-y\n+Y\n", old_start=4, old_count=2),
        ]

        result = apply_hunk_list(source, hunks, DEFAULT)

        assert "one\ntwo\ntop\nx\ny\nx\nY\n" == result.text

    def test_line_endings_off_normalises_whole_file(self) -> None:
        """With endings not kept the whole file comes back LF."""
        options = replace(DEFAULT, keep_line_endings=False)

        result = apply_hunk_list("a\r\nb\r\nc\r\n", [hunk("-a\n+A\n")], options)

        assert "A\nb\nc\n" == result.text

    def test_no_style_without_indent_tolerance(self) -> None:
        """With indentation tolerance off, added lines are written exactly."""
        source = "f {\n\tx\n\ty\n\tz\n}\n"
        hunks = [hunk(" }\n+g {\n+    y\n+}\n")]

        on = apply_hunk_list(source, hunks, DEFAULT)
        off = apply_hunk_list(source, hunks, replace(DEFAULT, indent_tolerant=False))

        assert (source + "g {\n\ty\n}\n", source + "g {\n    y\n}\n") == (on.text, off.text)

    def test_search_replace_block(self) -> None:
        """A search/replace block goes through the same placement."""
        block = block_from_hunk(hunk(" a\n-b\n+c\n"))

        result = apply_block(split_lines("a\nb\n"), block, DEFAULT)

        assert not isinstance(result, NotPlaced)
        assert "a\nc\n" == result[0].text
