"""Java: method calls replaced where the receiver's type is resolved through the file's imports.

Tree-sitter (the Java grammar patchsmith already ships for its syntax guard) gives the
package, the imports and every `method_invocation` with its receiver. A static call is
rewritten only when its receiver provably names the class: its fully qualified name,
or its simple name imported explicitly, through a wildcard import of its package, or
from the same package, and not shadowed by a type the file declares or imports from
elsewhere. A call on a variable (a local, a parameter, a for-each variable, a field,
`this.field`) is typed by its declaration in the enclosing scopes, the innermost
first; when that declared type names the class, the method is renamed in place if
`to` keeps the class, and the call is reported and left alone if `to` names another
class (the variable's type would have to change with it). `var` and anything
undeclared in the file count as unknown and are left alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from patchsmith.codemod.backend_table import fixes_imports, runs
from patchsmith.codemod.backends.trees import parse, walk
from patchsmith.codemod.edits import Edit, EditGroup, apply_groups
from patchsmith.codemod.matches import SeenMatch
from patchsmith.codemod.recipe import Imports, Language, MethodInvocationReplace, split_method
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import PatchFailure

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["JavaFile", "fix_imports", "replace_invocations"]


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


@dataclass(frozen=True)
class JavaFile:
    """What a Java file says about the names it can use."""

    package: str
    imports: dict[str, Node]
    """Explicit single-type imports, fully qualified name to its declaration."""
    wildcards: frozenset[str]
    declared: frozenset[str]
    """Names of the types the file declares itself."""

    @classmethod
    def read(cls, root: Node) -> JavaFile:
        package = ""
        imports: dict[str, Node] = {}
        wildcards: set[str] = set()
        declared: set[str] = set()
        for child in root.children:
            if child.type == "package_declaration":
                name = next(
                    (c for c in child.children if c.type in ("scoped_identifier", "identifier")),
                    None,
                )
                package = _text(name) if name is not None else ""
            elif child.type == "import_declaration":
                kinds = [c.type for c in child.children]
                name = next(
                    (c for c in child.children if c.type in ("scoped_identifier", "identifier")),
                    None,
                )
                if name is None or "static" in kinds:
                    continue
                if "asterisk" in kinds:
                    wildcards.add(_text(name))
                else:
                    imports[_text(name)] = child
        for node in walk(root):
            if node.type in (
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
            ):
                name = node.child_by_field_name("name")
                if name is not None:
                    declared.add(_text(name))
        return cls(package, imports, frozenset(wildcards), frozenset(declared))

    def names(self, qualified: str, receiver: str) -> bool:
        """Whether `receiver` (as written) denotes the class `qualified` in this file."""
        if receiver == qualified:
            return True
        package, _, simple = qualified.rpartition(".")
        if receiver != simple or simple in self.declared:
            return False
        if qualified in self.imports:
            return True
        if any(name.rpartition(".")[2] == simple for name in self.imports):
            return False  # another class of that name is imported
        return self.package == package or package in self.wildcards


@runs(MethodInvocationReplace)
def replace_invocations(
    op: MethodInvocationReplace, work: WorkSet, matches: Counter[str], seen: list[SeenMatch]
) -> PatchFailure | None:
    """Rewrite `Old.method(...)` calls to `New.method2(...)` where the receiver is `Old`."""
    old_class, old_method = split_method(op.from_)
    new_class, new_method = split_method(op.to)
    new_simple = new_class.rpartition(".")[2]
    needle = old_method.encode("utf-8")
    for path in work.paths:
        if not path.endswith(".java"):
            continue
        data = work.data(path)
        if data is None or needle not in data:
            continue  # a cheap byte test first: most files never mention the method
        root = parse("java", data).root_node
        info = JavaFile.read(root)
        groups: list[EditGroup] = []
        for node in walk(root):
            if node.type != "method_invocation":
                continue
            name = node.child_by_field_name("name")
            if name is None or _text(name) != old_method:
                continue
            line = node.start_point[0] + 1
            receiver = node.child_by_field_name("object")
            if receiver is None:
                seen.append(SeenMatch(path, line, _text(node), "a call without a receiver"))
                continue
            written = _text(receiver)
            static = receiver.type in ("identifier", "field_access") and info.names(
                old_class, written
            )
            if not static:
                declared = _declared_type(receiver)
                if declared is None or not info.names(old_class, declared):
                    what = f"declared {declared}" if declared else "of no type declared here"
                    reason = (
                        f"receiver {written!r} ({what}) is not {old_class} "
                        "through this file's imports"
                    )
                    seen.append(SeenMatch(path, line, _text(node), reason))
                    continue
                if new_class != old_class:
                    reason = (
                        f"receiver {written!r} is an instance of {old_class}; `to` names "
                        f"{new_class}, so the variable's type would have to change too"
                    )
                    seen.append(SeenMatch(path, line, _text(node), reason))
                    continue
                renamed = Edit(name.start_byte, name.end_byte, new_method.encode("utf-8"))
                groups.append(EditGroup((renamed,), line))
                continue
            target = new_class if written == old_class else new_simple
            groups.append(
                EditGroup(
                    (
                        Edit(receiver.start_byte, receiver.end_byte, target.encode("utf-8")),
                        Edit(name.start_byte, name.end_byte, new_method.encode("utf-8")),
                    ),
                    line,
                )
            )
        if groups:
            new, _ = apply_groups(data, groups)  # calls do not overlap their own receivers
            work.set(path, new)
            matches[path] += len(groups)
    return None


_SCOPES_WITH_PARAMETERS = ("method_declaration", "constructor_declaration", "lambda_expression")
_DECLARATIONS = ("local_variable_declaration", "field_declaration")


def _declared_type(receiver: Node) -> str | None:
    """The type a variable receiver was declared with (as written, generics dropped).

    `None` for anything but a plain name or `this.name`, for `var`, and for a name the
    file does not declare. Locals count only when declared before the call.
    """
    if receiver.type == "identifier":
        name, fields_only = _text(receiver), False
    elif receiver.type == "field_access":
        obj = receiver.child_by_field_name("object")
        field = receiver.child_by_field_name("field")
        if obj is None or field is None or obj.type != "this":
            return None
        name, fields_only = _text(field), True
    else:
        return None
    node: Node | None = receiver
    while node is not None:
        parent = node.parent
        if parent is None:
            return None
        found = _declared_in(parent, name, receiver.start_byte, fields_only=fields_only)
        if found is not None:
            type_name = _type_name(found)
            return None if type_name == "var" else type_name
        node = parent
    return None


def _declared_in(scope: Node, name: str, before: int, *, fields_only: bool) -> Node | None:
    """The type node of `name`'s declaration directly in `scope`, if there is one."""
    if not fields_only:
        if scope.type == "enhanced_for_statement":
            declared = scope.child_by_field_name("name")
            if declared is not None and _text(declared) == name:
                return scope.child_by_field_name("type")
        if scope.type in _SCOPES_WITH_PARAMETERS:
            parameters = scope.child_by_field_name("parameters")
            for parameter in parameters.children if parameters is not None else ():
                declared = parameter.child_by_field_name("name")
                if declared is not None and _text(declared) == name:
                    return parameter.child_by_field_name("type")
    is_class = scope.type in ("class_body", "enum_body")
    if fields_only and not is_class:
        return None
    for child in scope.children:
        if child.type not in _DECLARATIONS or (not is_class and child.start_byte > before):
            continue
        for declarator in child.children_by_field_name("declarator"):
            declared = declarator.child_by_field_name("name")
            if declared is not None and _text(declared) == name:
                return child.child_by_field_name("type")
    return None


def _type_name(node: Node) -> str:
    if node.type == "generic_type" and node.children:
        return _text(node.children[0])
    return _text(node)


def _used_names(root: Node) -> set[str]:
    """Identifiers used outside the package and import declarations."""
    used: set[str] = set()
    for child in root.children:
        if child.type in ("package_declaration", "import_declaration"):
            continue
        for node in walk(child):
            if node.type in ("identifier", "type_identifier"):
                used.add(_text(node))
    return used


def _line_end(data: bytes, offset: int) -> int:
    newline = data.find(b"\n", offset)
    return len(data) if newline < 0 else newline + 1


@fixes_imports(Language.JAVA)
def fix_imports(imports: Imports, work: WorkSet, paths: Iterable[str]) -> PatchFailure | None:
    """Add the imports a changed file now uses; remove the listed ones it no longer uses."""
    for path in paths:
        if not path.endswith(".java"):
            continue
        data = work.data(path)
        if data is None:
            continue
        root = parse("java", data).root_node
        info = JavaFile.read(root)
        used = _used_names(root)
        edits: list[EditGroup] = []
        for qualified in imports.remove:
            node = info.imports.get(qualified)
            if node is None or qualified.rpartition(".")[2] in used:
                continue
            edits.append(
                EditGroup((Edit(node.start_byte, _line_end(data, node.end_byte), b""),), 0)
            )
        anchor = _import_anchor(root, data)
        for qualified in imports.add:
            package, _, simple = qualified.rpartition(".")
            if simple not in used or qualified in info.imports or package == info.package:
                continue
            if package in info.wildcards:
                continue
            if any(name.rpartition(".")[2] == simple for name in info.imports):
                continue  # the name is taken by another import: leave it to the compiler
            line = f"import {qualified};\n".encode()
            prefix = b"\n" if anchor.blank_before else b""
            edits.append(EditGroup((Edit(anchor.offset, anchor.offset, prefix + line),), 0))
        if edits:
            new, _ = apply_groups(data, edits)
            work.set(path, new)
    return None


@dataclass(frozen=True)
class _Anchor:
    offset: int
    blank_before: bool


def _import_anchor(root: Node, data: bytes) -> _Anchor:
    """Where a new import goes: after the last import, else after the package line."""
    last_import = None
    package = None
    for child in root.children:
        if child.type == "import_declaration":
            last_import = child
        elif child.type == "package_declaration":
            package = child
    if last_import is not None:
        return _Anchor(_line_end(data, last_import.end_byte), False)
    if package is not None:
        return _Anchor(_line_end(data, package.end_byte), True)
    return _Anchor(0, False)
