"""Command profiles: the allow-list of commands that may generate changes, as argv templates.

A profile is data: an argv template whose `{name}` slots are filled only with
parameters the profile declares and validates (a pattern, never a leading `-`,
workspace-relative paths for `path` parameters), never with free text. Profiles come
from the built-ins below, overridden or extended by `patchsmith.toml` (`[commands.NAME]`)
or, without one, `pyproject.toml` (`[tool.patchsmith.commands.NAME]`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.process import ESSENTIAL_ENV

__all__ = [
    "BUILTIN_PROFILES",
    "CommandParam",
    "CommandProfile",
    "ParamKind",
    "ParamValue",
    "load_profiles",
    "render_argv",
    "require_sandbox",
]

SETTINGS_KEYS = frozenset({"require_sandbox"})
"""Keys of `[commands]` that are settings, not profile names."""

ParamValue = str | tuple[str, ...]
"""A parameter's value: one string, or several for a `multiple` parameter."""

_SLOT = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_DEFAULT_PATTERN = r"[A-Za-z0-9._@/+=:,^~*-][A-Za-z0-9._@/+=:,^~* -]*"

PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
"""Package managers reach their registry through the same proxy as the user."""

MAVEN_ENV = ("JAVA_HOME", "MAVEN_OPTS", "MAVEN_ARGS", "MAVEN_HOME", "M2_HOME")
"""Maven's own variables (`MAVEN_OPTS=-Dmaven.repo.local=...` points it at a local repository)."""
GRADLE_ENV = ("JAVA_HOME", "GRADLE_USER_HOME", "GRADLE_OPTS", "JAVA_OPTS")
"""Gradle's own variables (`GRADLE_USER_HOME` holds its caches and wrapper distributions)."""
_COORDINATE = r"[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+"
_VERSION = r"[A-Za-z0-9][A-Za-z0-9_.+-]*"
GRADLE_LOCKFILES = (
    "gradle.lockfile",
    "buildscript-gradle.lockfile",
    "settings-gradle.lockfile",
    "gradle/dependency-locks/",
)
"""What Gradle's dependency locking writes (one lockfile per project, older per-configuration
files under `gradle/dependency-locks/`)."""


def _bad_relative(path: str) -> bool:
    pure = PurePosixPath(path)
    return pure.is_absolute() or ".." in pure.parts or "\\" in path


class ParamKind(StrEnum):
    """How a parameter's value is checked beyond its pattern."""

    TEXT = "text"
    PATH = "path"
    """A workspace-relative POSIX path: no `..`, not absolute."""


class CommandParam(BaseModel):
    """One parameter a profile's argv template may use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ParamKind = ParamKind.TEXT
    pattern: str = _DEFAULT_PATTERN
    """A regular expression each value must match in full."""
    multiple: StrictBool = False
    """Several values; its slot must then be a whole argv element, which expands to all."""
    default: ParamValue | None = None
    """Used when the operation gives no value; `None` makes the parameter required."""

    @model_validator(mode="after")
    def _pattern_compiles(self) -> CommandParam:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern {self.pattern!r} does not compile: {exc}") from exc
        return self


class CommandProfile(BaseModel):
    """An allow-listed command: argv template, parameters, limits and the paths it may change."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    argv: tuple[str, ...] = Field(min_length=1)
    """The command as a list; `{name}` slots are filled from `params` (never argv[0])."""
    params: dict[str, CommandParam] = Field(default_factory=dict)
    description: str = ""
    cwd: str = "."
    """Where to run it, relative to the workspace root."""
    timeout_seconds: float = Field(default=300.0, gt=0)
    env: tuple[str, ...] = ESSENTIAL_ENV
    """Environment variables passed through (names or `LC_*`-style patterns); HOME and
    TMPDIR are always pointed into the scratch area."""
    expected_changed_paths: tuple[str, ...] = ()
    """Gitignore-style patterns of what the command may change, unless the operation says."""
    forbidden_changed_paths: tuple[str, ...] = ()
    """Gitignore-style patterns it must never change (added to the operation's)."""
    run_twice: StrictBool = False
    """Run on two fresh copies; differing results mark the change nondeterministic."""
    network: StrictBool = False
    """Reach the network from the sandbox (off: a private network namespace)."""

    @model_validator(mode="after")
    def _slots_are_declared(self) -> CommandProfile:
        if _SLOT.search(self.argv[0]):
            raise ValueError("argv[0] (the program) cannot hold a parameter")
        for element in self.argv:
            for name in _SLOT.findall(element):
                param = self.params.get(name)
                if param is None:
                    raise ValueError(f"argv uses {{{name}}}, which params does not declare")
                if param.multiple and element != f"{{{name}}}":
                    raise ValueError(f"multiple parameter {name} must be a whole argv element")
        if _bad_relative(self.cwd):
            raise ValueError(f"cwd {self.cwd!r} must be a relative path inside the workspace")
        return self


BUILTIN_PROFILES: Mapping[str, CommandProfile] = {
    "npm-lock": CommandProfile(
        argv=(
            "npm",
            "install",
            "--package-lock-only",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
        ),
        description="update package-lock.json from package.json; no scripts, no node_modules",
        env=(*ESSENTIAL_ENV, *PROXY_ENV, "npm_config_registry"),
        expected_changed_paths=("package-lock.json",),
        network=True,
    ),
    "ruff-format": CommandProfile(
        argv=("ruff", "format", "--no-cache", "{paths}"),
        params={"paths": CommandParam(kind=ParamKind.PATH, multiple=True, default=(".",))},
        description="format Python files with ruff",
        timeout_seconds=120.0,
        expected_changed_paths=("*.py", "*.pyi"),
        run_twice=True,
    ),
    "go-mod-tidy": CommandProfile(
        argv=("go", "mod", "tidy"),
        description="make go.mod and go.sum match the module's imports",
        env=(*ESSENTIAL_ENV, *PROXY_ENV, "GOPROXY", "GOFLAGS", "GONOSUMDB", "GOPRIVATE"),
        expected_changed_paths=("go.mod", "go.sum"),
        network=True,
    ),
    "maven-dependency-version": CommandProfile(
        argv=(
            "mvn",
            "-o",
            "-q",
            "-B",
            "versions:use-dep-version",
            "-Dincludes={artifact}",
            "-DdepVersion={version}",
            "-DforceVersion=true",
            "-DgenerateBackupPoms=false",
        ),
        params={
            "artifact": CommandParam(pattern=_COORDINATE),
            "version": CommandParam(pattern=_VERSION),
        },
        description="set one dependency's version in pom.xml (versions plugin, offline)",
        timeout_seconds=600.0,
        env=(*ESSENTIAL_ENV, *MAVEN_ENV),
        expected_changed_paths=("pom.xml",),
    ),
    "maven-set-property": CommandProfile(
        argv=(
            "mvn",
            "-o",
            "-q",
            "-B",
            "versions:set-property",
            "-Dproperty={property}",
            "-DnewVersion={version}",
            "-DgenerateBackupPoms=false",
        ),
        params={
            "property": CommandParam(pattern=r"[A-Za-z0-9_.-]+"),
            "version": CommandParam(pattern=_VERSION),
        },
        description="set a version property in pom.xml (versions plugin, offline)",
        timeout_seconds=600.0,
        env=(*ESSENTIAL_ENV, *MAVEN_ENV),
        expected_changed_paths=("pom.xml",),
    ),
    "gradle-update-locks": CommandProfile(
        argv=("gradle", "--offline", "-q", "dependencies", "--update-locks", "{modules}"),
        params={"modules": CommandParam(pattern=rf"{_COORDINATE}(,{_COORDINATE})*")},
        description="move locked dependencies (group:name, comma-separated) to the newest "
        "version their declaration allows (Gradle dependency locking, offline)",
        timeout_seconds=600.0,
        env=(*ESSENTIAL_ENV, *GRADLE_ENV),
        expected_changed_paths=GRADLE_LOCKFILES,
    ),
    "gradlew-update-locks": CommandProfile(
        argv=("./gradlew", "--offline", "-q", "dependencies", "--update-locks", "{modules}"),
        params={"modules": CommandParam(pattern=rf"{_COORDINATE}(,{_COORDINATE})*")},
        description="gradle-update-locks through the repository's own Gradle wrapper",
        timeout_seconds=600.0,
        env=(*ESSENTIAL_ENV, *GRADLE_ENV),
        expected_changed_paths=GRADLE_LOCKFILES,
    ),
}
"""Profiles every workspace has; a configured profile of the same name replaces one."""


def render_argv(
    profile: CommandProfile, given: Mapping[str, ParamValue]
) -> tuple[str, ...] | PatchFailure:
    """The argv of `profile` with its slots filled from `given`, or COMMAND_NOT_ALLOWED.

    Refused: an undeclared parameter, a missing required one, several values for a
    single one, a value that fails its pattern or starts with `-`, a `path` value that
    is absolute or climbs out with `..`.
    """
    unknown = sorted(set(given) - set(profile.params))
    if unknown:
        return _not_allowed(f"unknown parameter(s) {', '.join(unknown)}", profile)
    values: dict[str, tuple[str, ...]] = {}
    for name, param in profile.params.items():
        raw = given.get(name, param.default)
        if raw is None:
            return _not_allowed(f"parameter {name} is required", profile)
        items = (raw,) if isinstance(raw, str) else tuple(raw)
        if not param.multiple and len(items) != 1:
            return _not_allowed(f"parameter {name} takes exactly one value", profile)
        for item in items:
            problem = _invalid_value(param, item)
            if problem is not None:
                return _not_allowed(f"parameter {name}: {item!r} {problem}", profile)
        values[name] = items
    argv: list[str] = []
    for element in profile.argv:
        whole = _SLOT.fullmatch(element)
        if whole is not None and profile.params[whole.group(1)].multiple:
            argv.extend(values[whole.group(1)])
        else:
            argv.append(_SLOT.sub(lambda m: values[m.group(1)][0], element))
    return tuple(argv)


def _invalid_value(param: CommandParam, value: str) -> str | None:
    if not value or value.startswith("-"):
        return "is empty or starts with '-' (it could be read as an option)"
    if "\0" in value or "\n" in value:
        return "holds a control character"
    if re.fullmatch(param.pattern, value) is None:
        return f"does not match {param.pattern!r}"
    if param.kind is ParamKind.PATH and _bad_relative(value):
        return "must be a relative path inside the workspace"
    return None


def _not_allowed(message: str, profile: CommandProfile) -> PatchFailure:
    names = ", ".join(sorted(profile.params)) or "none"
    return PatchFailure(
        code=FailureCode.COMMAND_NOT_ALLOWED,
        message=message,
        hint=f"the profile's parameters are: {names}",
        rule="command_profile",
    )


def load_profiles(root: str | Path) -> dict[str, CommandProfile] | PatchFailure:
    """The built-in profiles, replaced or extended by the workspace's configured ones.

    Read from `patchsmith.toml` (`[commands.NAME]`), else `pyproject.toml`
    (`[tool.patchsmith.commands.NAME]`). COMMAND_NOT_ALLOWED names each bad key.
    """
    found = _table(Path(root))
    if found is None:
        return dict(BUILTIN_PROFILES)
    if isinstance(found, PatchFailure):
        return found
    path, where, data = found
    profiles = dict(BUILTIN_PROFILES)
    for name, table in data.items():
        if name in SETTINGS_KEYS:
            continue
        try:
            profiles[str(name)] = CommandProfile.model_validate(table)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or '(table)'}: {error['msg']}"
                for error in exc.errors(include_url=False)
            )
            return _bad_config(path, f"invalid command profile {name!r} in {where}: {problems}")
    return profiles


def require_sandbox(root: str | Path) -> bool | PatchFailure:
    """`[commands] require_sandbox` of the workspace (default false): refuse to run a
    command where no sandbox can be made. COMMAND_NOT_ALLOWED when it is not a boolean."""
    found = _table(Path(root))
    if found is None:
        return False
    if isinstance(found, PatchFailure):
        return found
    path, where, data = found
    value = data.get("require_sandbox", False)
    if not isinstance(value, bool):
        return _bad_config(path, f"{where} require_sandbox must be true or false")
    return value


def _table(root: Path) -> tuple[Path, str, Mapping[str, object]] | PatchFailure | None:
    """The `[commands]` table: from `patchsmith.toml`, else `pyproject.toml`, else `None`."""
    own = root / "patchsmith.toml"
    if own.is_file():
        return _read(own, ("commands",))
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return _read(pyproject, ("tool", "patchsmith", "commands"))
    return None


def _read(path: Path, keys: Sequence[str]) -> tuple[Path, str, Mapping[str, object]] | PatchFailure:
    where = f"{path.name} [{'.'.join(keys)}]"
    try:
        data: object = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return _bad_config(path, f"cannot read {path.name}: {exc}")
    for key in keys:
        if not isinstance(data, Mapping):
            return _bad_config(path, f"{where} must be a table")
        data = data.get(key, {})
    if not isinstance(data, Mapping):
        return _bad_config(path, f"{where} must be a table")
    return path, where, data


def _bad_config(path: Path, message: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.COMMAND_NOT_ALLOWED,
        message=message,
        file=path.name,
        hint="docs/commands.md lists every profile key",
        rule="command_profile",
    )
