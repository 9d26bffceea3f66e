"""Tree-sitter parsers for the backends that read syntax in-process (Java, YAML, TOML, JSON)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

__all__ = ["parse", "walk"]

_GRAMMARS = {
    "java": ("tree_sitter_java", "language"),
    "yaml": ("tree_sitter_yaml", "language"),
    "toml": ("tree_sitter_toml", "language"),
    "json": ("tree_sitter_json", "language"),
}


@cache
def _parser(name: str) -> Parser:
    import tree_sitter

    module_name, function = _GRAMMARS[name]
    module = importlib.import_module(module_name)
    language_fn: Callable[[], object] = getattr(module, function)
    return tree_sitter.Parser(tree_sitter.Language(language_fn()))


def parse(language: str, data: bytes) -> Tree:
    """The tree of `data` in `language` (one of java, yaml, toml, json)."""
    return _parser(language).parse(data)


def walk(node: Node) -> Iterator[Node]:
    """`node` and every node below it, in document order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
