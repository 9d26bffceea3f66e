"""`dependency_present`: the dependencies a project declares, read from its real manifests.

pom.xml, pyproject.toml, package.json, go.mod and Cargo.toml at the workspace root;
names are compared as each ecosystem spells them (Python names case- and
separator-insensitively, Maven as `groupId:artifactId` or the bare `artifactId`).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from xml.etree import ElementTree

__all__ = ["MANIFESTS", "declared_dependencies", "has_dependency"]

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


def _pom(text: str) -> set[str]:
    names: set[str] = set()
    root = ElementTree.fromstring(text)
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "dependency":
            continue
        fields = {child.tag.rsplit("}", 1)[-1]: (child.text or "").strip() for child in element}
        artifact = fields.get("artifactId", "")
        if artifact:
            names.add(artifact)
            if fields.get("groupId"):
                names.add(f"{fields['groupId']}:{artifact}")
    return names


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
