"""Shared by the codemod tests: small workspaces and recipes written to disk."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write `files` (relative path to text) under `root`."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` but patchsmith's own records, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".patchsmith" not in p.relative_to(root).parts
    }


EQUAL_RULE = """\
recipe_id: eq
language: python
summary: assertEqual to assert
operations:
  - type: ast_grep_rule
    id: eq
    rule: {pattern: "self.assertEqual($A, $B)"}
    fix: "assert $A == $B"
"""
