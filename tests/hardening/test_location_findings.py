"""Issue 7, findings 3 and 4: location never silently picks a wrong place."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.attempt.api import apply
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyReport, ApplyStatus
from patchsmith.runtime import intake


def _codes(report: ApplyReport) -> list[FailureCode]:
    return [e.code for e in report.errors]


def _refused(text: str, root: Path) -> ApplyReport:
    before = snapshot_tree(root)
    report = apply(text, root, record=False)
    assert ApplyStatus.REFUSED == report.status, report
    assert before == snapshot_tree(root)
    return report


LOADERS = (
    "def load_a(path):\n"
    "    data = read(path)   \n"
    "    return parse(data)\n"
    "\n"
    "\n"
    + "".join(f"def helper_{i}():\n    return {i}\n\n\n" for i in range(20))
    + "def load_b(path):\n"
    "    data = read(path)\n"
    "    return parse(data)\n"
)


class TestLineNumbersCompete:
    """Finding 3: the place the line numbers name competes at a looser tolerance."""

    DIFF = (
        "--- a/m.py\n+++ b/m.py\n@@ -2,2 +2,2 @@\n"
        "     data = read(path)\n"
        "-    return parse(data)\n"
        "+    return parse(data, strict=True)\n"
    )

    def test_far_exact_match_is_ambiguous(self, tmp_path: Path) -> None:
        """Trailing spaces at the named lines: both places are candidates, nothing applies."""
        root = make_tree(tmp_path / "ws", {"m.py": LOADERS.encode()})
        report = _refused(self.DIFF, root)
        assert [FailureCode.AMBIGUOUS_MATCH] == _codes(report)
        hint = report.errors[0].hint or ""
        assert "lines 2, 87" in hint

    def test_without_trailing_spaces_applies_at_named_place(self, tmp_path: Path) -> None:
        """Control: the same diff on the clean file edits load_a (exact match there too)."""
        clean = LOADERS.replace("read(path)   \n", "read(path)\n")
        root = make_tree(tmp_path / "ws", {"m.py": clean.encode()})
        report = apply(self.DIFF, root, record=False)
        assert report.ok
        text = (root / "m.py").read_text()
        assert text.startswith(
            "def load_a(path):\n    data = read(path)\n    return parse(data, strict"
        )

    def test_no_line_numbers_and_a_whitespace_rival_is_ambiguous(self, tmp_path: Path) -> None:
        """Without line numbers nothing names either place, and the two differ only in
        trailing spaces: comparable tolerances (ADR 0029), so nothing applies."""
        root = make_tree(tmp_path / "ws", {"m.py": LOADERS.encode()})
        diff = self.DIFF.replace("@@ -2,2 +2,2 @@", "@@ @@")
        report = _refused(diff, root)
        assert [FailureCode.AMBIGUOUS_MATCH] == _codes(report)
        assert {2, 87} <= set(report.errors[0].candidates)


TWO_FUNCTIONS = "def foo():\n    a = 1\n    return 0\n\n\ndef bar():\n    b = 2\n    return 1\n"


class TestElisionBounds:
    """Finding 4: `...` never stretches past the end of the enclosing block."""

    def test_search_elision_does_not_cross_into_next_function(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": TWO_FUNCTIONS.encode()})
        text = (
            "m.py\n<<<<<<< SEARCH\ndef foo():\n    ...\n    return 1\n=======\n"
            "def foo():\n    ...\n    return 2\n>>>>>>> REPLACE\n"
        )
        report = _refused(text, root)
        assert FailureCode.PATCH_CONTEXT_MISMATCH in _codes(report)

    def test_hunk_elision_does_not_cross(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": TWO_FUNCTIONS.encode()})
        diff = (
            "--- a/m.py\n+++ b/m.py\n@@ @@\n def foo():\n     ...\n-    return 1\n+    return 2\n"
        )
        _refused(diff, root)

    def test_elision_inside_the_block_still_applies(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": TWO_FUNCTIONS.encode()})
        text = (
            "m.py\n<<<<<<< SEARCH\ndef bar():\n    ...\n    return 1\n=======\n"
            "def bar():\n    ...\n    return 2\n>>>>>>> REPLACE\n"
        )
        report = apply(text, root, record=False)
        assert report.ok, report
        assert (root / "m.py").read_text() == TWO_FUNCTIONS.replace("return 1", "return 2")


class TestAlreadyApplied:
    """Finding 4: ALREADY_APPLIED needs the whole new side at one place and the old side nowhere."""

    SOURCE = "def f():\n    x = compute()\n    return x\n\n\ndef g():\n    y = 2\n    return y\n"

    def test_one_line_replace_found_elsewhere_is_a_mismatch(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": self.SOURCE.encode()})
        text = "m.py\n<<<<<<< SEARCH\n    x = 1\n=======\n    y = 2\n>>>>>>> REPLACE\n"
        report = _refused(text, root)
        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == _codes(report)

    def test_new_side_with_context_is_already_applied(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": self.SOURCE.encode()})
        text = (
            "m.py\n<<<<<<< SEARCH\ndef f():\n    x = 1\n    return x\n=======\n"
            "def f():\n    x = compute()\n    return x\n>>>>>>> REPLACE\n"
        )
        report = _refused(text, root)
        assert [FailureCode.ALREADY_APPLIED] == _codes(report)

    def test_second_application_of_a_diff_is_already_applied(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": self.SOURCE.encode()})
        diff = (
            "--- a/m.py\n+++ b/m.py\n@@ -6,3 +6,3 @@\n def g():\n"
            "-    y = 2\n+    y = 3\n     return y\n"
        )
        assert apply(diff, root, record=False).ok
        report = _refused(diff, root)
        assert [FailureCode.ALREADY_APPLIED] == _codes(report)


class TestDamagedUtf8:
    """Finding 4: a mostly-UTF-8 file with one bad byte never gets Latin-1 bytes added."""

    RAW = "# café\nname = 'x'\n".encode() + b"bad = '\xff'\n"

    def test_non_ascii_addition_is_refused(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": self.RAW})
        diff = "--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-name = 'x'\n+name = 'naïve'\n"
        report = _refused(diff, root)
        assert [FailureCode.ENCODING_ERROR] == _codes(report)
        assert "UTF-8" in report.errors[0].message

    def test_ascii_addition_keeps_every_other_byte(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": self.RAW})
        diff = "--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-name = 'x'\n+name = 'y'\n"
        assert apply(diff, root, record=False).ok
        assert (root / "m.py").read_bytes() == self.RAW.replace(b"'x'", b"'y'")

    def test_real_latin1_file_still_takes_latin1_text(self, tmp_path: Path) -> None:
        raw = "# café\nname = 'x'\n".encode("latin-1")
        root = make_tree(tmp_path / "ws", {"m.py": raw})
        diff = "--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-name = 'x'\n+name = 'é'\n"
        assert apply(diff, root, record=False).ok
        assert (root / "m.py").read_bytes() == "# café\nname = 'é'\n".encode("latin-1")


TEMPLATE = (
    "import os\n\n\n"
    "def render():\n"
    '    """Write the Makefile."""\n'
    '    text = """\\\n'
    "all: build\n"
    "\n"
    "build:\n"
    '"""\n'
    "    return text\n\n\n"
    "def other():\n"
    "    x = 1\n"
    "    if x:\n"
    "        return 2\n"
    "    return 3\n"
)


class TestTabsInTemplates:
    """Finding 4: added tabs stay tabs inside a string literal of a spaces-indented file."""

    def test_makefile_recipe_keeps_its_tab(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": TEMPLATE.encode()})
        diff = "--- a/m.py\n+++ b/m.py\n@@ -9,1 +9,2 @@\n build:\n+\tgcc -o app main.c\n"
        assert apply(diff, root, record=False).ok
        assert "build:\n\tgcc -o app main.c\n" in (root / "m.py").read_text()

    def test_code_outside_literals_still_follows_the_file(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"m.py": TEMPLATE.encode()})
        diff = "--- a/m.py\n+++ b/m.py\n@@ -1,1 +1,4 @@\n import os\n+\n+def more():\n+\treturn 4\n"
        assert apply(diff, root, record=False).ok
        assert (root / "m.py").read_text().startswith("import os\n\ndef more():\n    return 4\n")


class TestPathlessHunks:
    """Finding 4: a path-less hunk considers every file, whatever its size."""

    FUNC = "def shared():\n    value = 1\n    return value\n"
    DIFF = "@@ @@\n def shared():\n-    value = 1\n+    value = 2\n     return value\n"

    def test_large_second_fit_makes_it_ambiguous(self, tmp_path: Path) -> None:
        big = ("# filler line to make the file large\n" * 70_000 + self.FUNC).encode()
        assert len(big) > 2_000_000
        root = make_tree(tmp_path / "ws", {"small.py": self.FUNC.encode(), "big.py": big})
        report = _refused(self.DIFF, root)
        assert [FailureCode.AMBIGUOUS_MATCH] == _codes(report)
        assert "big.py" in report.errors[0].message

    def test_files_in_vendor_directories_count(self, tmp_path: Path) -> None:
        files = {"src/a.py": self.FUNC.encode(), "node_modules/x/b.py": self.FUNC.encode()}
        root = make_tree(tmp_path / "ws", files)
        report = _refused(self.DIFF, root)
        assert [FailureCode.AMBIGUOUS_MATCH] == _codes(report)

    def test_unique_fit_applies(self, tmp_path: Path) -> None:
        files = {"a.py": self.FUNC.encode(), "b.py": b"x = 1\n", "c.txt": b"value = 1\n"}
        root = make_tree(tmp_path / "ws", files)
        assert apply(self.DIFF, root, record=False).ok
        assert (root / "a.py").read_text() == self.FUNC.replace("= 1", "= 2")

    def test_bound_hit_refuses(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(intake, "_GUESS_MAX_FILES", 2)
        files = {"a.py": self.FUNC.encode(), "b.py": b"x = 1\n", "c.py": b"y = 1\n"}
        root = make_tree(tmp_path / "ws", files)
        report = _refused(self.DIFF, root)
        assert [FailureCode.MALFORMED_PATCH] == _codes(report)
        assert "not every file could be tried" in report.errors[0].message

    def test_large_candidate_over_the_bound_refuses(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(intake, "_GUESS_MAX_BYTES", 1000)
        big = ("# filler\n" * 200 + self.FUNC).encode()
        root = make_tree(tmp_path / "ws", {"a.py": self.FUNC.encode(), "big.py": big})
        report = _refused(self.DIFF, root)
        assert "larger than 1000 bytes" in report.errors[0].message
