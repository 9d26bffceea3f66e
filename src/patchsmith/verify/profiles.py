"""Verification profiles: named commands that check a tree, from the config file or detected.

A profile is an argv list (never a shell string) with a working directory, a
timeout, an environment allow-list and the parser that reads its output. Profiles
come from `patchsmith.toml` (tables `[verify.<name>]`), else from `pyproject.toml`
(`[tool.patchsmith.verify.<name>]`) — the same file, in the same order, as the
policy — on top of built-in defaults detected from the repository (pytest, ruff,
mypy, npm test, tsc, go test, cargo). A configured profile replaces a built-in of
the same name. Unknown keys are refused (INVALID_POLICY).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.proposal import ProposalStrategy
from patchsmith.runtime.process import ESSENTIAL_ENV
from patchsmith.verify.parsers import ParserName

__all__ = [
    "DEFAULT_MINIMUM_EVIDENCE",
    "REPORT_PLACEHOLDER",
    "EvidenceLevel",
    "Profile",
    "ProfileKind",
    "ProfileSet",
    "ProfileSource",
    "Unplanned",
    "Unverified",
    "detect_profiles",
    "load_profiles",
]

REPORT_PLACEHOLDER = "{report}"
"""In a profile's argv, replaced by the path of a fresh file the tool writes its report to."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ProfileKind(StrEnum):
    """What a profile proves when it passes."""

    BUILD = "build"
    """The project compiles (proves COMPILES)."""
    TYPECHECK = "typecheck"
    """The type checker is satisfied (proves COMPILES)."""
    LINT = "lint"
    """The linter is satisfied (proves neither postcondition on its own)."""
    TEST = "test"
    """The tests pass (proves TESTS_PASS)."""


class EvidenceLevel(IntEnum):
    """The verification pyramid, lowest first: each level includes the ones below it."""

    SYNTAX = 1
    """Every changed file still parses (the syntax guard; always on)."""
    COMPILE = 2
    """A build or type-check profile passed."""
    TARGETED_TESTS = 3
    """The tests that import a changed module passed."""
    FULL_TESTS = 4
    """A whole test profile passed."""

    @property
    def label(self) -> str:
        """The spelling used in config files and messages (`targeted-tests`)."""
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, text: str) -> EvidenceLevel:
        """`targeted-tests` (or `TARGETED_TESTS`) to the level; ValueError when unknown."""
        key = text.strip().upper().replace("-", "_")
        try:
            return cls[key]
        except KeyError:
            choices = ", ".join(level.label for level in cls)
            raise ValueError(f"unknown evidence level {text!r} (one of {choices})") from None


DEFAULT_MINIMUM_EVIDENCE: Mapping[ProposalStrategy, EvidenceLevel] = {
    ProposalStrategy.DIRECT_FILE_EDIT: EvidenceLevel.TARGETED_TESTS,
    ProposalStrategy.UNIFIED_DIFF: EvidenceLevel.TARGETED_TESTS,
    ProposalStrategy.AST_TRANSFORM: EvidenceLevel.FULL_TESTS,
    ProposalStrategy.BUILD_TOOL_GENERATED: EvidenceLevel.COMPILE,
    ProposalStrategy.HYBRID: EvidenceLevel.FULL_TESTS,
}
"""The pyramid's defaults (docs/verify.md explains each); `risk: HIGH` adds one level."""


class Unplanned(StrEnum):
    """What happens to a proposal that comes without a `verification_plan`."""

    AUTO = "auto"
    """The runtime makes the plan from the workspace's profiles that reach the strategy's
    minimum (and decide the expected postconditions), and runs it. With no such profile,
    AST_TRANSFORM, HYBRID and BUILD_TOOL_GENERATED are refused (INSUFFICIENT_EVIDENCE);
    DIRECT_FILE_EDIT and UNIFIED_DIFF get a note (docs/decisions/0030)."""
    REFUSE = "refuse"
    """Refused (INSUFFICIENT_EVIDENCE) whenever the minimum is above syntax."""
    NOTE = "note"
    """Applied after the syntax guard, with a note that it was not verified."""


class Unverified(StrEnum):
    """What happens to a proposal whose expected TESTS_PASS or COMPILES nothing established."""

    REFUSE = "refuse"
    """Refused (POSTCONDITION_UNVERIFIED, VERIFICATION_ERROR): the default."""
    NOTE = "note"
    """Applied with a note saying what was not established (the workspace opts out)."""


class Profile(BaseModel):
    """One verification command and how to read what it prints."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    argv: tuple[str, ...] = Field(min_length=1)
    """The command; `{report}` in an argument becomes a report file's path."""
    cwd: str = "."
    """Working directory, relative to the workspace root (never outside it)."""
    timeout_seconds: float = Field(default=600.0, gt=0)
    env: tuple[str, ...] = ()
    """Names (or `*` patterns) of variables passed through besides the essential ones."""
    inherit_essential_env: StrictBool = True
    """Pass PATH, HOME, the locale and TMPDIR through (off: only `env` and `set_env`)."""
    set_env: dict[str, str] = Field(default_factory=dict)
    """Variables set to fixed values."""
    parser: ParserName = ParserName.EXIT_CODE
    kind: ProfileKind = ProfileKind.TEST
    targeted: StrictBool = False
    """A Python test profile that may run only the tests importing a changed module first."""
    network: StrictBool = False
    """Reach the network from the sandbox (off: a private network namespace)."""
    description: str = ""

    @field_validator("argv")
    @classmethod
    def _argv_not_blank(cls, argv: tuple[str, ...]) -> tuple[str, ...]:
        if not argv[0].strip():
            raise ValueError("argv[0] must name a program")
        return argv

    @field_validator("cwd")
    @classmethod
    def _cwd_inside(cls, cwd: str) -> str:
        path = PurePosixPath(cwd)
        if path.is_absolute() or ".." in path.parts or "\\" in cwd:
            raise ValueError("cwd must be a relative path inside the workspace, without '..'")
        return cwd

    def allowed_env(self) -> tuple[str, ...]:
        """The full allow-list handed to the process runner."""
        essential = ESSENTIAL_ENV if self.inherit_essential_env else ()
        return (*essential, *self.env)


class ProfileSource(StrEnum):
    """Where a profile came from."""

    BUILTIN = "builtin"
    PATCHSMITH_TOML = "patchsmith.toml"
    PYPROJECT_TOML = "pyproject.toml"


@dataclass(frozen=True)
class ProfileSet:
    """The profiles of one workspace, by name, with where each came from and the pyramid."""

    profiles: Mapping[str, Profile]
    sources: Mapping[str, ProfileSource]
    minimum_evidence: Mapping[ProposalStrategy, EvidenceLevel] = field(
        default_factory=lambda: dict(DEFAULT_MINIMUM_EVIDENCE)
    )
    require_plan: bool = False
    """When true, a proposal without a `verification_plan` cannot reach its level."""
    unplanned: Unplanned = Unplanned.AUTO
    """What a proposal without a plan gets (`require_plan` makes it REFUSE)."""
    unverified: Unverified = Unverified.REFUSE
    """What a proposal gets when an expected TESTS_PASS/COMPILES was not established."""
    require_sandbox: bool = False
    """Refuse to run a profile (SANDBOX_UNAVAILABLE) where bwrap cannot sandbox it."""

    def get(self, name: str) -> Profile | None:
        """The profile called `name`, or `None`."""
        return self.profiles.get(name)

    def required_level(self, strategy: ProposalStrategy, *, high_risk: bool) -> EvidenceLevel:
        """The evidence a proposal of `strategy` needs; HIGH risk raises it one level."""
        level = self.minimum_evidence.get(strategy, EvidenceLevel.SYNTAX)
        if high_risk:
            level = EvidenceLevel(min(level + 1, EvidenceLevel.FULL_TESTS))
        return level


class _VerifyTable(BaseModel):
    """The non-profile keys of `[verify]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    minimum_evidence: dict[ProposalStrategy, str] = Field(default_factory=dict)
    require_plan: StrictBool = False
    unplanned: Unplanned = Unplanned.AUTO
    unverified: Unverified = Unverified.REFUSE
    require_sandbox: StrictBool = False

    @field_validator("minimum_evidence")
    @classmethod
    def _levels_known(cls, levels: dict[ProposalStrategy, str]) -> dict[ProposalStrategy, str]:
        for text in levels.values():
            EvidenceLevel.parse(text)
        return levels


_SETTINGS_KEYS = frozenset(_VerifyTable.model_fields)
"""Keys of `[verify]` that are settings, not profile names."""


def load_profiles(root: str | Path) -> ProfileSet | PatchFailure:
    """The workspace's profiles: detected built-ins, then the config file's (which win).

    Reads `patchsmith.toml` `[verify]`, else `pyproject.toml` `[tool.patchsmith.verify]`.
    INVALID_POLICY when the file cannot be read, a profile has unknown keys or bad
    values, or a name is not `[A-Za-z0-9][A-Za-z0-9_.-]*`.
    """
    root = Path(root)
    detected = detect_profiles(root)
    profiles: dict[str, Profile] = dict(detected)
    sources = {name: ProfileSource.BUILTIN for name in detected}
    own = root / "patchsmith.toml"
    pyproject = root / "pyproject.toml"
    if own.is_file():
        table = _read_table(own, ("verify",))
        source = ProfileSource.PATCHSMITH_TOML
    elif pyproject.is_file():
        table = _read_table(pyproject, ("tool", "patchsmith", "verify"))
        source = ProfileSource.PYPROJECT_TOML
    else:
        return ProfileSet(profiles, sources)
    if isinstance(table, PatchFailure):
        return table
    where = own.name if source is ProfileSource.PATCHSMITH_TOML else pyproject.name
    prefix = "verify" if source is ProfileSource.PATCHSMITH_TOML else "tool.patchsmith.verify"
    settings = {k: v for k, v in table.items() if k in _SETTINGS_KEYS}
    try:
        parsed_settings = _VerifyTable.model_validate(settings)
    except ValidationError as exc:
        return _invalid(where, f"invalid [{prefix}] settings: {_problems(exc)}")
    for name, body in table.items():
        if name in _SETTINGS_KEYS:
            continue
        if not _NAME.match(name):
            return _invalid(where, f"[{prefix}.{name}]: a profile name is letters, digits, '_.-'")
        if not isinstance(body, Mapping):
            return _invalid(where, f"[{prefix}] {name!r} must be a table (a profile)")
        try:
            profiles[name] = Profile.model_validate(body)
        except ValidationError as exc:
            return _invalid(where, f"invalid profile [{prefix}.{name}]: {_problems(exc)}")
        sources[name] = source
    levels = dict(DEFAULT_MINIMUM_EVIDENCE)
    for strategy, text in parsed_settings.minimum_evidence.items():
        levels[strategy] = EvidenceLevel.parse(text)
    unplanned = Unplanned.REFUSE if parsed_settings.require_plan else parsed_settings.unplanned
    return ProfileSet(
        profiles,
        sources,
        levels,
        unplanned is Unplanned.REFUSE,
        unplanned=unplanned,
        unverified=parsed_settings.unverified,
        require_sandbox=parsed_settings.require_sandbox,
    )


def _read_table(path: Path, keys: tuple[str, ...]) -> Mapping[str, object] | PatchFailure:
    try:
        data: object = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return _invalid(path.name, f"cannot read {path.name}: {exc}")
    for key in keys:
        if not isinstance(data, Mapping):
            return _invalid(path.name, f"{path.name} [{'.'.join(keys)}] must be a table")
        data = data.get(key, {})
    if not isinstance(data, Mapping):
        return _invalid(path.name, f"{path.name} [{'.'.join(keys)}] must be a table")
    return data


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or '(table)'}: {error['msg']}"
        for error in exc.errors(include_url=False)
    )


def _invalid(file: str, message: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.INVALID_POLICY,
        message=message,
        file=file,
        hint="docs/verify.md lists every profile key",
    )


# -- built-in defaults ---------------------------------------------------------------------------


def detect_profiles(root: str | Path) -> dict[str, Profile]:
    """The built-in profiles that fit the repository at `root` (by its manifest files)."""
    root = Path(root)
    found: dict[str, Profile] = {}
    pyproject = _toml(root / "pyproject.toml")
    python_project = (
        pyproject is not None
        or (root / "setup.py").is_file()
        or (root / "setup.cfg").is_file()
        or (root / "tests").is_dir()
    )
    python = _python(root)
    tool = pyproject.get("tool", {}) if pyproject else {}
    tool = tool if isinstance(tool, Mapping) else {}
    if python_project:
        found["pytest"] = Profile(
            argv=(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={report}"),
            parser=ParserName.PYTEST,
            kind=ProfileKind.TEST,
            targeted=True,
            env=("PYTHON*", "VIRTUAL_ENV"),
            description="pytest, read from its JUnit XML report",
        )
    if "ruff" in tool or (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file():
        found["ruff"] = Profile(
            argv=(_venv_tool(root, "ruff"), "check", "--output-format", "json", "--no-cache", "."),
            parser=ParserName.RUFF,
            kind=ProfileKind.LINT,
            description="ruff check, JSON output",
        )
    if "mypy" in tool or (root / "mypy.ini").is_file():
        mypy_table = tool.get("mypy")
        configured = isinstance(mypy_table, Mapping) and "files" in mypy_table
        targets: tuple[str, ...] = (
            () if configured else ("src",) if (root / "src").is_dir() else (".",)
        )
        found["mypy"] = Profile(
            argv=(python, "-m", "mypy", "--output", "json", *targets),
            parser=ParserName.MYPY,
            kind=ProfileKind.TYPECHECK,
            env=("PYTHON*", "VIRTUAL_ENV", "MYPY*"),
            description="mypy, JSON output",
        )
    package = _json(root / "package.json")
    if package is not None:
        scripts = package.get("scripts")
        if isinstance(scripts, Mapping) and "test" in scripts:
            found["npm-test"] = Profile(
                argv=("npm", "test", "--silent"),
                parser=ParserName.GENERIC,
                kind=ProfileKind.TEST,
                env=("NODE_*", "npm_config_*", "CI"),
                description="npm test (file:line:col lines parsed)",
            )
    if (root / "tsconfig.json").is_file():
        local = root / "node_modules" / ".bin" / "tsc"
        tsc = ("node_modules/.bin/tsc",) if local.is_file() else ("npx", "--no-install", "tsc")
        found["tsc"] = Profile(
            argv=(*tsc, "--noEmit", "--pretty", "false"),
            parser=ParserName.GENERIC,
            kind=ProfileKind.TYPECHECK,
            env=("NODE_*", "npm_config_*"),
            description="tsc --noEmit",
        )
    if (root / "go.mod").is_file():
        found["go-test"] = Profile(
            argv=("go", "test", "-json", "./..."),
            parser=ParserName.GO_TEST,
            kind=ProfileKind.TEST,
            env=("GO*", "CGO_*"),
            description="go test -json ./...",
        )
    if (root / "Cargo.toml").is_file():
        cargo_env = ("CARGO_*", "RUSTUP_*", "RUSTC*")
        found["cargo-check"] = Profile(
            argv=("cargo", "check", "--message-format=json"),
            parser=ParserName.CARGO,
            kind=ProfileKind.BUILD,
            env=cargo_env,
            description="cargo check, JSON diagnostics",
        )
        found["cargo-test"] = Profile(
            argv=("cargo", "test", "--message-format=json"),
            parser=ParserName.CARGO,
            kind=ProfileKind.TEST,
            env=cargo_env,
            description="cargo test, JSON diagnostics and libtest results",
        )
    return found


def _python(root: Path) -> str:
    """The workspace's own interpreter when it has a virtualenv, else the one running us."""
    for venv in (".venv", "venv"):
        for rel in (f"{venv}/bin/python", f"{venv}/Scripts/python.exe"):
            if (root / rel).is_file():
                return rel
    return sys.executable


def _venv_tool(root: Path, name: str) -> str:
    for venv in (".venv", "venv"):
        rel = f"{venv}/bin/{name}"
        if (root / rel).is_file():
            return rel
    return name


def _toml(path: Path) -> Mapping[str, object] | None:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _json(path: Path) -> Mapping[str, object] | None:
    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, Mapping) else None
