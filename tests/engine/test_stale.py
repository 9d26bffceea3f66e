"""Stale context: a hunk whose context lines were edited after the model read the file."""

from __future__ import annotations

from patchsmith.engine import apply_hunks
from patchsmith.engine.model import EngineOptions, SkipReason, Strategy

FILE = (
    "import os\n"
    "\n"
    "def load(path):\n"
    "    handle_v2 = open(path)\n"
    "    data = handle_v2.read()  # revised\n"
    "    size = len(data)\n"
    "    return data\n"
    "\n"
    "def save(path, data):\n"
    "    with open(path, 'w') as out:\n"
    "        out.write(data)\n"
)

# The model read the file before `handle` became `handle_v2` and a comment was added.
STALE_HUNK = (
    "--- a/m.py\n+++ b/m.py\n@@ -3,5 +3,5 @@\n"
    " def load(path):\n"
    "     handle = open(path)\n"
    "     data = handle.read()\n"
    "-    size = len(data)\n"
    "+    size = len(data) + 1\n"
    "     return data\n"
)


class TestStaleContext:
    def test_drifted_context_applies_and_keeps_the_file_lines(self) -> None:
        """Two edited context lines: the removed line pins the place; the file's lines stay."""
        result = apply_hunks(FILE, STALE_HUNK)

        assert result.ok
        assert FILE.replace("size = len(data)\n", "size = len(data) + 1\n") == result.text
        assert Strategy.STALE_CONTEXT == result.outcomes[0].strategy
        assert "2 context line(s) of the hunk differ" in result.outcomes[0].detail

    def test_off_in_strict_and_compat_options(self) -> None:
        """`EngineOptions.strict()` refuses the same hunk."""
        assert not apply_hunks(FILE, STALE_HUNK, options=EngineOptions.strict()).ok

    def test_removed_line_must_be_verbatim(self) -> None:
        """When a removed line is not in the file as written, nothing is guessed."""
        hunk = STALE_HUNK.replace("-    size = len(data)", "-    size = len(blob)")

        result = apply_hunks(FILE, hunk)

        assert not result.ok
        assert FILE == result.text

    def test_pure_insertion_is_not_placed_by_drifted_context(self) -> None:
        """A hunk that removes nothing has nothing to pin its place."""
        hunk = (
            "--- a/m.py\n+++ b/m.py\n@@\n def load(path):\n     handle = open(path)\n"
            "     data = handle.read()\n+    print(path)\n"
        )

        assert not apply_hunks(FILE, hunk).ok

    def test_more_than_three_altered_lines_refused(self) -> None:
        """Four edited context lines are too many to trust."""
        text = FILE.replace("def load(path):", "def load_v2(path):").replace(
            "    return data\n", "    return data  # revised\n"
        )
        hunk = STALE_HUNK.replace(" def load(path):\n", " import os\n \n def load(path):\n")
        hunk = hunk.replace(
            "\n+    size = len(data) + 1\n     return data\n",
            "\n+    size = len(data) + 1\n     return data\n",
        )
        text = text.replace("import os\n", "import os_v2\n")

        result = apply_hunks(text, hunk)

        assert not result.ok

    def test_near_identical_block_elsewhere_refuses(self) -> None:
        """Two places hold the removed line, and both contexts drifted alike: ambiguous."""
        twin = FILE + (
            "\n"
            "def load_copy(path):\n"
            "    handle_v3 = open(path)\n"
            "    data = handle_v3.read()  # other\n"
            "    size = len(data)\n"
            "    return data\n"
        )
        hunk = STALE_HUNK.replace(" def load(path):\n", " def load_x(path):\n")

        result = apply_hunks(twin, hunk)

        assert not result.ok
        assert result.outcomes[0].reason in (SkipReason.AMBIGUOUS, SkipReason.NO_MATCH)
        assert twin == result.text

    def test_clear_margin_chooses(self) -> None:
        """The removed line twice, but only one place's context resembles the hunk's."""
        other = FILE + (
            "\n"
            "def unrelated(items):\n"
            "    total = sum(items)\n"
            "    count = max(items)\n"
            "    size = len(data)\n"
            "    yield count\n"
        )

        result = apply_hunks(other, STALE_HUNK)

        assert result.ok
        assert "    size = len(data) + 1\n    return data\n" in result.text
        assert result.text.endswith("    size = len(data)\n    yield count\n")
