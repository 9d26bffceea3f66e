"""Where recipes come from: the project's folders first, then the recipes shipped in the package.

A folder holds `<id>.yaml` files or `<id>/recipe.yaml` folders (with `fixtures/`
beside the recipe). Searched in order: the folders configured in `patchsmith.toml`
(`[codemod] recipe_dirs`) or `pyproject.toml` (`[tool.patchsmith.codemod]`), then
`.patchsmith/recipes/`, then the built-in recipes; the first recipe with an id wins.
A built-in id is never taken by another folder's recipe: such a recipe is INVALID_RECIPE,
and running that id is refused while it is there (a repository must not be able to
change what `unittest-to-assert` does; docs/decisions/0031).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from patchsmith.codemod.recipe import Recipe, parse_recipe
from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "BUILTIN_DIR",
    "PROJECT_DIR",
    "RecipeEntry",
    "find_recipe",
    "list_recipes",
    "load_recipe_file",
    "recipe_dirs",
]

BUILTIN_DIR = Path(__file__).resolve().parent / "recipes"
"""The recipes shipped inside the package (YAML data files in the wheel)."""

PROJECT_DIR = Path(".patchsmith") / "recipes"
"""A project's own recipes, relative to the workspace root."""

RECIPE_FILE = "recipe.yaml"


@dataclass(frozen=True)
class RecipeEntry:
    """A recipe found in a folder: its model, its source text and where its fixtures live."""

    recipe: Recipe
    source: Path
    text: str
    builtin: bool

    @property
    def fixtures(self) -> Path:
        """The `fixtures/` folder beside a `<id>/recipe.yaml` (may not exist)."""
        return self.source.parent / "fixtures"


def _configured(root: Path) -> tuple[list[Path], PatchFailure | None]:
    for name, keys in (
        ("patchsmith.toml", ("codemod",)),
        ("pyproject.toml", ("tool", "patchsmith", "codemod")),
    ):
        path = root / name
        if not path.is_file():
            continue
        try:
            data: object = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return [], PatchFailure(FailureCode.INVALID_POLICY, f"cannot read {name}: {exc}")
        for key in keys:
            data = data.get(key, {}) if isinstance(data, Mapping) else {}
        dirs = data.get("recipe_dirs", []) if isinstance(data, Mapping) else []
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            return [], PatchFailure(
                FailureCode.INVALID_POLICY,
                f"{name}: codemod.recipe_dirs must be a list of folder names",
                file=name,
            )
        return [root / d for d in dirs], None
    return [], None


def recipe_dirs(
    root: Path | None, extra: Iterable[str | os.PathLike[str]] = ()
) -> tuple[list[Path], PatchFailure | None]:
    """The folders searched for recipes, in order, and a failure when the settings are bad."""
    dirs = [Path(d) for d in extra]
    failure = None
    if root is not None:
        configured, failure = _configured(root)
        dirs += [*configured, root / PROJECT_DIR]
    dirs.append(BUILTIN_DIR)
    return dirs, failure


def load_recipe_file(path: Path, *, builtin: bool = False) -> RecipeEntry | PatchFailure:
    """The recipe in `path` (YAML or JSON), or INVALID_RECIPE saying what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return PatchFailure(FailureCode.INVALID_RECIPE, f"cannot read {path}: {exc}")
    parsed = parse_recipe(text, source=path.name if builtin else str(path))
    if isinstance(parsed, PatchFailure):
        return parsed
    return RecipeEntry(parsed, path, text, builtin)


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    found = []
    for child in sorted(folder.iterdir()):
        if child.is_file() and child.suffix in (".yaml", ".yml", ".json"):
            found.append(child)
        elif child.is_dir() and (child / RECIPE_FILE).is_file():
            found.append(child / RECIPE_FILE)
    return found


def _shadowing(path: Path, recipe_id: str) -> PatchFailure:
    return PatchFailure(
        FailureCode.INVALID_RECIPE,
        f"{path}: recipe id {recipe_id!r} belongs to a built-in recipe; a project recipe "
        "cannot replace it",
        file=str(path),
        hint=f"give the project recipe its own id (e.g. `project-{recipe_id}`) and run it by "
        "that id",
        rule="builtin-recipe-id",
    )


def _collect(
    root: Path | None, extra: Iterable[str | os.PathLike[str]]
) -> tuple[dict[str, RecipeEntry], list[PatchFailure], dict[str, PatchFailure]]:
    """The recipes by id, the failures, and the built-in ids another folder tried to take."""
    dirs, failure = recipe_dirs(root, extra)
    builtin_ids = {
        loaded.recipe.recipe_id
        for path in _files(BUILTIN_DIR)
        if not isinstance(loaded := load_recipe_file(path, builtin=True), PatchFailure)
    }
    entries: dict[str, RecipeEntry] = {}
    failures: list[PatchFailure] = [failure] if failure else []
    shadowed: dict[str, PatchFailure] = {}
    for folder in dirs:
        builtin = folder == BUILTIN_DIR
        for path in _files(folder):
            loaded = load_recipe_file(path, builtin=builtin)
            if isinstance(loaded, PatchFailure):
                failures.append(loaded)
                continue
            recipe_id = loaded.recipe.recipe_id
            if not builtin and recipe_id in builtin_ids:
                refused = _shadowing(path, recipe_id)
                failures.append(refused)
                shadowed.setdefault(recipe_id, refused)
            elif recipe_id not in entries:
                entries[recipe_id] = loaded
    return entries, failures, shadowed


def list_recipes(
    root: Path | None, extra: Iterable[str | os.PathLike[str]] = ()
) -> tuple[list[RecipeEntry], list[PatchFailure]]:
    """Every recipe found (the first of each id), and the failures of those that do not load.

    A recipe outside the package with a built-in recipe's id is one of the failures.
    """
    entries, failures, _shadowed = _collect(root, extra)
    return sorted(entries.values(), key=lambda e: e.recipe.recipe_id), failures


def find_recipe(
    name: str | os.PathLike[str],
    root: Path | None,
    extra: Iterable[str | os.PathLike[str]] = (),
) -> RecipeEntry | PatchFailure:
    """The recipe called `name`, or in the file `name`; RECIPE_NOT_FOUND listing the known ids.

    INVALID_RECIPE when a project recipe claims the built-in id `name`: neither runs.
    """
    as_path = Path(name)
    if as_path.suffix in (".yaml", ".yml", ".json") and as_path.is_file():
        return load_recipe_file(as_path)
    if as_path.is_dir() and (as_path / RECIPE_FILE).is_file():
        return load_recipe_file(as_path / RECIPE_FILE)
    by_id, failures, shadowed = _collect(root, extra)
    if str(name) in shadowed:
        return shadowed[str(name)]
    if str(name) in by_id:
        return by_id[str(name)]
    entries = sorted(by_id.values(), key=lambda e: e.recipe.recipe_id)
    broken = [f for f in failures if str(name) in f.message]
    if broken:
        return broken[0]
    known = ", ".join(e.recipe.recipe_id for e in entries) or "none"
    return PatchFailure(
        FailureCode.RECIPE_NOT_FOUND,
        f"no recipe {str(name)!r} (known: {known})",
        hint="`patchsmith recipe list` shows every recipe; pass a recipe file's path to run it "
        "directly",
    )
