"""What a refusal tells a model: similar regions, every ambiguous place, near paths,
the new text around a syntax error, and the current hash of every file it names."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchsmith import apply
from patchsmith.engine.excerpt import line_similarity, similar_regions
from patchsmith.errors import FailureCode
from patchsmith.runtime import intake
from patchsmith.runtime.excerpts import nearest_paths

SOURCE = (
    "import os\n\n"
    "def total(items):\n"
    "    result = 0\n"
    "    for item in items:\n"
    "        result += item\n"
    "    return result\n\n"
    "def other():\n"
    "    return None\n"
)


def _root(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


class TestSimilarity:
    def test_identical_and_unrelated_lines(self) -> None:
        """Equal lines score 1, unrelated ones near 0, a renamed identifier in between."""
        assert 1.0 == line_similarity("  x = 1", "x  =  1")
        assert line_similarity("result += item", "zzz qqq") < 0.2
        assert 0.6 < line_similarity("result += item", "result += itme") < 1.0

    def test_regions_rank_the_typo_first(self) -> None:
        """A one-character typo still points at its own lines, with a high score."""
        contents = SOURCE.splitlines()

        regions = similar_regions(contents, ["    for item in itmes:", "        result += item"])

        assert regions[0].start <= 4 and 5 < regions[0].end
        assert 0.8 < regions[0].score < 1.0

    def test_nothing_alike_gives_nothing(self) -> None:
        """No line resembling any wanted line: no region."""
        assert [] == similar_regions(SOURCE.splitlines(), ["class Zebra(Quagga):"])


class TestHunkRefusals:
    def test_typo_points_at_the_right_lines_with_a_score(self, tmp_path: Path) -> None:
        """The excerpt shows the lines the hunk meant, and the score is reported."""
        root = _root(tmp_path, {"m.py": SOURCE})
        text = "--- a/m.py\n+++ b/m.py\n@@\n     for item in itmes:\n-        result += item\n"
        text += "+        result += 2 * item\n"

        failure = apply(text, root).errors[0]

        assert failure.similarity is not None and 0.8 < failure.similarity < 1.0
        assert "similarity" in failure.message
        assert "5 |     for item in items:" in (failure.excerpt or "")
        assert "similarity" in failure.to_json()

    def test_no_line_anywhere_is_said_plainly(self, tmp_path: Path) -> None:
        """A hunk about a function that does not exist says none of its lines is there."""
        root = _root(tmp_path, {"m.py": SOURCE})
        text = (
            "--- a/m.py\n+++ b/m.py\n@@\n def checkout(cart):\n-    pay(cart)\n+    pay(cart, 1)\n"
        )

        failure = apply(text, root).errors[0]

        assert "none of its 2 non-blank old lines occurs anywhere in m.py" in failure.message

    def test_every_ambiguous_place_is_shown(self, tmp_path: Path) -> None:
        """An ambiguous hunk lists each place, and the excerpt shows each one."""
        twice = "a = 1\nb = 2\n\nc = 3\n\na = 1\nb = 2\n\nd = 4\n\na = 1\nb = 2\n"
        root = _root(tmp_path, {"m.py": twice})
        text = "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n-b = 2\n+b = 3\n"

        failure = apply(text, root).errors[0]

        assert FailureCode.AMBIGUOUS_MATCH == failure.code
        assert (1, 6, 11) == failure.candidates
        excerpt = failure.excerpt or ""
        assert "place 1 of 3: line 1" in excerpt and "place 3 of 3: line 11" in excerpt
        assert "[1, 6, 11]" in str(failure.to_json()["candidates"])


class TestFileNotFound:
    def test_nearest_paths_are_suggested(self, tmp_path: Path) -> None:
        """A missing file's hint names the closest existing paths, same name first."""
        root = _root(tmp_path, {"src/app/models.py": "x = 1\n", "src/app/views.py": "y\n"})

        failure = apply(
            "--- a/app/models.py\n+++ b/app/models.py\n@@\n-x = 1\n+x = 2\n", root
        ).errors[0]

        assert FailureCode.FILE_NOT_FOUND == failure.code
        assert failure.hint is not None
        assert failure.hint.startswith("Nearest existing paths: src/app/models.py")

    def test_the_workspace_is_listed_once_per_patch(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Every missing file of one patch is matched against one listing of the workspace."""
        root = _root(tmp_path, {"src/app/models.py": "x = 1\n", "src/app/views.py": "y\n"})
        listings: list[Path] = []
        real = intake._text_files

        def counted(folder: Path) -> Iterator[str]:
            listings.append(folder)
            return real(folder)

        monkeypatch.setattr(intake, "_text_files", counted)
        patch = "".join(
            f"--- a/app/{name}.py\n+++ b/app/{name}.py\n@@\n-x = 1\n+x = 2\n"
            for name in ("models", "views", "forms")
        )

        errors = apply(patch, root, record=False).errors

        assert [FailureCode.FILE_NOT_FOUND] * 3 == [e.code for e in errors]
        assert all((e.hint or "").startswith("Nearest existing paths: src/app/") for e in errors)
        assert len(listings) == 1

    def test_nothing_near_keeps_the_plain_hint(self) -> None:
        """With nothing alike, no suggestion is made."""
        assert [] == nearest_paths(["README.md", "setup.cfg"], "src/deep/module_x.py")


class TestSyntaxError:
    def test_names_file_edit_and_new_text(self, tmp_path: Path) -> None:
        """A hunk that breaks the parse: the failure names the edit and shows the new text."""
        root = _root(tmp_path, {"m.py": SOURCE})
        text = "--- a/m.py\n+++ b/m.py\n@@\n def other():\n-    return None\n+    return (None\n"

        failure = apply(text, root).errors[0]

        assert FailureCode.SYNTAX_ERROR == failure.code
        assert ("m.py", 0) == (failure.file, failure.hunk)
        assert "return (None" in (failure.excerpt or "")
        assert failure.current_sha256 == hashlib.sha256(SOURCE.encode()).hexdigest()


class TestCurrentHash:
    def test_every_failure_naming_a_file_carries_its_hash(self, tmp_path: Path) -> None:
        """A guard's refusal (no excerpt of its own) still names the file's current hash."""
        root = _root(tmp_path, {"m.py": SOURCE})
        key = "AKIA" + "ABCDEFGHIJKLMNOP"
        text = f'--- a/m.py\n+++ b/m.py\n@@\n import os\n+KEY = "{key}"\n'

        failure = apply(text, root).errors[0]

        assert FailureCode.SECRET_ADDED == failure.code
        assert failure.current_sha256 == hashlib.sha256(SOURCE.encode()).hexdigest()

    def test_path_outside_is_never_read(self, tmp_path: Path) -> None:
        """A failure about a path outside the workspace carries no hash."""
        root = _root(tmp_path / "ws", {"m.py": SOURCE})
        (tmp_path / "secret.txt").write_text("x\n", encoding="utf-8")

        failure = apply("--- a/../secret.txt\n+++ b/../secret.txt\n@@\n-x\n+y\n", root).errors[0]

        assert FailureCode.PATH_OUTSIDE_WORKSPACE == failure.code
        assert failure.current_sha256 is None
