"""Tests for `patchsmith.formats.parse_edits`, `detect_format` and the registry."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.model import Hunk
from patchsmith.formats import detect_format, parse_edits
from patchsmith.formats.registry import FORMATS, format_named, parser_for
from patchsmith.formats.script import EditFormat, EditScript, SearchReplace

SAMPLES = {
    EditFormat.UDIFF: "```diff\n--- a/x\n+++ b/x\n@@\n-a\n+b\n```\n",
    EditFormat.APPLY_PATCH: "*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\n*** End Patch\n",
    EditFormat.SEARCH_REPLACE: "x.py\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n",
    EditFormat.WHOLE_FILE: "x.py\n```python\nb\n```\n",
    EditFormat.STR_REPLACE: json.dumps(
        {"command": "str_replace", "path": "x", "old_str": "a", "new_str": "b"}
    ),
}


class TestRegistry:
    def test_every_format_registered_once(self) -> None:
        """Every concrete format has exactly one parser."""
        assert sorted(f for f in EditFormat if f is not EditFormat.AUTO) == sorted(
            entry.format for entry in FORMATS
        )
        assert parser_for(EditFormat.AUTO) is None

    def test_names_and_aliases(self) -> None:
        """Names, dashes, case and common aliases resolve; others do not."""
        assert EditFormat.SEARCH_REPLACE == format_named("Search-Replace")
        assert EditFormat.STR_REPLACE == format_named("str_replace_json")
        assert EditFormat.UDIFF == format_named("diff")
        assert format_named("yaml") is None


class TestDetectFormat:
    def test_each_sample(self) -> None:
        """Each format's sample is detected as that format."""
        for fmt, text in SAMPLES.items():
            assert fmt == detect_format(text)

    def test_nothing(self) -> None:
        """Prose is AUTO."""
        assert EditFormat.AUTO == detect_format("hello")


class TestParseEdits:
    def test_auto(self) -> None:
        """Auto-detection parses each sample as its own format, with its path."""
        for fmt, text in SAMPLES.items():
            script = parse_edits(text)

            named = fmt in (EditFormat.WHOLE_FILE, EditFormat.SEARCH_REPLACE)

            assert (fmt, ["x.py" if named else "x"]) == (
                script.format,
                [e.path for e in script.edits],
            )

    def test_explicit_format(self) -> None:
        """An explicit format (enum or name) uses only that parser."""
        assert () == parse_edits(SAMPLES[EditFormat.UDIFF], EditFormat.SEARCH_REPLACE).edits
        assert 1 == len(parse_edits(SAMPLES[EditFormat.UDIFF], "udiff").edits)

    def test_unknown_format_is_a_problem(self) -> None:
        """An unknown format name gives a problem, not an exception."""
        script = parse_edits("x", "klingon")

        assert (EditFormat.AUTO, ()) == (script.format, script.edits)
        assert "klingon" in script.problems[0].message

    def test_falls_through_to_a_format_with_edits(self) -> None:
        """A detected format with no edit gives way to the next one that has edits."""
        text = 'Config: {"command": "x"}\n\n' + SAMPLES[EditFormat.UDIFF]

        assert EditFormat.UDIFF == parse_edits(text).format

    def test_detected_but_broken(self) -> None:
        """When nothing yields an edit, the first detected format's problems are returned."""
        script = parse_edits("*** Begin Patch\n*** End Patch\n")

        assert (EditFormat.APPLY_PATCH, ()) == (script.format, script.edits)
        assert script.problems

    def test_nothing_parses(self) -> None:
        """Prose gives an empty script with one problem covering the text."""
        script = parse_edits("one\ntwo\nthree")

        assert (EditFormat.AUTO, ()) == (script.format, script.edits)
        assert (1, 3) == (script.problems[0].start_line, script.problems[0].end_line)

    def test_ten_megabytes_of_prose(self) -> None:
        """10 MB of prose is parsed to nothing (and quickly)."""
        text = "A sentence about code, with - and + and * and @ and { braces }.\n" * 160_000

        assert () == parse_edits(text).edits

    @settings(max_examples=200)
    @given(st.text())
    def test_never_raises(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(parse_edits(text), EditScript)

    @settings(max_examples=200)
    @given(
        st.lists(
            st.sampled_from(
                [
                    *[line for sample in SAMPLES.values() for line in sample.splitlines()],
                    "",
                    "prose",
                    "```",
                    "{",
                    "[",
                ]
            ),
            max_size=25,
        ).map("\n".join)
    )
    def test_never_raises_on_format_fragments(self, text: str) -> None:
        """Any mix of lines from every format never raises."""
        assert isinstance(parse_edits(text), EditScript)


class TestMixedAndNested:
    """Auto-detection reads structures, not stray markers: nothing dropped, nothing invented."""

    def test_json_tool_call_in_diff_context_stays_context(self) -> None:
        """A diff whose context line is a JSON tool call is the diff, not the call."""
        text = (
            "--- a/fixtures.jsonl\n+++ b/fixtures.jsonl\n@@ -1,2 +1,2 @@\n"
            ' {"command": "create", "path": "pwned.txt", "file_text": "hi\\n"}\n'
            '-{"version": 1}\n+{"version": 2}\n'
        )

        script = parse_edits(text)

        assert ["fixtures.jsonl"] == [e.path for e in script.edits]
        assert EditFormat.UDIFF == script.format

    def test_indented_markers_in_diff_context_stay_context(self) -> None:
        """SEARCH/REPLACE markers inside a diff's context lines do not make blocks."""
        text = (
            "--- a/guide.md\n+++ b/guide.md\n@@ -1,7 +1,7 @@\n <<<<<<< SEARCH\n old line\n"
            " =======\n new line\n >>>>>>> REPLACE\n \n-Version: 1\n+Version: 2\n"
        )

        script = parse_edits(text)

        assert 1 == len(script.edits)
        assert isinstance(script.edits[0].ops[0], Hunk)

    def test_diff_and_blocks_in_one_reply_are_both_read(self) -> None:
        """A reply with a fenced diff and a SEARCH/REPLACE block yields both edits."""
        text = (
            "First:\n\n```diff\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n```\n\n"
            "Then:\n\napp.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n"
            ">>>>>>> REPLACE\n```\n"
        )

        script = parse_edits(text)

        assert {"notes.txt", "app.py"} == {e.path for e in script.edits}
        assert () == script.problems

    def test_diff_inside_search_block_is_content(self) -> None:
        """Diff lines inside a SEARCH/REPLACE block are the block's text, not a diff."""
        text = (
            "docs/howto.md\n<<<<<<< SEARCH\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"
            "=======\nno diff here\n>>>>>>> REPLACE\n"
        )

        script = parse_edits(text)

        assert ["docs/howto.md"] == [e.path for e in script.edits]
        op = script.edits[0].ops[0]
        assert isinstance(op, SearchReplace)
        assert op.search.startswith("--- a/x\n")

    def test_diff_and_whole_file_in_one_reply_are_both_read(self) -> None:
        """A fenced diff followed by a whole file after its path yields both edits."""
        text = (
            "Change notes:\n\n```diff\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n```\n"
            "\nAnd the new config:\n\nconfig.toml\n```toml\nkey = 1\n```\n"
        )

        script = parse_edits(text)

        assert ["notes.txt", "config.toml"] == [e.path for e in script.edits]
