"""select_files: which files a recipe reads (folder-only exclusions skip per-file matching)."""

from __future__ import annotations

from pathlib import Path

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.codemod import parse_recipe
from patchsmith.codemod.files import ALWAYS_EXCLUDED, _folders_only, select_files
from patchsmith.codemod.recipe import Recipe

from .helpers import write_tree

TREE = {
    "a.py": "",
    "build/b.py": "",
    "src/build.py": "",
    "src/gen/c.py": "",
    "src/keep/d.py": "",
    "node_modules/e.py": "",
    "docs/f.py": "",
    "docs/g.txt": "",
}


def recipe(exclude: list[str]) -> Recipe:
    parsed = parse_recipe(
        "recipe_id: r\nlanguage: python\nsummary: s\n"
        f"scope: {{exclude: {exclude!r}}}\n"
        "operations: [{type: ast_grep_rule, rule: {pattern: x}, fix: y}]\n"
    )
    assert isinstance(parsed, Recipe)
    return parsed


def brute_force(root: Path, patterns: list[str]) -> list[str]:
    """Every .py file none of whose folders nor itself the patterns exclude."""
    spec = pathspec.GitIgnoreSpec.from_lines([*ALWAYS_EXCLUDED, *patterns])
    chosen = []
    for path in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")):
        parts = path.split("/")
        folders = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts) - 1)]
        if not any(spec.match_file(f) for f in folders) and not spec.match_file(path):
            chosen.append(path)
    return chosen


class TestSelectFiles:
    def test_folder_patterns_prune_and_file_patterns_still_apply(self, tmp_path: Path) -> None:
        """`build/` keeps out the folder, not `src/build.py`; `*.py`-style lines still match."""
        write_tree(tmp_path, TREE)

        folders, _ = select_files(tmp_path, recipe(["build/", "gen/"]))
        files, _ = select_files(tmp_path, recipe(["build/", "docs/f.py"]))

        assert ["a.py", "docs/f.py", "src/build.py", "src/keep/d.py"] == folders
        assert ["a.py", "src/build.py", "src/gen/c.py", "src/keep/d.py"] == files

    def test_which_lists_are_folder_only(self) -> None:
        """Blank lines and comments do not count; one file pattern makes the list need matching."""
        assert _folders_only(["build/", "", "# a comment", " dist/ "])
        assert not _folders_only(["build/", "*.pyc"])
        assert not _folders_only(["build"])
        assert not _folders_only(["build/", " #secret.py"])  # only a leading `#` is a comment

    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(
            st.sampled_from(
                ["build/", "gen/", "src/", "/docs/", "keep/", "*.py", "a.py", "!src/keep/", "#x"]
            ),
            max_size=4,
        )
    )
    def test_same_files_as_matching_every_path(self, patterns: list[str]) -> None:
        """Whatever the exclusions, the walk picks what matching each folder and file picks."""
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write_tree(root, TREE)

            chosen, _ = select_files(root, recipe(patterns))

            assert brute_force(root, patterns) == chosen
