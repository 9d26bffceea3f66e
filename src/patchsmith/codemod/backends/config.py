"""Config files: one key renamed in YAML, TOML or JSON, every other byte kept.

The key is found by its path in the syntax tree (tree-sitter's YAML, TOML and JSON
grammars, which patchsmith already ships) and only its token is rewritten, so
comments, quoting, indentation and key order stay exactly as they were. The result
is then read back with the round-trip libraries (tomlkit, ruamel.yaml) or `json`,
and kept only when its data equals the old data with exactly that key renamed:
a rename that would collide with an existing key, or change anything else, is left
alone and reported.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from patchsmith.codemod.backend_table import runs
from patchsmith.codemod.backends.trees import parse
from patchsmith.codemod.edits import Edit, EditGroup, apply_groups
from patchsmith.codemod.matches import SeenMatch
from patchsmith.codemod.recipe import ConfigKeyRename
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import PatchFailure
from patchsmith.runtime.yamlbound import YamlTooLarge, check_expansion

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["key_tokens", "load_data", "rename_key", "renamed_data"]

_KINDS = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


def _kind(path: str) -> str | None:
    dot = path.rfind(".")
    return _KINDS.get(path[dot:].lower()) if dot >= 0 else None


# -- finding key tokens by path ------------------------------------------------------------------


def key_tokens(kind: str, data: bytes) -> Iterator[tuple[tuple[str, ...], Node]]:
    """Every key token with its full path (list items are transparent), in document order."""
    root = parse(kind, data).root_node
    if kind == "toml":
        yield from _toml_keys(root)
    elif kind == "yaml":
        yield from _yaml_keys(root, ())
    else:
        yield from _json_keys(root, ())


def _toml_segments(key: Node) -> list[Node]:
    if key.type == "dotted_key":
        return [s for child in key.children if child.type != "." for s in _toml_segments(child)]
    return [key] if key.type in ("bare_key", "quoted_key") else []


def _toml_name(node: Node) -> str:
    text = _text(node)
    if node.type == "quoted_key":
        if text.startswith("'"):
            return text[1:-1]
        value: object = json.loads(text)
        return str(value)
    return text


def _toml_keys(root: Node) -> Iterator[tuple[tuple[str, ...], Node]]:
    for child in root.children:
        prefix: tuple[str, ...] = ()
        pairs = [child] if child.type == "pair" else []
        if child.type in ("table", "table_array_element"):
            header = next(
                (c for c in child.children if c.type in ("bare_key", "quoted_key", "dotted_key")),
                None,
            )
            if header is None:
                continue
            for segment in _toml_segments(header):
                prefix = (*prefix, _toml_name(segment))
                yield prefix, segment
            pairs = [c for c in child.children if c.type == "pair"]
        yield from _toml_pairs(pairs, prefix)


def _toml_pairs(
    pairs: list[Node], prefix: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Node]]:
    for pair in pairs:
        path = prefix
        if not pair.children:
            continue
        for segment in _toml_segments(pair.children[0]):
            path = (*path, _toml_name(segment))
            yield path, segment
        value = pair.children[-1]
        if value.type == "inline_table":
            yield from _toml_pairs([c for c in value.children if c.type == "pair"], path)


def _yaml_name(node: Node) -> str | None:
    scalar = node.children[0] if node.type == "flow_node" and node.children else node
    text = _text(scalar)
    if scalar.type == "plain_scalar":
        return text
    if scalar.type == "double_quote_scalar":
        try:
            value: object = json.loads(text)
        except ValueError:
            return None
        return str(value)
    if scalar.type == "single_quote_scalar":
        return text[1:-1].replace("''", "'")
    return None


def _yaml_keys(node: Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Node]]:
    for child in node.children:
        if child.type in ("block_mapping_pair", "flow_pair"):
            key = child.child_by_field_name("key")
            value = child.child_by_field_name("value")
            name = _yaml_name(key) if key is not None else None
            if key is None or name is None:
                continue
            here = (*path, name)
            scalar = key.children[0] if key.type == "flow_node" and key.children else key
            yield here, scalar
            if value is not None:
                yield from _yaml_keys(value, here)
        elif child.type == "document":
            yield from _yaml_keys(child, ())
        else:
            yield from _yaml_keys(child, path)


def _json_keys(node: Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Node]]:
    for child in node.children:
        if child.type == "pair":
            key = child.child_by_field_name("key")
            value = child.child_by_field_name("value")
            if key is None:
                continue
            try:
                name = str(json.loads(_text(key)))
            except ValueError:
                continue
            here = (*path, name)
            yield here, key
            if value is not None:
                yield from _json_keys(value, here)
        else:
            yield from _json_keys(child, path)


def _new_token(kind: str, node: Node, new: str) -> str:
    bare = all(c.isalnum() or c in "_-" for c in new) and new.isascii() and new != ""
    if kind == "json":
        return json.dumps(new)
    if kind == "toml":
        return new if bare else json.dumps(new)
    if node.type == "single_quote_scalar":
        return "'" + new.replace("'", "''") + "'"
    if node.type == "double_quote_scalar" or not bare:
        return json.dumps(new)
    return new


# -- checking the result with the round-trip libraries -------------------------------------------


def load_data(kind: str, text: str) -> object:
    """The data of a config text (every YAML document) as plain values; ValueError if unreadable."""
    if kind == "toml":
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            return tomlkit.parse(text).unwrap()
        except TOMLKitError as exc:
            raise ValueError(str(exc)) from exc
    if kind == "yaml":
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        reader = YAML(typ="safe", pure=True)
        try:
            # Measured before it is built: an alias bomb must not reach the comparison
            # below, which walks every expansion (YamlTooLarge is a ValueError).
            check_expansion(reader.compose_all(text))
            return list(reader.load_all(text))
        except YAMLError as exc:
            raise ValueError(str(exc)) from exc
    try:
        loaded: object = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(str(exc)) from exc
    return loaded


def renamed_data(data: object, path: tuple[str, ...], new: str) -> object:
    """`data` with the key at `path` renamed to `new` (list items are transparent, `*` any key)."""
    if isinstance(data, list):
        return [renamed_data(item, path, new) for item in data]
    if not isinstance(data, dict) or not path:
        return data
    head, rest = path[0], path[1:]
    out: dict[object, object] = {}
    for key, value in data.items():
        if head in ("*", key) and not rest:
            out[new] = value
        elif head in ("*", key):
            out[key] = renamed_data(value, rest, new)
        else:
            out[key] = value
    return out


def _same_path(found: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    """`wanted` may hold `*` segments, each standing for any one key."""
    return len(found) == len(wanted) and all(
        w in ("*", f) for f, w in zip(found, wanted, strict=True)
    )


@runs(ConfigKeyRename)
def rename_key(
    op: ConfigKeyRename,
    work: WorkSet,
    matches: Counter[str],
    seen: list[SeenMatch],
    **_unused: object,
) -> PatchFailure | None:
    """Rename the key `op.from_` to `op.to` in every YAML, TOML and JSON file that has it."""
    wanted = op.path
    needle = wanted[-1].encode("utf-8") if wanted[-1] != "*" else b""
    for path in work.paths:
        kind = _kind(path)
        data = work.data(path)
        if kind is None or data is None or needle not in data:
            continue
        groups = []
        for key_path, node in key_tokens(kind, data):
            if _same_path(key_path, wanted):
                token = _new_token(kind, node, op.to).encode("utf-8")
                edit = Edit(node.start_byte, node.end_byte, token)
                groups.append(EditGroup((edit,), node.start_point[0] + 1))
        if not groups:
            continue
        new, _ = apply_groups(data, groups)
        old_text, new_text = data.decode("utf-8"), new.decode("utf-8")
        clash = f"renaming would change more than the key (is {op.to!r} already there?)"
        try:
            before = load_data(kind, old_text)
        except YamlTooLarge as exc:
            work.unreadable[path] = f"not read: {exc}"
            continue
        except ValueError as exc:
            reason = f"the file does not load as {kind}: {str(exc).splitlines()[0]}"
            seen.append(SeenMatch(path, groups[0].line, ".".join(wanted), reason))
            continue
        try:
            after = load_data(kind, new_text)
        except ValueError:
            seen.append(SeenMatch(path, groups[0].line, ".".join(wanted), clash))
            continue
        if after != renamed_data(before, wanted, op.to):
            seen.append(SeenMatch(path, groups[0].line, ".".join(wanted), clash))
            continue
        work.set(path, new)
        matches[path] += len(groups)
    return None
