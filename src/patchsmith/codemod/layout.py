"""The formatting guard of recipes: a fix keeps the file's layout, or the file is refused.

ast-grep writes a fix's metavariables in its own layout: a multi-line `$$$ARGS` comes
back reflowed (`f(\\n    a,\\n    b,  # c\\n)` → `g(a,\\n b,  # c)`, which here even
comments out the closing parenthesis). Two steps keep the layout:

- `keep_layout`, per rule application: every replacement spanning lines is laid out as
  the text it replaces (the stretches of code the fix carried over keep their original
  whitespace, `transfer`); kept only when the file's syntax tree is the same either
  way (or the repair removes a syntax error the raw fix made). A reflow that cannot be
  repaired safely refuses the file.
- `tidy`, per changed file: a final newline the change lost is put back (a YAML block
  scalar at the end of a file keeps its last line break), trailing whitespace the
  change added is stripped where that changes no token (and always inside YAML, where a
  `run: |` block would carry it into the script), else the file is refused; lines
  changed outside every match of the recipe's rules refuse the file.

A refusal is a reason string; the runner leaves the file out and lists it under `skipped`.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from patchsmith.codemod.edits import Edit, EditGroup, apply_groups
from patchsmith.engine.linediff import line_opcodes
from patchsmith.runtime.syntax import parse_problems, parse_tree

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["keep_layout", "reflowed", "tidy", "transfer"]

_SPACE = " \t\r\n\f\v"


def _shared(original: str, replacement: str) -> list[tuple[int, int, int, int]]:
    """The stretches both texts share, compared without whitespace: (start, end) in
    `original`, then (start, end) in `replacement`, first character to last."""
    old = [(i, c) for i, c in enumerate(original) if c not in _SPACE]
    new = [(i, c) for i, c in enumerate(replacement) if c not in _SPACE]
    a = [c for _, c in old]
    b = [c for _, c in new]
    # a fix mostly rewrites a name and carries the rest over: the shared head and tail
    # are found directly, the alignment only looks at what lies between them
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    blocks = [(0, 0, head)]
    middle = difflib.SequenceMatcher(
        a=a[head : len(a) - tail], b=b[head : len(b) - tail], autojunk=False
    )
    blocks.extend((i + head, j + head, n) for i, j, n in middle.get_matching_blocks())
    blocks.append((len(a) - tail, len(b) - tail, tail))
    return [
        (old[i][0], old[i + n - 1][0] + 1, new[j][0], new[j + n - 1][0] + 1)
        for i, j, n in blocks
        if n
    ]


def transfer(original: str, replacement: str) -> str:
    """`replacement` with every stretch it shares with `original` (compared without
    whitespace) written as in `original`; only whitespace changes. Unchanged when the
    original is on one line."""
    if "\n" not in original or original == replacement:
        return replacement
    out: list[str] = []
    cursor = 0
    for a0, a1, b0, b1 in _shared(original, replacement):
        out.append(replacement[cursor:b0])
        out.append(original[a0:a1])
        cursor = b1
    out.append(replacement[cursor:])
    return "".join(out)


def reflowed(original: str, replacement: str) -> bool:
    """Whether `replacement` carries over a stretch of `original` with its lines broken
    differently (joined or split): a multi-line argument list written on fewer lines."""
    if "\n" not in original:
        return False
    return any(
        original.count("\n", a0, a1) != replacement.count("\n", b0, b1)
        for a0, a1, b0, b1 in _shared(original, replacement)
    )


def keep_layout(
    path: str, data: bytes, groups: Sequence[EditGroup], raw: bytes
) -> tuple[bytes, str | None]:
    """`raw` (`data` with `groups` applied), or the same edits laid out as the text they
    replace where that is safe; with a refusal when a fix reflowed lines it could not
    keep. `groups` are those `apply_groups` took. YAML is left as the fix wrote it: its
    whitespace is structure, and a block scalar's text is one token (see `tidy`)."""
    ends = [_no_stray_indent(data, group) for group in groups]
    if ends != list(groups):
        # ast-grep indents the empty last line of a fix that ends with a newline: the
        # next line of the file would be pushed right by it
        groups = ends
        raw, _ = apply_groups(data, groups)
    relaid = [
        EditGroup(tuple(_relaid(data, edit) for edit in group.edits), group.line)
        for group in groups
    ]
    moved = [
        (group, edit)
        for group, new in zip(groups, relaid, strict=True)
        for edit, fixed in zip(group.edits, new.edits, strict=True)
        if edit.replacement != fixed.replacement
    ]
    if not moved:
        return raw, None
    candidate, _ = apply_groups(data, relaid)
    if path.lower().endswith((".yaml", ".yml")):
        # indentation is structure and a block scalar is one token: the relaid text is
        # kept only where it repairs the raw one and indents every line as the fix did,
        # relative to its other lines (the same mapping, the same scalar text)
        if _repairs(path, data, raw, candidate) and all(
            _relative_lines(a.replacement) == _relative_lines(b.replacement)
            for old, new in zip(groups, relaid, strict=True)
            for a, b in zip(old.edits, new.edits, strict=True)
        ):
            return candidate, None
    elif _same_code(path, raw, candidate, (_placed(groups), _placed(relaid))) or (
        _repairs(path, data, raw, candidate) and _between_brackets(path, candidate, relaid, groups)
    ):
        return candidate, None
    for group, edit in moved:
        old = data[edit.start : edit.end].decode("utf-8", "replace")
        if reflowed(old, edit.replacement.decode("utf-8", "replace")):
            return raw, (
                f"a fix reflows the multi-line text of the match at line {group.line}, "
                "and its layout cannot be kept safely (formatting guard)"
            )
    return raw, None


def _relative_lines(text: bytes) -> list[tuple[int, bytes]]:
    """The lines after the first, each as (indentation beyond the least, text without
    trailing whitespace); blank lines as (0, b"")."""
    lines = [line.rstrip(b" \t\r") for line in text.split(b"\n")[1:]]
    indents = [len(line) - len(line.lstrip(b" \t")) for line in lines if line]
    least = min(indents, default=0)
    return [
        (len(line) - len(line.lstrip(b" \t")) - least, line.lstrip(b" \t")) if line else (0, b"")
        for line in lines
    ]


def _no_stray_indent(data: bytes, group: EditGroup) -> EditGroup:
    """The group with the indentation after each replacement's final newline removed,
    where the text it replaces ended with a newline too."""
    edits = []
    for edit in group.edits:
        head, newline, rest = edit.replacement.rpartition(b"\n")
        if newline and rest and not rest.strip(b" \t") and data[edit.end - 1 : edit.end] == b"\n":
            edit = Edit(edit.start, edit.end, head + newline)
        edits.append(edit)
    return EditGroup(tuple(edits), group.line)


def _relaid(data: bytes, edit: Edit) -> Edit:
    try:
        original = data[edit.start : edit.end].decode("utf-8")
        replacement = edit.replacement.decode("utf-8")
    except UnicodeDecodeError:
        return edit
    return Edit(edit.start, edit.end, transfer(original, replacement).encode("utf-8"))


def _placed(groups: Sequence[EditGroup]) -> list[tuple[int, int]]:
    """Where each edit's replacement lies in the text `apply_groups` made of them."""
    placed = []
    shift = 0
    for edit in sorted((e for g in groups for e in g.edits), key=lambda e: e.start):
        start = edit.start + shift
        placed.append((start, start + len(edit.replacement)))
        shift += len(edit.replacement) - (edit.end - edit.start)
    return placed


def _leaves(root: Node, ranges: Sequence[tuple[int, int]] | None) -> list[tuple[str, bytes]]:
    """Type and text of every leaf (those touching `ranges` only, when given)."""
    found: list[tuple[str, bytes]] = []
    ordered = sorted(ranges) if ranges is not None else []
    ends = [end for _, end in ordered]
    stack = [root]
    while stack:
        node = stack.pop()
        if ranges is not None:
            # the first range ending at or after the node's start must begin by its end
            at = bisect.bisect_left(ends, node.start_byte)
            if at == len(ordered) or ordered[at][0] > node.end_byte:
                continue
        if node.child_count:
            stack.extend(reversed(node.children))
        else:
            found.append((node.type, node.text or b""))
    return found


def _same_code(
    path: str,
    one: bytes,
    other: bytes,
    ranges: tuple[list[tuple[int, int]], list[tuple[int, int]]] | None = None,
) -> bool:
    """Whether both texts parse to the same tree, leaf texts included (whitespace aside).

    The texts differ only in whitespace; with `ranges` (where each differs: the edits'
    places in `one`, then in `other`) only the leaves there are compared, the rest of
    the tree by its structure (named nodes, compared in C)."""
    a = parse_tree(path, one.decode("utf-8"))
    b = parse_tree(path, other.decode("utf-8"))
    if a is None or b is None or a.has_error or b.has_error:
        return False
    if str(a) != str(b):
        return False
    return _leaves(a, ranges and ranges[0]) == _leaves(b, ranges and ranges[1])


def _problems(path: str, data: bytes) -> int | None:
    found = parse_problems(path, data.decode("utf-8"))
    return None if found is None else found.count


def _repairs(path: str, data: bytes, raw: bytes, candidate: bytes) -> bool:
    """Whether the raw fix broke the syntax and the relaid one does not."""
    before, broken, fixed = (_problems(path, d) for d in (data, raw, candidate))
    if before is None or broken is None or fixed is None:
        return False
    return broken > before and fixed <= before


def _between_brackets(
    path: str, candidate: bytes, relaid: Sequence[EditGroup], raw: Sequence[EditGroup]
) -> bool:
    """Whether every place where `candidate` differs from the raw fix is whitespace inside
    a pair of brackets of the candidate (where no grammar gives whitespace a meaning: not
    inside a token, not Python's indentation, not JavaScript's line ends)."""
    tree = parse_tree(path, candidate.decode("utf-8"))
    if tree is None:
        return False
    new_edits = sorted((e for g in relaid for e in g.edits), key=lambda e: e.start)
    old_edits = sorted((e for g in raw for e in g.edits), key=lambda e: e.start)
    for (start, _end), fixed, plain in zip(_placed(relaid), new_edits, old_edits, strict=True):
        if fixed.replacement == plain.replacement:
            continue
        matcher = difflib.SequenceMatcher(a=plain.replacement, b=fixed.replacement, autojunk=False)
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            # a deletion leaves nothing in the candidate: judge the place it left
            for at in range(start + j1, start + max(j2, j1 + 1)):
                if not _bracketed(tree, min(at, len(candidate) - 1)):
                    return False
    return True


_OPEN = frozenset({"(", "[", "{"})
_CLOSE = frozenset({")", "]", "}"})


def _bracketed(root: Node, at: int) -> bool:
    node: Node | None = root.descendant_for_byte_range(at, at)
    if node is not None and node.child_count == 0 and node.start_byte < at < node.end_byte:
        return False  # inside a token
    while node is not None:
        children = node.children
        if (
            len(children) >= 2
            and children[0].type in _OPEN
            and children[-1].type in _CLOSE
            and children[0].end_byte <= at < children[-1].start_byte
        ):
            return True
        node = node.parent
    return False


def tidy(
    path: str, original: bytes, new: bytes, spans: Sequence[tuple[int, int]] | None = None
) -> tuple[bytes, str | None]:
    """`new` with the final newline kept and trailing whitespace the change added removed
    where safe; a refusal when added trailing whitespace cannot be removed safely, or
    when lines changed outside every span of `spans` (byte ranges of `original` that the
    recipe's matches covered; `None`: not checked)."""
    if original.endswith(b"\n") and new and not new.endswith(b"\n"):
        new += b"\n"
    old_lines = original.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    opcodes = line_opcodes(old_lines, new_lines)  # common head and tail cut first: fast
    if spans is not None:
        outside = _outside(original, opcodes, spans)
        if outside is not None:
            return new, (
                f"line {outside} changed outside every match of the recipe (formatting guard)"
            )
    trailing = [
        j
        for tag, i1, i2, j1, j2 in opcodes
        if tag != "equal"
        for j in range(j1, j2)
        if _trailing(new_lines[j]) and new_lines[j] not in old_lines[i1:i2]
    ]
    if not trailing:
        return new, None
    stripped = list(new_lines)
    for j in trailing:
        line = stripped[j]
        body = line.rstrip(b"\r\n")
        stripped[j] = body.rstrip(b" \t") + line[len(body) :]
    fixed = b"".join(stripped)
    if path.lower().endswith((".yaml", ".yml")) or _same_code(path, new, fixed):
        return fixed, None
    return new, (
        f"the change adds trailing whitespace at line {trailing[0] + 1} that cannot be "
        "removed without changing the code (formatting guard)"
    )


def _trailing(line: bytes) -> bool:
    body = line.rstrip(b"\r\n")
    return body != body.rstrip(b" \t")


def _outside(
    original: bytes,
    opcodes: Sequence[tuple[str, int, int, int, int]],
    spans: Sequence[tuple[int, int]],
) -> int | None:
    """The first 1-based line of `original` changed outside every span, if any."""
    starts = [0]
    for text in original.splitlines(keepends=True):
        starts.append(starts[-1] + len(text))
    covered: set[int] = set()
    for start, end in spans:
        first = _line_of(starts, start)
        last = _line_of(starts, max(start, end - 1))
        covered.update(range(first, last + 1))
    for tag, i1, i2, _j1, _j2 in opcodes:
        if tag == "equal":
            continue
        if i2 == i1:
            # an insertion sits between lines: the line before it, or the one after, holds a match
            if i1 - 1 not in covered and i1 not in covered:
                return i1 + 1
            continue
        for line in range(i1, i2):
            if line not in covered:
                return line + 1
    return None


def _line_of(starts: list[int], offset: int) -> int:
    """0-based line holding byte `offset` (`starts`: each line's first byte, then the end)."""
    return max(0, bisect.bisect_right(starts, offset) - 1)
