"""Codemods: deterministic recipes as data, run as guarded, recorded, idempotent transactions.

`run_recipe` is the entry point (also `patchsmith.run_recipe`); `docs/codemods.md`
describes the recipe contract, the operations and the backend each one uses.

Layer (docs/architecture.md): a workflow, sibling of `attempt`, `verify`, `commands` and
`pipeline`; may import them and `store` and everything below, never `fleet`, `mcp` or `cli`.
Backends import the dispatcher's shared types from `codemod/matches.py` and
`codemod/edits.py`, never `codemod/transform.py`.
"""

from patchsmith.codemod.recipe import Recipe, parse_recipe, recipe_json_schema
from patchsmith.codemod.report import RecipeFile, RecipeReport, RecipeStatus, SkippedFile
from patchsmith.codemod.runner import run_recipe

__all__ = [
    "Recipe",
    "RecipeFile",
    "RecipeReport",
    "RecipeStatus",
    "SkippedFile",
    "parse_recipe",
    "recipe_json_schema",
    "run_recipe",
]
