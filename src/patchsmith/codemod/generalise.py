"""`recipe new`'s rule from one example: the call that changed, its arguments as metavariables.

The example's whole statement (`long id = LegacyIdGenerator.generate("a");`) would match
only itself. The rule is made instead from the smallest call (or `new`) expression that
holds every changed byte, in both texts; each argument carried over unchanged becomes a
metavariable (`$ARG1`, ...; `$$$ARGS` when the whole list is carried over), so the rule
matches the other call sites too. Arguments the change rewrote stay as written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchsmith.runtime.syntax import parse_tree

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["generalised_rule"]

# The call-like node types of the grammars patchsmith reads (tree-sitter's names).
_CALLS = frozenset(
    {
        "call",  # python
        "method_invocation",  # java
        "object_creation_expression",  # java
        "call_expression",  # javascript, typescript, go, rust
        "new_expression",  # javascript, typescript
        "macro_invocation",  # rust
    }
)


def generalised_rule(suffix: str, before: str, after: str) -> tuple[str, str] | None:
    """(pattern, fix) for the call that changed between `before` and `after` (files named
    `*suffix`), its unchanged arguments as metavariables; `None` when no single call holds
    the change, or a text does not parse."""
    old, new = before.encode(), after.encode()
    if old == new:
        return None
    start = _common_prefix(old, new)
    tail = _common_prefix(old[start:][::-1], new[start:][::-1])
    old_tree = parse_tree("example" + suffix, before)
    new_tree = parse_tree("example" + suffix, after)
    if old_tree is None or new_tree is None or old_tree.has_error or new_tree.has_error:
        return None
    call = _smallest_call(old_tree, start, len(old) - tail)
    if call is None:
        return None
    shift = len(new) - len(old)
    twin = _call_at(new_tree, call.start_byte, call.end_byte + shift)
    if twin is None:
        return None
    return _with_metavariables(call, twin)


def _common_prefix(a: bytes, b: bytes) -> int:
    size = min(len(a), len(b))
    for index in range(size):
        if a[index] != b[index]:
            return index
    return size


def _calls(root: Node) -> list[Node]:
    found = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _CALLS:
            found.append(node)
        stack.extend(node.children)
    return found


def _smallest_call(root: Node, start: int, end: int) -> Node | None:
    """The smallest call whose bytes hold [start, end)."""
    holding = [n for n in _calls(root) if n.start_byte <= start and end <= n.end_byte]
    return min(holding, key=lambda n: n.end_byte - n.start_byte, default=None)


def _call_at(root: Node, start: int, end: int) -> Node | None:
    """A call spanning exactly [start, end)."""
    return next((n for n in _calls(root) if (n.start_byte, n.end_byte) == (start, end)), None)


def _arguments(call: Node) -> list[Node]:
    listing = call.child_by_field_name("arguments")
    if listing is None:
        return []
    return [a for a in listing.named_children if "comment" not in a.type]


def _text(node: Node) -> bytes:
    return node.text or b""


def _with_metavariables(call: Node, twin: Node) -> tuple[str, str]:
    """Both calls' texts, each argument carried over replaced by the same metavariable."""
    old_args, new_args = _arguments(call), _arguments(twin)
    old_cuts: list[tuple[int, int, str]] = []
    new_cuts: list[tuple[int, int, str]] = []
    if old_args and [_text(a) for a in old_args] == [_text(a) for a in new_args]:
        # the whole list carried over: any number of arguments, so overloads match too
        old_cuts.append((old_args[0].start_byte, old_args[-1].end_byte, "$$$ARGS"))
        new_cuts.append((new_args[0].start_byte, new_args[-1].end_byte, "$$$ARGS"))
    else:
        unused = list(new_args)
        for index, arg in enumerate(old_args, start=1):
            twin_arg = next((a for a in unused if _text(a) == _text(arg)), None)
            if twin_arg is None:
                continue
            unused.remove(twin_arg)
            name = f"$ARG{index}"
            old_cuts.append((arg.start_byte, arg.end_byte, name))
            new_cuts.append((twin_arg.start_byte, twin_arg.end_byte, name))
    return _cut(call, old_cuts), _cut(twin, new_cuts)


def _cut(node: Node, cuts: list[tuple[int, int, str]]) -> str:
    data = _text(node)
    for start, end, name in sorted(cuts, reverse=True):
        a, b = start - node.start_byte, end - node.start_byte
        data = data[:a] + name.encode() + data[b:]
    return data.decode("utf-8")
