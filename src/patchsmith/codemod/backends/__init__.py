"""Codemod backends, one module each: `astgrep` (rules for every language it parses),
`python` (libcst: scope-aware renames, import management), `java` (tree-sitter:
receiver-checked method calls, imports), `config` (YAML/TOML/JSON keys)."""

__all__: list[str] = []
