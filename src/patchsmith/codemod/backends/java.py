"""Java: calls, method references and static imports of one method, rewritten by its type.

javac (through `attribution.py`) resolves every call, method reference and static import
of the method's name in the files that mention it, in one JVM: only the sites bound to
the pattern's declaring type and parameter types are rewritten (`codemod/methods.py`),
so an overload, a same-named method of another class or a lookalike import is left and
reported. The new class is written by its simple name where that name means it (or
means nothing yet: then it is imported), by its qualified name where the simple name
means another type, and qualified as the call was. A static import of the method is
followed: the calls are renamed and the new method imported statically, or qualified
where its simple name is taken; the old imports go once nothing uses them.

A file javac cannot attribute (a dependency missing, no JDK) is matched by syntax, as
before, and listed in the report: tree-sitter gives the package, the imports and every
`method_invocation` with its receiver. A static call is rewritten only when its receiver
provably names the class through the file's imports, and the argument count fits the
pattern; a call on a variable is typed by its declaration in the enclosing scopes, the
innermost first (renamed when `to` keeps the class, reported when it does not); `var`
and anything undeclared in the file count as unknown and are left alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from patchsmith.codemod.backend_table import fixes_imports, runs
from patchsmith.codemod.backends.attribution import FileAttribution, Site, attribute
from patchsmith.codemod.backends.trees import parse, walk
from patchsmith.codemod.edits import Edit, EditGroup, apply_groups
from patchsmith.codemod.files import language_files
from patchsmith.codemod.matches import SeenMatch, SyntaxFallback
from patchsmith.codemod.methods import MethodPattern, parse_method_pattern
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
    op: MethodInvocationReplace,
    work: WorkSet,
    matches: Counter[str],
    seen: list[SeenMatch],
    by_syntax: list[SyntaxFallback],
    taken: dict[str, set[str]],
    import_names: Sequence[str] = (),
) -> PatchFailure | None:
    """Rewrite the calls, method references and static imports of `op.from_` to `op.to`.

    Every file that mentions the method is attributed by javac in one run; a file javac
    cannot attribute (or every file, without a JDK) is matched by syntax instead and
    listed in `by_syntax` with the reason. `taken` receives, per attributed file, the
    names of `import_names` (and `to`'s class) whose simple name means another type
    there: an import of them must not be added.
    """
    pattern = parse_method_pattern(op.from_)
    target = _Target(*split_method(op.to))
    needle = pattern.name.encode("utf-8")
    candidates: dict[str, bytes] = {}
    for path in work.paths:
        if not path.endswith(".java"):
            continue
        data = work.data(path)
        if data is not None and needle in data:  # a cheap byte test: most files never mention it
            candidates[path] = data
    if not candidates:
        return None
    texts = dict(candidates)
    texts.update({p: d for p, d in work.changed.items() if p.endswith(".java")})
    types = list(dict.fromkeys((target.qualified, *import_names)))
    sourcepath, classpath = _source_roots(work.sources)
    answer = attribute(
        texts,
        sourcepath=sourcepath,
        classpath=classpath,
        methods=[pattern.name],
        types=types,
        members=[target.member],
    )
    for path, data in candidates.items():
        typed = None if isinstance(answer, str) else answer.get(path)
        reason = _untyped(answer, typed, pattern)
        if reason is not None or typed is None:
            by_syntax.append(SyntaxFallback(path, reason or "javac did not read it"))
            _by_syntax(pattern, target, path, data, work, matches, seen)
            continue
        taken.setdefault(path, set()).update(
            name for name, bound in typed.bindings.items() if bound is not None and bound != name
        )
        _by_types(pattern, target, path, data, typed, work, matches, seen)
    return None


_CALLS = ("invocation", "method_ref")


@dataclass(frozen=True)
class _Target:
    """The class and method `to` names."""

    qualified: str
    method: str

    @property
    def simple(self) -> str:
        return self.qualified.rpartition(".")[2]

    @property
    def member(self) -> str:
        return f"{self.qualified}#{self.method}"


def _untyped(
    answer: dict[str, FileAttribution] | str, typed: FileAttribution | None, pattern: MethodPattern
) -> str | None:
    """Why a file's sites cannot be trusted to javac's answer (`None`: they can)."""
    if isinstance(answer, str):
        return answer
    if typed is None:
        return "javac did not read it"
    if typed.errors:
        more = f" (and {len(typed.errors) - 1} more)" if len(typed.errors) > 1 else ""
        return f"javac cannot attribute it: {typed.errors[0]}{more}"
    for site in typed.sites:
        if site.kind in _CALLS and not site.resolved:
            return f"javac could not resolve the {pattern.name} on line {site.line}"
    return None


def _type_written(site: Site, target: _Target) -> tuple[str, bool]:
    """How to write `to`'s class at `site`, and whether that needs an import.

    The simple name where it already denotes the class, or denotes nothing yet (then it
    is imported); the qualified name where it would denote another type.
    """
    bound = site.bindings.get(target.qualified)
    if bound == target.qualified:
        return target.simple, False
    if bound is None:
        return target.simple, True
    return target.qualified, False


def _by_types(
    pattern: MethodPattern,
    target: _Target,
    path: str,
    data: bytes,
    typed: FileAttribution,
    work: WorkSet,
    matches: Counter[str],
    seen: list[SeenMatch],
) -> None:
    """Rewrite the sites javac bound to `pattern` in one attributed file, imports included."""
    same_class = target.qualified == pattern.declaring
    method = target.method.encode("utf-8")
    groups: list[EditGroup] = []
    imports: set[str] = set()
    static_imports: set[str] = set()
    for site in typed.sites:
        if site.kind not in _CALLS:
            continue  # imports are tidied from the new text, once the calls are rewritten
        text = data[site.start : site.end].decode("utf-8")
        bound = f"{site.declaring}.{site.method}({', '.join(site.params)})"
        if not pattern.matches(site.declaring or "", site.method or "", site.params):
            seen.append(SeenMatch(path, site.line, text, f"javac binds it to {bound}"))
            continue
        rename = Edit(site.name_start, site.name_end, method)
        receiver = site.receiver
        if receiver is None:  # `generate()`: a static import, or a member of this class
            binding = site.members.get(target.member, "other")
            if binding == "to" or (same_class and not site.static):
                groups.append(EditGroup((rename,), site.line))
            elif binding == "none" and site.static:
                groups.append(EditGroup((rename,), site.line))
                if not (same_class and site.unqualified == "member"):
                    static_imports.add(f"{target.qualified}.{target.method}")
            elif site.static:  # `nextId` means something else here: qualify it
                written, needs = _type_written(site, target)
                if needs:
                    imports.add(target.qualified)
                qualified = f"{written}.{target.method}".encode()
                qualify = Edit(site.name_start, site.name_end, qualified)
                groups.append(EditGroup((qualify,), site.line))
            else:
                reason = f"an inherited instance method; `to` names {target.qualified}"
                seen.append(SeenMatch(path, site.line, text, reason))
            continue
        if receiver.form == "expression" or same_class:
            if same_class:
                groups.append(EditGroup((rename,), site.line))
                continue
            reason = (
                f"receiver {data[receiver.start : receiver.end].decode('utf-8')!r} is an "
                f"expression of type {pattern.declaring}; `to` names {target.qualified}, "
                "so its type would have to change too"
            )
            seen.append(SeenMatch(path, site.line, text, reason))
            continue
        if receiver.form == "qualified":
            written, needs = target.qualified, False
        else:
            written, needs = _type_written(site, target)
        if needs:
            imports.add(target.qualified)
        groups.append(
            EditGroup(
                (Edit(receiver.start, receiver.end, written.encode("utf-8")), rename), site.line
            )
        )
    if not groups:
        return
    # A site inside another's rewritten span waits: the re-run finds it and refuses the
    # recipe as not idempotent rather than lose it silently.
    new, deferred = apply_groups(data, groups)
    new = _tidy_imports(new, pattern, imports, static_imports)
    work.set(path, new)
    matches[path] += len(groups) - len(deferred)


def _tidy_imports(
    data: bytes, pattern: MethodPattern, imports: set[str], static_imports: set[str]
) -> bytes:
    """Add the imports the rewritten sites need; drop the old class's and method's imports
    once nothing in the file uses their simple names."""
    root = parse("java", data).root_node
    info = JavaFile.read(root)
    free = _used_names(root)
    calls = _unqualified_calls(root)
    edits: list[EditGroup] = []
    old_simple = pattern.declaring.rpartition(".")[2]
    node = info.imports.get(pattern.declaring)
    if node is not None and old_simple not in free:
        edits.append(EditGroup((Edit(node.start_byte, _line_end(data, node.end_byte), b""),), 0))
    for child in root.children:
        if child.type != "import_declaration" or "static" not in [c.type for c in child.children]:
            continue
        name = _import_name(child)
        unused = pattern.name not in calls and pattern.name not in free  # a field too
        if name == f"{pattern.declaring}.{pattern.name}" and unused:
            edits.append(
                EditGroup((Edit(child.start_byte, _line_end(data, child.end_byte), b""),), 0)
            )
    present = {_import_name(c) for c in root.children if c.type == "import_declaration"}
    anchor = _import_anchor(root, data)
    lines = [f"import {q};\n" for q in sorted(imports) if q not in present]
    lines += [
        f"import static {q};\n"
        for q in sorted(static_imports)
        if q not in present and f"{q.rpartition('.')[0]}.*" not in present
    ]
    if lines:
        prefix = b"\n" if anchor.blank_before else b""
        added = prefix + "".join(lines).encode("utf-8")
        edits.append(EditGroup((Edit(anchor.offset, anchor.offset, added),), 0))
    if not edits:
        return data
    new, _ = apply_groups(data, edits)
    return new


def _import_name(node: Node) -> str:
    """`a.b.C`, `a.b.*` or `a.b.C.m` for an import declaration (whitespace dropped)."""
    parts = [
        _text(c) for c in node.children if c.type in ("scoped_identifier", "identifier", "asterisk")
    ]
    return "".join(parts[0].split()) + (".*" if len(parts) > 1 else "") if parts else ""


def _unqualified_calls(root: Node) -> set[str]:
    """Names of the methods called without a receiver (`generate()`) outside the imports."""
    names: set[str] = set()
    for node in walk(root):
        if node.type == "method_invocation" and node.child_by_field_name("object") is None:
            name = node.child_by_field_name("name")
            if name is not None:
                names.add(_text(name))
    return names


def _source_roots(base: Path) -> tuple[list[str], list[str]]:
    """The source folders of the Java files under `base` (each file's path minus its
    package's folders), and the jars there: javac's source path and class path."""
    files = language_files(base, (".java", ".jar"))
    roots: set[str] = set()
    folders: set[str] = set()
    jars: list[str] = []
    for rel in files:
        if rel.endswith(".jar"):
            jars.append(str(base / rel))
            continue
        folder = rel.rpartition("/")[0]
        if folder in folders:
            continue
        folders.add(folder)
        try:
            with open(base / rel, "rb") as handle:
                head = handle.read(8192)
        except OSError:
            continue
        package = JavaFile.read(parse("java", head).root_node).package.replace(".", "/")
        if not package or folder == package:
            roots.add(str(base / folder) if not package else str(base))
        elif folder.endswith("/" + package):
            roots.add(str(base / folder[: -len(package) - 1]))
    return sorted(roots), jars


def _arguments(node: Node) -> int:
    arguments = node.child_by_field_name("arguments")
    if arguments is None:
        return 0
    return len([c for c in arguments.named_children if not c.type.endswith("comment")])


def _by_syntax(
    pattern: MethodPattern,
    target: _Target,
    path: str,
    data: bytes,
    work: WorkSet,
    matches: Counter[str],
    seen: list[SeenMatch],
) -> None:
    """Rewrite `Old.method(...)` calls to `New.method2(...)` where the receiver is `Old`
    through the file's imports and the argument count fits (no type is known)."""
    old_class, old_method = pattern.declaring, pattern.name
    new_class, new_method = target.qualified, target.method
    new_simple = target.simple
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
        if not pattern.fits_arity(_arguments(node)):
            reason = f"{_arguments(node)} argument(s) do not fit {pattern}"
            seen.append(SeenMatch(path, line, _text(node), reason))
            continue
        receiver = node.child_by_field_name("object")
        if receiver is None:
            seen.append(SeenMatch(path, line, _text(node), "a call without a receiver"))
            continue
        written = _text(receiver)
        static = receiver.type in ("identifier", "field_access") and info.names(old_class, written)
        if not static:
            declared = _declared_type(receiver)
            if declared is None or not info.names(old_class, declared):
                what = f"declared {declared}" if declared else "of no type declared here"
                reason = (
                    f"receiver {written!r} ({what}) is not {old_class} through this file's imports"
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
        simple_ok = written != old_class and _simple_name_free(info, new_class, path, work.sources)
        replacement = new_simple if simple_ok else new_class
        groups.append(
            EditGroup(
                (
                    Edit(receiver.start_byte, receiver.end_byte, replacement.encode("utf-8")),
                    Edit(name.start_byte, name.end_byte, new_method.encode("utf-8")),
                ),
                line,
            )
        )
    if groups:
        new, _ = apply_groups(data, groups)  # calls do not overlap their own receivers
        work.set(path, new)
        matches[path] += len(groups)


_SCOPES_WITH_PARAMETERS = ("method_declaration", "constructor_declaration", "lambda_expression")
_DECLARATIONS = ("local_variable_declaration", "field_declaration")


def _simple_name_free(info: JavaFile, qualified: str, path: str, sources: Path) -> bool:
    """Whether the simple name of `qualified` can be written in this file without types:
    it already names the class, or provably names nothing else (no type of that name
    declared or imported, none beside the file in its folder, no wildcard import of another
    package that might bring one)."""
    package, _, simple = qualified.rpartition(".")
    if info.names(qualified, simple):
        return True
    if simple in info.declared or any(n.rpartition(".")[2] == simple for n in info.imports):
        return False
    if any(w != package for w in info.wildcards):
        return False
    folder = path.rpartition("/")[0]
    return not (sources / folder / f"{simple}.java").exists()


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
    """Names used free outside the package and import declarations: the first part of a
    dotted name counts, the parts after a dot do not (`com.acme.ids.IdGenerator.nextId()`
    uses `com`, not `IdGenerator`), nor does a called method's own name."""
    used: set[str] = set()
    for child in root.children:
        if child.type in ("package_declaration", "import_declaration"):
            continue
        for node in walk(child):
            if node.type in ("identifier", "type_identifier") and _is_free(node):
                used.add(_text(node))
    return used


def _is_free(node: Node) -> bool:
    parent = node.parent
    if parent is None:
        return True
    kind = parent.type
    if kind == "field_access":
        return parent.child_by_field_name("field") != node
    if kind == "scoped_identifier":
        return parent.child_by_field_name("name") != node
    if kind == "method_invocation":
        return parent.child_by_field_name("name") != node
    if kind in ("scoped_type_identifier", "method_reference"):
        return parent.children[0] == node
    return True


def _line_end(data: bytes, offset: int) -> int:
    newline = data.find(b"\n", offset)
    return len(data) if newline < 0 else newline + 1


@fixes_imports(Language.JAVA)
def fix_imports(
    imports: Imports,
    work: WorkSet,
    paths: Iterable[str],
    taken: Mapping[str, set[str]] | None = None,
) -> PatchFailure | None:
    """Add the imports a changed file now uses; remove the listed ones it no longer uses.

    A class is not imported where its simple name meant something before the change (a
    class of the same package, one a wildcard import brings): importing it would change
    what the file's other uses of that name mean. `taken` names, per file, the classes
    javac found to be in that case.
    """
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
        original_used: set[str] | None = None
        for qualified in imports.add:
            package, _, simple = qualified.rpartition(".")
            if simple not in used or qualified in info.imports or package == info.package:
                continue
            if package in info.wildcards:
                continue
            if any(name.rpartition(".")[2] == simple for name in info.imports):
                continue  # the name is taken by another import: leave it to the compiler
            if taken is not None and qualified in taken.get(path, ()):
                continue  # the name means another type here (same package, a wildcard)
            if original_used is None:
                original_used = _used_names(parse("java", work.original(path)).root_node)
            if simple in original_used:
                continue  # used before the change, so it means something already: keep that
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
