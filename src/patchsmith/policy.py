"""`Policy`: the workspace's rules for what a change may touch and how big it may be.

Read from `patchsmith.toml` (table `[policy]`), else from `pyproject.toml`
(table `[tool.patchsmith.policy]`), else the defaults, which refuse no ordinary edit.
A proposal can narrow the policy (more forbidden paths, lower budgets) but never
loosen it: `Policy.tightened_by` ignores loosening attempts and `loosening_attempts`
names them, so they can be reported.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

import pathspec
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.proposal import DiffMaxFiles, DiffMaxLines, PatchProposal

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
    "load_policy",
    "matches",
]

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
"""Larger than any hand-written source file, small enough to stop a runaway write."""


class GuardSwitches(BaseModel):
    """Which guards run; every guard is on unless switched off here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    write_scope: StrictBool = True
    forbidden_paths: StrictBool = True
    policy_files: StrictBool = True
    generated_file: StrictBool = True
    lockfile: StrictBool = True
    binary_content: StrictBool = True
    secrets: StrictBool = True
    empty_write: StrictBool = True
    placeholders: StrictBool = True
    truncated_write: StrictBool = True
    whole_file_removal: StrictBool = True
    file_size: StrictBool = True
    max_files: StrictBool = True
    max_changed_lines: StrictBool = True
    hunks_outside_expected: StrictBool = True
    syntax: StrictBool = True
    review: StrictBool = True
    dependencies: StrictBool = True
    licence_header: StrictBool = True
    ownership: StrictBool = True
    hard_links: StrictBool = True
    read_only: StrictBool = True


class ReviewPolicy(BaseModel):
    """Thresholds of the review guard (`[policy.review]`); `None` means no limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_changed_lines: int = Field(default=40, ge=0)
    """A file diff this large is reviewed (files with declared target regions always are)."""
    region_margin: int = Field(default=3, ge=0)
    """Lines around a declared target region that still count as inside it."""
    max_unrelated_hunks: int | None = Field(default=0, ge=0)
    """Hunks outside the proposal's declared `target_regions` (only for files it declares)."""
    max_formatting_hunks: int | None = Field(default=None, ge=0)
    """Hunks that change only whitespace or line wrapping."""
    max_lost_comments: int | None = Field(default=None, ge=0)
    """Comment lines whose text is gone from the new file."""
    allow_import_reorder: StrictBool = True
    """False: refuse a change that reorders the imports it keeps."""


class DependencyMode(StrEnum):
    """What the dependency guard does with a dependency change nobody allowed."""

    AUTO = "auto"
    """Refuse it in a proposal (which can declare it), report it in a plain apply."""
    REFUSE = "refuse"
    REPORT = "report"


class DependencyPolicy(BaseModel):
    """What the dependency guard lets through (`[policy.dependencies]`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: DependencyMode = DependencyMode.AUTO

    allow_add: StrictBool = False
    allow_remove: StrictBool = False
    allow_version_change: StrictBool = False
    allowed: tuple[str, ...] = ()
    """Dependency names any change may add, remove or re-version."""


class LicencePolicy(BaseModel):
    """Licence headers (`[policy.licence]`): kept where present, required on new files if set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    marker: str = "SPDX-License-Identifier"
    """Text whose presence in a file's first `header_lines` lines makes it a licence header."""
    header_lines: int = Field(default=20, ge=1)
    require_on_new_files: tuple[str, ...] = ()
    """Gitignore-style patterns of new files that must carry the marker (empty: none)."""


class OwnershipMode(StrEnum):
    """What the ownership guard does with a change to paths owned by others."""

    REFUSE = "refuse"
    FLAG = "flag"


class OwnershipPolicy(BaseModel):
    """CODEOWNERS checks (`[policy.ownership]`); off until `owner` is set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    owner: tuple[str, ...] = ()
    """The owners (`@user`, `@org/team`, e-mail) this workspace's changes act for."""
    mode: OwnershipMode = OwnershipMode.REFUSE
    codeowners: tuple[str, ...] = ("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS")
    """Where to look for the CODEOWNERS file, first found wins (as GitHub does)."""


class Policy(BaseModel):
    """Write scope, forbidden paths, budgets and guard switches (all patterns gitignore-style)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    include: tuple[str, ...] = ()
    """Paths a change may write; empty means the whole workspace."""
    exclude: tuple[str, ...] = ()
    """Paths taken out of the write scope (OUT_OF_SCOPE)."""
    forbidden: tuple[str, ...] = ()
    """Paths no change may touch, whatever the scope says (FORBIDDEN_PATH)."""
    max_files: int | None = Field(default=None, ge=0)
    max_changed_lines: int | None = Field(default=None, ge=0)
    """Added plus removed lines over the whole change."""
    max_hunks_outside_expected: int | None = Field(default=None, ge=0)
    """Hunks allowed in files outside the proposal's `expected_files`; unset means 0
    (a proposal's declared files are a boundary), switch the guard off to allow any."""
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, ge=1)
    guards: GuardSwitches = GuardSwitches()
    review: ReviewPolicy = ReviewPolicy()
    dependencies: DependencyPolicy = DependencyPolicy()
    licence: LicencePolicy = LicencePolicy()
    ownership: OwnershipPolicy = OwnershipPolicy()
    record: StrictBool = True
    """Keep an audit record of each run in `.patchsmith/`."""

    @field_validator("include", "exclude", "forbidden")
    @classmethod
    def _patterns_compile(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                _spec((pattern,))
            except ValueError as exc:
                raise ValueError(f"bad pattern {pattern!r}: {exc}") from exc
        return patterns

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
        forbidden = tuple(dict.fromkeys((*self.forbidden, *proposal.forbidden_files)))
        max_files = _lowest(
            self.max_files,
            (p.value for p in proposal.expected_postconditions if isinstance(p, DiffMaxFiles)),
        )
        max_lines = _lowest(
            self.max_changed_lines,
            (p.value for p in proposal.expected_postconditions if isinstance(p, DiffMaxLines)),
        )
        return self.model_copy(
            update={"forbidden": forbidden, "max_files": max_files, "max_changed_lines": max_lines}
        )

    def loosening_attempts(self, proposal: PatchProposal) -> tuple[str, ...]:
        """What in the proposal would loosen this policy (and is therefore ignored)."""
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


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    # compiled once per distinct pattern list: policies are immutable, so this is pure
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def matches(patterns: Iterable[str], path: str) -> bool:
    """True when the POSIX relative `path` matches any gitignore-style pattern."""
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
    return Policy()


def _from_file(path: Path, keys: tuple[str, ...]) -> Policy | PatchFailure:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _invalid(path, f"cannot read {path.name}: {exc}")
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
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(table)'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        return _invalid(path, f"invalid policy in {where}: {problems}")


_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _unparsable(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> PatchFailure:
    """INVALID_POLICY for a file that is not TOML, with the lines around the error."""
    # Deferred: the excerpt masks secrets, which loads the secret scanner.
    from patchsmith.runtime.excerpts import masked_excerpt

    failure = replace(
        _invalid(path, f"cannot read {path.name}: {exc}"),
        hint=f"fix the TOML of {path.name} around the excerpt; docs/policy.md lists every key",
        current_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
    found = _TOML_LINE.search(str(exc))
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
