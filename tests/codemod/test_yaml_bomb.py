"""YAML is read with a bound on alias expansion (finding 10 of issue 20)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from patchsmith.cli import main
from patchsmith.codemod import run_recipe
from patchsmith.codemod.recipe import parse_recipe
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.yamlbound import (
    MAX_EXPANDED_NODES,
    YamlTooLarge,
    check_expansion,
    expanded_nodes,
    safe_load,
)


def _bomb(levels: int = 9, width: int = 9, key: str = "spec") -> str:
    """Billion laughs: each level a list of `width` aliases of the one before."""
    lines = [f'{key}: {{serviceAccount: x}}\na: &a ["lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghijklmnop"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * width) + "]")
        previous = name
    return "\n".join(lines) + "\n"


class _Node:
    """A node as both YAML libraries shape it: `.value` is text or a list of nodes."""

    def __init__(self, value: object) -> None:
        self.value = value


BOMB = _bomb()
RENAME = """recipe_id: rename-sa
language: yaml
summary: serviceAccount to serviceAccountName
operations:
  - type: config_key_rename
    from: spec.serviceAccount
    to: serviceAccountName
"""


class TestCount:
    def test_the_bomb_is_small_and_counted_without_expanding(self) -> None:
        """A text under 500 bytes standing for hundreds of millions of nodes is measured as such."""
        assert len(BOMB) < 500
        nodes = list(YAML(typ="safe", pure=True).compose_all(BOMB))

        expanded, distinct = expanded_nodes(nodes)

        assert expanded > 10**8 and distinct < 100
        with pytest.raises(YamlTooLarge, match="alias bomb"):
            check_expansion(nodes)

    def test_a_large_document_without_aliases_passes(self) -> None:
        """Size alone is never refused here: the text's own size bounds it."""
        node = _Node([_Node(str(i)) for i in range(MAX_EXPANDED_NODES + 10)])

        assert check_expansion([node]) > MAX_EXPANDED_NODES

    def test_modest_aliases_pass(self) -> None:
        """Anchors shared a few times (recipes do this) are fine."""
        assert {"a": [1, 2], "b": [1, 2]} == safe_load("a: &x [1, 2]\nb: *x\n")
        assert safe_load("") is None

    @given(st.recursive(st.integers() | st.text(max_size=5), lambda c: st.lists(c, max_size=4)))
    def test_counts_every_node(self, data: object) -> None:
        """Without aliases the expanded count is the node count."""
        node = yaml.compose(yaml.safe_dump(data), Loader=yaml.SafeLoader)

        expanded, distinct = expanded_nodes([node])

        assert expanded == distinct

    def test_deep_nesting_does_not_exhaust_the_stack(self) -> None:
        """The count is iterative."""
        depth = 5000
        node = _Node("x")
        for _ in range(depth):
            node = _Node([node])

        assert (depth + 1, depth + 1) == expanded_nodes([node])


class TestConfigRecipe:
    def test_dry_run_skips_the_bomb_with_its_reason(self, tmp_path: Path) -> None:
        """The bomb is reported as skipped, not read; memory stays small."""
        (tmp_path / "deploy.yaml").write_text(BOMB)
        recipe = parse_recipe(RENAME)
        assert not isinstance(recipe, PatchFailure)

        tracemalloc.start()
        try:
            report = run_recipe(recipe, tmp_path)
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

        assert peak < 100 * 1024 * 1024
        [skipped] = [s for s in report.skipped if s.path == "deploy.yaml"]
        assert "alias bomb" in skipped.reason
        assert not report.diff

    def test_the_cli_reports_it_in_json(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`recipe run --json` lists the file under `skipped` with the reason."""
        (tmp_path / "deploy.yaml").write_text(BOMB)
        (tmp_path / "rename.yaml").write_text(RENAME)

        main(["recipe", "run", str(tmp_path / "rename.yaml"), "-C", str(tmp_path), "--json"])

        data = json.loads(capsys.readouterr().out)
        reasons = {s["path"]: s["reason"] for s in data["skipped"]}
        assert "alias bomb" in reasons["deploy.yaml"]

    def test_a_bomb_recipe_is_invalid(self) -> None:
        """A recipe file that is itself a bomb is INVALID_RECIPE."""
        recipe = parse_recipe(
            RENAME + "x-bomb:\n" + "".join(f"  {line}\n" for line in _bomb(key="k").splitlines())
        )

        assert isinstance(recipe, PatchFailure)
        assert FailureCode.INVALID_RECIPE == recipe.code
        assert "alias bomb" in recipe.message
