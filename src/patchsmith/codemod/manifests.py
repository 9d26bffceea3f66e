"""`dependency_present`: the dependencies a project declares, read from its real manifests.

pom.xml, pyproject.toml, package.json, go.mod and Cargo.toml at the workspace root;
names are compared as each ecosystem spells them (Python names case- and
separator-insensitively, Maven as `groupId:artifactId` or the bare `artifactId`: the
project's and its profiles' `<dependencies>` and `<dependencyManagement>`, never a
plugin's own dependencies; `${property}` values resolved from `<properties>`).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from xml.etree import ElementTree

__all__ = ["MANIFESTS", "declared_dependencies", "has_dependency", "maven_versions"]

MANIFESTS = ("pom.xml", "pyproject.toml", "package.json", "go.mod", "Cargo.toml")


def _python_name(requirement: str) -> str:
    name = []
    for char in requirement.strip():
        if char.isalnum() or char in "._-":
            name.append(char)
        else:
            break
    return "".join(name).lower().replace("_", "-").replace(".", "-")


def _keys(table: object) -> Iterable[str]:
    return [str(k) for k in table] if isinstance(table, Mapping) else []


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: ElementTree.Element, name: str) -> ElementTree.Element | None:
    return next((c for c in element if _local(c.tag) == name), None)


def _text(element: ElementTree.Element | None, name: str) -> str:
    found = None if element is None else _child(element, name)
    return (found.text or "").strip() if found is not None else ""


def _pom_dependencies(root: ElementTree.Element) -> list[tuple[ElementTree.Element, bool]]:
    """The project's `<dependency>` elements, each with whether it sits in
    `<dependencyManagement>`: the project's own and its profiles', never a plugin's."""
    found: list[tuple[ElementTree.Element, bool]] = []
    holders = [root]
    profiles = _child(root, "profiles")
    if profiles is not None:
        holders.extend(p for p in profiles if _local(p.tag) == "profile")
    for holder in holders:
        for managed, parent in ((False, holder), (True, _child(holder, "dependencyManagement"))):
            listing = None if parent is None else _child(parent, "dependencies")
            if listing is not None:
                found.extend((d, managed) for d in listing if _local(d.tag) == "dependency")
    return found


def _pom(text: str) -> set[str]:
    """`artifactId` and `groupId:artifactId` of every dependency the POM declares or manages."""
    names: set[str] = set()
    root = ElementTree.fromstring(text)
    properties = _pom_properties(root)
    for element, _managed in _pom_dependencies(root):
        artifact = _resolve(_text(element, "artifactId"), properties)
        if artifact:
            names.add(artifact)
            group = _resolve(_text(element, "groupId"), properties)
            if group:
                names.add(f"{group}:{artifact}")
    return names


def _pom_properties(root: ElementTree.Element) -> dict[str, str]:
    """`<properties>` and the `project.*` values a version may name (`${project.version}`)."""
    values: dict[str, str] = {}
    parent = _child(root, "parent")
    for key in ("groupId", "version"):
        if _text(parent, key):
            values[f"project.parent.{key}"] = _text(parent, key)
        own = _text(root, key) or _text(parent, key)
        if own:
            values[f"project.{key}"] = values[f"pom.{key}"] = own
    if _text(root, "artifactId"):
        values["project.artifactId"] = _text(root, "artifactId")
    listing = _child(root, "properties")
    if listing is not None:
        values.update({_local(p.tag): (p.text or "").strip() for p in listing})
    return values


def _resolve(value: str, properties: dict[str, str]) -> str:
    """`${name}` references replaced by their values (nested ones too, up to a bound)."""
    for _ in range(10):
        start = value.find("${")
        end = value.find("}", start)
        if start < 0 or end < 0:
            break
        name = value[start + 2 : end]
        if name not in properties:
            break  # left as written: it never equals a plain version
        value = value[:start] + properties[name] + value[end + 1 :]
    return value


def maven_versions(text: str, wanted: str) -> set[str | None]:
    """The versions pom.xml `text` gives `wanted` (`group:artifact` or `artifact`), `${...}`
    resolved; a dependency without one takes its `<dependencyManagement>` version (`None`
    when neither gives one)."""
    root = ElementTree.fromstring(text)
    properties = _pom_properties(root)
    group, _, artifact = wanted.rpartition(":")
    entries = []
    for element, managed in _pom_dependencies(root):
        name = (
            _resolve(_text(element, "groupId"), properties),
            _resolve(_text(element, "artifactId"), properties),
        )
        version = _resolve(_text(element, "version"), properties) or None
        entries.append((name, version, managed))
    managed_versions = {name: v for name, v, managed in entries if managed and v}
    found: set[str | None] = set()
    for name, version, _managed in entries:
        if name[1] == artifact and (not group or name[0] == group):
            found.add(version or managed_versions.get(name))
    return found


def _pyproject(text: str) -> set[str]:
    data = tomllib.loads(text)
    project = data.get("project", {})
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements.extend(extra)
    for group in data.get("dependency-groups", {}).values():
        requirements.extend(r for r in group if isinstance(r, str))
    names = {_python_name(r) for r in requirements if isinstance(r, str)}
    poetry = data.get("tool", {}).get("poetry", {})
    names.update(_python_name(n) for n in _keys(poetry.get("dependencies")))
    names.discard("")
    return names


def _package_json(text: str) -> set[str]:
    data = json.loads(text)
    names: set[str] = set()
    for table in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        names.update(_keys(data.get(table)))
    return names


def _go_mod(text: str) -> set[str]:
    names: set[str] = set()
    in_block = False
    for raw in text.splitlines():
        words = raw.split("//", 1)[0].split()
        if not words:
            continue
        if in_block:
            if words[0] == ")":
                in_block = False
            else:
                names.add(words[0])
        elif words[0] == "require":
            if words[1:2] == ["("]:
                in_block = True
            elif len(words) >= 2:
                names.add(words[1])
    return names


def _cargo(text: str) -> set[str]:
    data = tomllib.loads(text)
    names: set[str] = set()
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        names.update(_keys(data.get(table)))
    names.update(_keys(data.get("workspace", {}).get("dependencies")))
    return names


_READERS = {
    "pom.xml": _pom,
    "pyproject.toml": _pyproject,
    "package.json": _package_json,
    "go.mod": _go_mod,
    "Cargo.toml": _cargo,
}


def declared_dependencies(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """Each manifest found at `root` with the names it declares, and the manifests unreadable."""
    found: dict[str, set[str]] = {}
    broken: list[str] = []
    for name in MANIFESTS:
        path = root / name
        if not path.is_file():
            continue
        try:
            found[name] = _READERS[name](path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, ElementTree.ParseError, AttributeError):
            broken.append(name)
    return found, broken


def has_dependency(manifests: dict[str, set[str]], wanted: str) -> str | None:
    """The manifest that declares `wanted`, else `None`."""
    python = _python_name(wanted)
    for manifest, names in manifests.items():
        if wanted in names or (manifest == "pyproject.toml" and python in names):
            return manifest
    return None
