"""`Policy`: the workspace's rules for what a change may touch and how big it may be.

Read from `patchsmith.toml` (table `[policy]`), else from `pyproject.toml`
(table `[tool.patchsmith.policy]`), else the defaults, which refuse no ordinary edit.
A proposal can narrow the policy (more forbidden paths, lower budgets) but never
loosen it: `Policy.tightened_by` ignores loosening attempts and `loosening_attempts`
names them, so they can be reported.

The policy and its tables are frozen dataclasses; pydantic validates them
(`patchsmith.policy._schema`, docs/decisions/0027), but only values that differ from
the defaults: a workspace without a policy file gets `Policy()` without loading pydantic.

The policy layer (docs/architecture.md): the rules every guard reads, and reading them from
the workspace's files. It may import `runtime`, `model`, `formats`, `engine` and `errors`;
`guards` and everything above import it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:
    import tomllib

    import pathspec

    # The proposal's models are loaded only when a proposal narrows a policy: `apply`
    # needs the policy, never them.
    from patchsmith.model.proposal import PatchProposal

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DependencyMode",
    "DependencyPolicy",
    "GuardSwitches",
    "LicencePolicy",
    "OwnershipMode",
    "OwnershipPolicy",
    "Policy",
    "ReviewPolicy",
    "StrategyCheck",
    "load_policy",
    "matches",
]

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
"""Larger than any hand-written source file, small enough to stop a runaway write."""


class _Table:
    """What the policy's tables share: validated by pydantic when made with other values.

    A table made with its defaults needs no validation, so neither the defaults nor a
    workspace without a policy file load pydantic. Any other value (a list for a tuple,
    a mapping for a nested table, a string for an enum) is checked and converted by
    `patchsmith.policy._schema`, which raises pydantic's `ValidationError`, as the
    tables did when they were pydantic models. Booleans are strict (`1` is not `true`).
    """

    PATTERN_FIELDS: ClassVar[tuple[str, ...]] = ()
    """The fields that hold gitignore-style patterns, each checked when validated."""

    @staticmethod
    def check_patterns(patterns: tuple[str, ...]) -> None:
        """ValueError naming the first pattern the pattern library cannot compile."""
        check_patterns(patterns)

    def __post_init__(self) -> None:
        given = {
            f.name: getattr(self, f.name)
            for f in fields(self)  # type: ignore[arg-type]
            if not _is_default(getattr(self, f.name), f.default)
        }
        if not given:
            return
        from patchsmith.policy._schema import validated_fields

        for name, value in validated_fields(type(self), given).items():
            object.__setattr__(self, name, value)  # the frozen dataclass's own idiom

    @classmethod
    def model_validate(cls, data: object) -> Self:
        """The table a mapping (a TOML table) describes; pydantic's `ValidationError` if
        it holds unknown keys or bad values, each named by its path."""
        from patchsmith.policy._schema import validated_table

        return validated_table(cls, data)

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with the fields in `update` replaced (and validated)."""
        return replace(self, **(update or {}))  # type: ignore[type-var]

    def model_dump(self, *, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The fields as a dict, nested tables as dicts; `json` mode gives JSON types."""
        from patchsmith.policy._schema import dumped

        return dumped(self, mode=mode)

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of this table, as pydantic writes it."""
        from patchsmith.policy._schema import model_of

        return model_of(cls).model_json_schema()


def _is_default(value: object, default: object) -> bool:
    # The type must match too: `[]` is not `()`, `"warn"` is not `StrategyCheck.WARN`,
    # `1` is not `True`; such values go through validation, which converts or refuses them.
    return value is default or (type(value) is type(default) and value == default)


@dataclass(frozen=True, kw_only=True)
class GuardSwitches(_Table):
    """Which guards run; every guard is on unless switched off here."""

    write_scope: bool = True
    forbidden_paths: bool = True
    policy_files: bool = True
    generated_file: bool = True
    lockfile: bool = True
    binary_content: bool = True
    secrets: bool = True
    empty_write: bool = True
    placeholders: bool = True
    truncated_write: bool = True
    whole_file_removal: bool = True
    file_size: bool = True
    max_files: bool = True
    max_changed_lines: bool = True
    hunks_outside_expected: bool = True
    syntax: bool = True
    review: bool = True
    dependencies: bool = True
    licence_header: bool = True
    ownership: bool = True
    hard_links: bool = True
    read_only: bool = True


# A field's `metadata` holds its constraints, as keyword arguments of pydantic's `Field`.
_AT_LEAST_0 = {"ge": 0}
_AT_LEAST_1 = {"ge": 1}


@dataclass(frozen=True, kw_only=True)
class ReviewPolicy(_Table):
    """Thresholds of the review guard (`[policy.review]`); `None` means no limit."""

    min_changed_lines: int = field(default=40, metadata=_AT_LEAST_0)
    """A file diff this large is reviewed (files with declared target regions always are)."""
    region_margin: int = field(default=3, metadata=_AT_LEAST_0)
    """Lines around a declared target region that still count as inside it."""
    max_unrelated_hunks: int | None = field(default=0, metadata=_AT_LEAST_0)
    """Hunks outside the proposal's declared `target_regions` (only for files it declares)."""
    max_formatting_hunks: int | None = field(default=None, metadata=_AT_LEAST_0)
    """Hunks that change only whitespace or line wrapping."""
    max_lost_comments: int | None = field(default=None, metadata=_AT_LEAST_0)
    """Comment lines whose text is gone from the new file."""
    allow_import_reorder: bool = True
    """False: refuse a change that reorders the imports it keeps."""


class DependencyMode(StrEnum):
    """What the dependency guard does with a dependency change nobody allowed."""

    AUTO = "auto"
    """Refuse it in a proposal (which can declare it), report it in a plain apply."""
    REFUSE = "refuse"
    REPORT = "report"


@dataclass(frozen=True, kw_only=True)
class DependencyPolicy(_Table):
    """What the dependency guard lets through (`[policy.dependencies]`)."""

    mode: DependencyMode = DependencyMode.AUTO

    allow_add: bool = False
    allow_remove: bool = False
    allow_version_change: bool = False
    allowed: tuple[str, ...] = ()
    """Dependency names any change may add, remove or re-version."""


@dataclass(frozen=True, kw_only=True)
class LicencePolicy(_Table):
    """Licence headers (`[policy.licence]`): kept where present, required on new files if set."""

    marker: str = "SPDX-License-Identifier"
    """Text whose presence in a file's first `header_lines` lines makes it a licence header."""
    header_lines: int = field(default=20, metadata=_AT_LEAST_1)
    require_on_new_files: tuple[str, ...] = ()
    """Gitignore-style patterns of new files that must carry the marker (empty: none)."""


class OwnershipMode(StrEnum):
    """What the ownership guard does with a change to paths owned by others."""

    REFUSE = "refuse"
    FLAG = "flag"


@dataclass(frozen=True, kw_only=True)
class OwnershipPolicy(_Table):
    """CODEOWNERS checks (`[policy.ownership]`); off until `owner` is set."""

    owner: tuple[str, ...] = ()
    """The owners (`@user`, `@org/team`, e-mail) this workspace's changes act for."""
    mode: OwnershipMode = OwnershipMode.REFUSE
    codeowners: tuple[str, ...] = ("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS")
    """Where to look for the CODEOWNERS file, first found wins (as GitHub does)."""


class StrategyCheck(StrEnum):
    """What `propose` does when a proposal's declared strategy is not one the selector's
    table accepts for the staged change (docs/strategies.md)."""

    OFF = "off"
    WARN = "warn"
    """Apply it, with a note naming the strategy the table would choose."""
    REFUSE = "refuse"
    """Refuse it with STRATEGY_MISMATCH (rule `strategy_selector`)."""


@dataclass(frozen=True, kw_only=True)
class Policy(_Table):
    """Write scope, forbidden paths, budgets and guard switches (all patterns gitignore-style)."""

    PATTERN_FIELDS: ClassVar[tuple[str, ...]] = ("include", "exclude", "forbidden")

    include: tuple[str, ...] = ()
    """Paths a change may write; empty means the whole workspace."""
    exclude: tuple[str, ...] = ()
    """Paths taken out of the write scope (OUT_OF_SCOPE)."""
    forbidden: tuple[str, ...] = ()
    """Paths no change may touch, whatever the scope says (FORBIDDEN_PATH)."""
    max_files: int | None = field(default=None, metadata=_AT_LEAST_0)
    max_changed_lines: int | None = field(default=None, metadata=_AT_LEAST_0)
    """Added plus removed lines over the whole change."""
    max_hunks_outside_expected: int | None = field(default=None, metadata=_AT_LEAST_0)
    """Hunks allowed in files outside the proposal's `expected_files`; unset means 0
    (a proposal's declared files are a boundary), switch the guard off to allow any."""
    max_file_bytes: int = field(default=DEFAULT_MAX_FILE_BYTES, metadata=_AT_LEAST_1)
    guards: GuardSwitches = GuardSwitches()
    review: ReviewPolicy = ReviewPolicy()
    dependencies: DependencyPolicy = DependencyPolicy()
    licence: LicencePolicy = LicencePolicy()
    ownership: OwnershipPolicy = OwnershipPolicy()
    strategy_check: StrategyCheck = StrategyCheck.WARN
    """A declared strategy the selector's table does not accept: warn, refuse, or ignore."""
    record: bool = True
    """Keep an audit record of each run in `.patchsmith/`."""

    def guard_enabled(self, name: str) -> bool:
        """True unless the guard `name` is switched off (unknown names count as on)."""
        return bool(getattr(self.guards, name, True))

    def in_scope(self, path: str) -> bool:
        """True when `path` is inside the write scope (include minus exclude)."""
        if self.include and not matches(self.include, path):
            return False
        return not matches(self.exclude, path)

    def tightened_by(self, proposal: PatchProposal) -> Policy:
        """This policy narrowed by the proposal: its forbidden files and lower diff budgets.

        Attempts to loosen (a budget above the policy's) are ignored; see
        `loosening_attempts` for the list to report.
        """
        from patchsmith.model.proposal import DiffMaxFiles, DiffMaxLines

        forbidden = tuple(dict.fromkeys((*self.forbidden, *proposal.forbidden_files)))
        max_files = _lowest(
            self.max_files,
            (p.value for p in proposal.expected_postconditions if isinstance(p, DiffMaxFiles)),
        )
        max_lines = _lowest(
            self.max_changed_lines,
            (p.value for p in proposal.expected_postconditions if isinstance(p, DiffMaxLines)),
        )
        return replace(self, forbidden=forbidden, max_files=max_files, max_changed_lines=max_lines)

    def loosening_attempts(self, proposal: PatchProposal) -> tuple[str, ...]:
        """What in the proposal would loosen this policy (and is therefore ignored)."""
        from patchsmith.model.proposal import DiffMaxFiles, DiffMaxLines

        notes: list[str] = []
        for post in proposal.expected_postconditions:
            if isinstance(post, DiffMaxFiles) and _above(post.value, self.max_files):
                notes.append(
                    f"DIFF_MAX_FILES {post.value} is above the policy's max_files "
                    f"{self.max_files}; the policy's limit applies"
                )
            if isinstance(post, DiffMaxLines) and _above(post.value, self.max_changed_lines):
                notes.append(
                    f"DIFF_MAX_LINES {post.value} is above the policy's max_changed_lines "
                    f"{self.max_changed_lines}; the policy's limit applies"
                )
        return tuple(notes)


def _lowest(current: int | None, proposed: Iterable[int]) -> int | None:
    values = [v for v in (current, *proposed) if v is not None]
    return min(values) if values else None


def _above(value: int, limit: int | None) -> bool:
    return limit is not None and value > limit


PATTERN_FIELDS = Policy.PATTERN_FIELDS
"""The `Policy` fields that hold gitignore-style patterns, each checked when validated."""


def check_patterns(patterns: tuple[str, ...]) -> None:
    """ValueError naming the first pattern the pattern library cannot compile."""
    for pattern in patterns:
        try:
            _spec((pattern,))
        except (ValueError, re.error) as exc:  # `[z-a]` fails in `re`, not as a ValueError
            raise ValueError(f"bad pattern {pattern!r}: {exc}") from exc


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    # compiled once per distinct pattern list: policies are immutable, so this is pure
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def matches(patterns: Iterable[str], path: str) -> bool:
    """True when the POSIX relative `path` matches any gitignore-style pattern."""
    patterns = tuple(patterns)
    if not patterns:  # the default policy's lists: no pattern library needed to say no
        return False
    spec = _spec(tuple(patterns))
    return bool(spec.match_file(path))


def load_policy(root: str | Path) -> Policy | PatchFailure:
    """The policy at `root`: from `patchsmith.toml`, else `pyproject.toml`, else the defaults.

    Returns INVALID_POLICY when a policy file cannot be read or holds unknown keys
    or bad values (the message names each offending key).
    """
    root = Path(root)
    own = root / "patchsmith.toml"
    if own.is_file():
        return _from_file(own, ("policy",))
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return _from_file(pyproject, ("tool", "patchsmith", "policy"))
    return default_policy()


def default_policy() -> Policy:
    """The defaults: `Policy()`, which needs no validation (so no pydantic)."""
    return Policy()


def _from_file(path: Path, keys: tuple[str, ...]) -> Policy | PatchFailure:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _invalid(path, f"cannot read {path.name}: {exc}")
    return _from_text(path, keys, text)


@lru_cache(maxsize=16)
def _from_text(path: Path, keys: tuple[str, ...], text: str) -> Policy | PatchFailure:
    """The policy `text` (the file `path` as just read) holds under `keys`.

    Kept by the exact text: the file is read on every call, and only a file whose every
    character is as before skips the TOML parse and the validation (a pyproject.toml of
    a few kilobytes costs about a millisecond to parse). The results are immutable.
    """
    import tomllib  # a workspace without a policy file reads no TOML

    try:
        data: object = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return _unparsable(path, text, exc)
    where = f"{path.name} [{'.'.join(keys)}]"
    for key in keys:
        if not isinstance(data, Mapping):
            return _invalid(path, f"{where} must be a table")
        data = data.get(key, {})
    if not isinstance(data, Mapping):
        return _invalid(path, f"{where} must be a table")
    if not data:
        return default_policy()
    from pydantic import ValidationError  # loaded only for a policy file that sets something

    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(table)'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        return _invalid(path, f"invalid policy in {where}: {problems}")


# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_TOML_LINE = r"\(at line (\d+), column \d+\)"


def _unparsable(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> PatchFailure:
    """INVALID_POLICY for a file that is not TOML, with the lines around the error."""
    # Deferred: the excerpt masks secrets, which loads the secret scanner.
    from patchsmith.runtime.excerpts import masked_excerpt

    failure = replace(
        _invalid(path, f"cannot read {path.name}: {exc}"),
        hint=f"fix the TOML of {path.name} around the excerpt; docs/policy.md lists every key",
        current_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
    found = re.search(_TOML_LINE, str(exc))
    contents = text.splitlines()
    if found is None or not contents:
        return failure
    at = min(max(int(found.group(1)) - 1, 0), len(contents) - 1)
    return replace(failure, excerpt=masked_excerpt(path.name, contents, (at, at + 1)))


def _invalid(path: Path, message: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.INVALID_POLICY,
        message=message,
        file=path.name,
        hint="docs/policy.md lists every policy key",
    )
