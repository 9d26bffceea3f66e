"""Dependency guard: a manifest's dependencies change only when the policy or proposal allows it.

Each manifest is read into a map from dependency (section and normalised name) to
its version requirement, before and after the change; the differences are the
dependencies added, removed and re-versioned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import StrEnum
from fnmatch import fnmatchcase
from posixpath import basename
from typing import NamedTuple

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.policy import DependencyMode
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import text_of

__all__ = [
    "DependencyChange",
    "DependencyChangeKind",
    "DependencyGuard",
    "dependency_changes",
    "is_manifest",
    "read_dependencies",
]

Dependencies = dict[tuple[str, str], str]
"""(section, name) → version requirement ("" when unpinned)."""


class DependencyChangeKind(StrEnum):
    """How one dependency changed."""

    ADDED = "added"
    REMOVED = "removed"
    REVERSIONED = "re-versioned"


class DependencyChange(NamedTuple):
    """One dependency added, removed or re-versioned in one manifest."""

    path: str
    section: str
    name: str
    kind: DependencyChangeKind
    old: str | None
    new: str | None

    def describe(self) -> str:
        """One line for a failure message, e.g. `requests added (>=2) in dependencies`."""
        if self.kind is DependencyChangeKind.REVERSIONED:
            detail = f"{self.old or '(any)'} -> {self.new or '(any)'}"
        else:
            detail = (self.new if self.kind is DependencyChangeKind.ADDED else self.old) or "(any)"
        return f"{self.name} {self.kind.value} ({detail}) in {self.section}"


def is_manifest(path: str) -> bool:
    """True when `path` names a dependency manifest this guard reads."""
    return _reader(path) is not None


def read_dependencies(path: str, text: str) -> Dependencies | None:
    """The dependencies declared in manifest `path`, `None` when it cannot be parsed."""
    reader = _reader(path)
    if reader is None:
        return None
    try:
        return reader(text)
    except (ValueError, TypeError, AttributeError):
        # a manifest that does not parse is the syntax guard's business
        return None


def dependency_changes(change: FileChange) -> list[DependencyChange]:
    """The dependencies `change` adds, removes or re-versions (empty for other files)."""
    if not is_manifest(change.path) and not (change.old_path and is_manifest(change.old_path)):
        return []
    old_text = text_of(change.old_content, change.old_text) if change.old_path else ""
    new_content = change.new_content
    new_text = text_of(new_content, change.new_text) if new_content is not None else ""
    old = read_dependencies(change.old_path or change.path, old_text or "") or {}
    new = read_dependencies(change.path, new_text or "") or {}
    found: list[DependencyChange] = []
    for key in sorted(old.keys() | new.keys()):
        section, name = key
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if before is None:
            kind = DependencyChangeKind.ADDED
        elif after is None:
            kind = DependencyChangeKind.REMOVED
        else:
            kind = DependencyChangeKind.REVERSIONED
        found.append(DependencyChange(change.path, section, name, kind, before, after))
    return found


def _reader(path: str) -> Callable[[str], Dependencies] | None:
    name = basename(path)
    if name == "pyproject.toml":
        return _pyproject
    if name == "package.json":
        return _package_json
    if name == "Cargo.toml":
        return _cargo
    if name == "go.mod":
        return _go_mod
    if fnmatchcase(name, "requirements*.txt") or fnmatchcase(name, "requirements*.in"):
        return _requirements
    return None


def _canonical_name(name: str) -> str:
    """The PEP 503 normalised name (packaging loads only when a manifest changes)."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def _pep508(section: str, entries: object, found: Dependencies) -> None:
    if not isinstance(entries, list):
        return
    from packaging.requirements import InvalidRequirement, Requirement

    for entry in entries:
        if not isinstance(entry, str):
            continue  # dependency-group includes are tables
        try:
            requirement = Requirement(entry)
        except InvalidRequirement:
            found[(section, entry.strip())] = ""
            continue
        spec = str(requirement.specifier)
        if requirement.url:
            spec = f"@ {requirement.url}"
        if requirement.extras:
            spec = f"[{','.join(sorted(requirement.extras))}]{spec}"
        if requirement.marker is not None:
            spec = f"{spec}; {requirement.marker}"
        found[(section, _canonical_name(requirement.name))] = spec


def _pyproject(text: str) -> Dependencies:
    import tomllib  # only a changed manifest is read; most changes touch none

    data = tomllib.loads(text)
    found: Dependencies = {}
    project = _table(data, "project")
    _pep508("project.dependencies", project.get("dependencies"), found)
    for extra, entries in _table(project, "optional-dependencies").items():
        _pep508(f"project.optional-dependencies.{extra}", entries, found)
    for group, entries in _table(data, "dependency-groups").items():
        _pep508(f"dependency-groups.{group}", entries, found)
    poetry = _table(_table(data, "tool"), "poetry")
    for section in ("dependencies", "dev-dependencies"):
        _named(f"tool.poetry.{section}", _table(poetry, section), found, _canonical_name)
    for group, table in _table(poetry, "group").items():
        if isinstance(table, Mapping):
            deps = _table(table, "dependencies")
            _named(f"tool.poetry.group.{group}.dependencies", deps, found, _canonical_name)
    return found


def _package_json(text: str) -> Dependencies:
    data = json.loads(text)
    found: Dependencies = {}
    if not isinstance(data, Mapping):
        return found
    for section in (
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
        "bundleDependencies",
    ):
        entries = data.get(section)
        if isinstance(entries, list):
            entries = {name: "" for name in entries if isinstance(name, str)}
        if isinstance(entries, Mapping):
            _named(section, entries, found, str)
    return found


def _cargo(text: str) -> Dependencies:
    import tomllib

    data = tomllib.loads(text)
    found: Dependencies = {}
    sections = ("dependencies", "dev-dependencies", "build-dependencies")
    for section in sections:
        _named(section, _table(data, section), found, str)
    _named("workspace.dependencies", _table(_table(data, "workspace"), "dependencies"), found, str)
    for target, table in _table(data, "target").items():
        if isinstance(table, Mapping):
            for section in sections:
                _named(f"target.{target}.{section}", _table(table, section), found, str)
    return found


# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_GO_REQUIRE = r"^\s*(?:require\s+)?(\S+)\s+(v\S+)"


def _go_mod(text: str) -> Dependencies:
    found: Dependencies = {}
    in_block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if in_block:
            if line.startswith(")"):
                in_block = False
                continue
        elif line.startswith("require") and line.endswith("("):
            in_block = True
            continue
        elif not line.startswith("require "):
            continue
        match = re.match(_GO_REQUIRE, line)
        if match:
            found[("require", match.group(1))] = match.group(2)
    return found


_REQUIREMENT_NAME = r"^([A-Za-z0-9][A-Za-z0-9._-]*)(.*)$"  # compiled on first use, as above


def _requirements(text: str) -> Dependencies:
    found: Dependencies = {}
    for raw in _logical_lines(text):
        line = re.split(r"(?:^|\s)#", raw, maxsplit=1)[0].strip()
        if not line or line.startswith("-"):
            continue  # options, -r includes and -e editables are not pinned dependencies
        match = re.match(_REQUIREMENT_NAME, line)
        if match is None:
            continue
        found[("requirements", _canonical_name(match.group(1)))] = "".join(match.group(2).split())
    return found


def _logical_lines(text: str) -> Iterator[str]:
    pending = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _table(data: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _named(
    section: str, entries: Mapping[str, object], found: Dependencies, norm: Callable[[str], str]
) -> None:
    for name, spec in entries.items():
        if section.startswith("tool.poetry") and name == "python":
            continue  # the interpreter constraint, not a dependency
        found[(section, norm(name))] = _spec_text(spec)


def _spec_text(spec: object) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        return json.dumps(spec, sort_keys=True, default=str)
    return json.dumps(spec, default=str)


class DependencyGuard(Guard):
    """Refuse adding, removing or re-versioning a dependency unless it is allowed.

    What: reads `pyproject.toml` (PEP 621, dependency groups, Poetry),
    `package.json`, `Cargo.toml`, `go.mod` and `requirements*.txt` before and
    after the change. A dependency added, removed or re-versioned is refused
    unless `[policy.dependencies]` allows that kind of change (`allow_add`,
    `allow_remove`, `allow_version_change`) or names it in `allowed`, or the
    proposal lists it in `allowed_dependency_changes`; allowed changes are
    reported as notes. `mode` decides who is refused: `auto` (default) refuses
    in a proposal and only reports in a plain apply, which has no way to
    declare the change; `refuse` and `report` do so everywhere.
    Why: a new dependency is a supply-chain decision and a re-version can
    change behaviour everywhere; neither should slip in with a code edit.
    Example: a patch adding `"left-pad": "^1.3.0"` to `package.json`
    dependencies is DEPENDENCY_CHANGED.
    """

    NAME = "dependencies"
    CODE = FailureCode.DEPENDENCY_CHANGED
    MESSAGE = "dependencies changed"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per manifest with a change that is not allowed."""
        rules = ctx.policy.dependencies
        named = {_norm(name) for name in (*rules.allowed, *ctx.allowed_dependencies)}
        allowed_kinds = {
            DependencyChangeKind.ADDED: rules.allow_add,
            DependencyChangeKind.REMOVED: rules.allow_remove,
            DependencyChangeKind.REVERSIONED: rules.allow_version_change,
        }
        refusing = rules.mode is DependencyMode.REFUSE or (
            rules.mode is DependencyMode.AUTO and ctx.from_proposal
        )
        failures: list[PatchFailure] = []
        for change in changes:
            refused: list[str] = []
            for dep in dependency_changes(change):
                if allowed_kinds[dep.kind] or _norm(dep.name) in named:
                    self.flagged.append(f"{dep.path}: {dep.describe()} (allowed)")
                elif not refusing:
                    self.flagged.append(f"{dep.path}: {dep.describe()}")
                else:
                    refused.append(dep.describe())
            if refused:
                failures.append(
                    self.failure(
                        change.path,
                        f"{change.path}: " + "; ".join(refused),
                        hint="leave the manifest's dependencies as they are, or list the "
                        "names in the proposal's allowed_dependency_changes when the task "
                        "is to change them",
                    )
                )
        return failures


def _norm(name: str) -> str:
    return _canonical_name(name) if re.fullmatch(r"[A-Za-z0-9._-]+", name) else name
