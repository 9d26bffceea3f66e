"""The strategy selector: which way a described change should be made, by a fixed table.

Deterministic and table-driven: `RULES` is data, read top to bottom, and the first
rule whose every criterion holds chooses the strategy. The inputs (`ChangeFacts`),
the rule that chose and a sentence saying why come back together as a `Selection`,
which the repair loop records with its run and `patchsmith select` prints. Each rule
also names the strategies a proposal may declare for such a change (`accepts`);
`strategy_check` compares a proposal's declared strategy with them (docs/strategies.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from posixpath import basename, splitext

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.lockfiles import is_lockfile
from patchsmith.model.proposal import ProposalStrategy

__all__ = [
    "RULES",
    "ChangeFacts",
    "FileKind",
    "Rule",
    "RuleCheck",
    "Selection",
    "file_kind",
    "select_strategy",
    "strategy_check",
]

S = ProposalStrategy


class FileKind(StrEnum):
    """What kind of file a path names, as far as choosing a strategy goes."""

    LOCKFILE = "lockfile"
    DOC = "doc"
    CONFIG = "config"
    SOURCE = "source"


_DOC_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".org"})
_DOC_NAMES = frozenset({"README", "CHANGELOG", "LICENSE", "NOTICE", "AUTHORS", "CONTRIBUTING"})
_CONFIG_SUFFIXES = frozenset(
    {".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".conf", ".properties", ".env"}
)
_CONFIG_NAMES = frozenset(
    {".editorconfig", ".gitignore", ".gitattributes", ".dockerignore", ".env", "Dockerfile"}
)


def file_kind(path: str) -> FileKind:
    """The kind of `path`, by its name only (lockfiles first: `package-lock.json` is not config)."""
    name = basename(path)
    if is_lockfile(path):
        return FileKind.LOCKFILE
    stem, suffix = splitext(name)
    if suffix.lower() in _DOC_SUFFIXES or name in _DOC_NAMES or stem in _DOC_NAMES:
        return FileKind.DOC
    if suffix.lower() in _CONFIG_SUFFIXES or name in _CONFIG_NAMES:
        return FileKind.CONFIG
    return FileKind.SOURCE


class ChangeFacts(BaseModel):
    """A described change: what the selector decides from (`patchsmith select` reads it as JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files: tuple[str, ...] = ()
    """Workspace-relative paths the change touches."""
    changed_lines: int | None = Field(default=None, ge=0)
    """Estimated added plus removed lines; `None` when unknown (no size rule can match)."""
    occurrences: int = Field(default=1, ge=0)
    """How many times the same edit pattern repeats across the files."""
    recipe: str | None = Field(default=None, min_length=1)
    """A codemod recipe id that makes the change (docs/codemods.md)."""
    structural_rule: StrictBool = False
    """A structural (ast-grep) rule could make the change, even without a recipe yet."""
    command: str | None = Field(default=None, min_length=1)
    """A command profile that generates the change (docs/commands.md)."""

    def kinds(self) -> tuple[FileKind, ...]:
        """The kind of each file, in order."""
        return tuple(file_kind(path) for path in self.files)


@dataclass(frozen=True)
class Rule:
    """One row of the table: criteria (each `None` means "any") and the strategy they choose.

    A rule matches when every criterion that is set holds. `accepts` lists the
    strategies a proposal may declare for a change this rule matches.
    """

    id: str
    strategy: ProposalStrategy
    accepts: frozenset[ProposalStrategy]
    summary: str
    any_file_of: frozenset[FileKind] | None = None
    generated: bool | None = None
    every_file_of: frozenset[FileKind] | None = None
    min_occurrences: int | None = None
    needs_generator: bool = False
    max_files: int | None = None
    max_changed_lines: int | None = None
    any_of: tuple[str, ...] = ()
    """Criteria of which one suffices (`any_file_of`, `generated`); all others must hold."""

    def check(self, facts: ChangeFacts) -> tuple[bool, str]:
        """Whether the rule matches `facts`, and the reason (the first criterion that failed)."""
        kinds = facts.kinds()
        results: dict[str, tuple[bool, str]] = {}
        if self.any_file_of is not None:
            hit = [p for p, k in zip(facts.files, kinds, strict=True) if k in self.any_file_of]
            results["any_file_of"] = (
                bool(hit),
                f"{hit[0]} is a {file_kind(hit[0]).value}"
                if hit
                else f"no file is a {_names(self.any_file_of)}",
            )
        if self.generated is not None:
            made = facts.command is not None
            results["generated"] = (
                made == self.generated,
                f"command profile {facts.command!r} generates it" if made else "no command named",
            )
        if self.every_file_of is not None:
            odd = [
                p for p, k in zip(facts.files, kinds, strict=True) if k not in self.every_file_of
            ]
            ok = bool(facts.files) and not odd
            why = (
                "no files named"
                if not facts.files
                else f"{odd[0]} is {file_kind(odd[0]).value}, not {_names(self.every_file_of)}"
                if odd
                else f"every file is {_names(self.every_file_of)}"
            )
            results["every_file_of"] = (ok, why)
        if self.min_occurrences is not None:
            results["min_occurrences"] = (
                facts.occurrences >= self.min_occurrences,
                f"the pattern repeats {facts.occurrences} time(s) "
                f"({'>=' if facts.occurrences >= self.min_occurrences else '<'} "
                f"{self.min_occurrences})",
            )
        if self.needs_generator:
            has = facts.recipe is not None or facts.structural_rule
            results["needs_generator"] = (
                has,
                f"recipe {facts.recipe!r}"
                if facts.recipe
                else "a structural rule is available"
                if has
                else "no recipe or structural rule",
            )
        if self.max_files is not None:
            n = len(facts.files)
            results["max_files"] = (
                n <= self.max_files,
                f"{n} file(s) ({'<=' if n <= self.max_files else '>'} {self.max_files})",
            )
        if self.max_changed_lines is not None:
            lines = facts.changed_lines
            if lines is None:
                results["max_changed_lines"] = (False, "changed lines unknown")
            else:
                fits = lines <= self.max_changed_lines
                results["max_changed_lines"] = (
                    fits,
                    f"{lines} changed line(s) ({'<=' if fits else '>'} {self.max_changed_lines})",
                )
        either = [results.pop(name) for name in self.any_of if name in results]
        if either and not any(ok for ok, _ in either):
            return False, " and ".join(why for _, why in either)
        for ok, why in results.values():
            if not ok:
                return False, why
        reasons = [why for ok, why in either if ok][:1] + [why for _, why in results.values()]
        return True, "; ".join(reasons) or "no criteria"


def _names(kinds: frozenset[FileKind]) -> str:
    return " or ".join(sorted(k.value for k in kinds))


RULES: tuple[Rule, ...] = (
    Rule(
        id="generated",
        strategy=S.BUILD_TOOL_GENERATED,
        accepts=frozenset({S.BUILD_TOOL_GENERATED, S.HYBRID}),
        summary="a lockfile is touched, or a command profile generates the change",
        any_file_of=frozenset({FileKind.LOCKFILE}),
        generated=True,
        any_of=("any_file_of", "generated"),
    ),
    Rule(
        id="repeated-pattern",
        strategy=S.AST_TRANSFORM,
        accepts=frozenset({S.AST_TRANSFORM, S.HYBRID}),
        summary="one pattern repeated at least 5 times, with a recipe or a structural rule",
        min_occurrences=5,
        needs_generator=True,
    ),
    Rule(
        id="docs",
        strategy=S.DIRECT_FILE_EDIT,
        accepts=frozenset({S.DIRECT_FILE_EDIT, S.UNIFIED_DIFF, S.HYBRID}),
        summary="every file is documentation",
        every_file_of=frozenset({FileKind.DOC}),
    ),
    Rule(
        id="small-config",
        strategy=S.DIRECT_FILE_EDIT,
        accepts=frozenset({S.DIRECT_FILE_EDIT, S.UNIFIED_DIFF, S.HYBRID}),
        summary="every file is documentation or configuration, at most 3 files and 100 lines",
        every_file_of=frozenset({FileKind.DOC, FileKind.CONFIG}),
        max_files=3,
        max_changed_lines=100,
    ),
    Rule(
        id="small-change",
        strategy=S.UNIFIED_DIFF,
        accepts=frozenset({S.UNIFIED_DIFF, S.DIRECT_FILE_EDIT, S.AST_TRANSFORM, S.HYBRID}),
        summary="at most 3 files and 400 changed lines",
        max_files=3,
        max_changed_lines=400,
    ),
    Rule(
        id="default",
        strategy=S.HYBRID,
        accepts=frozenset({S.HYBRID, S.AST_TRANSFORM}),
        summary="anything else: larger or of unknown size",
    ),
)
"""The selector's table, first match wins (docs/strategies.md shows it; a test keeps them equal)."""


@dataclass(frozen=True)
class RuleCheck:
    """One rule tried: did it match, and why (or why not)."""

    rule: str
    matched: bool
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "matched": self.matched, "reason": self.reason}


@dataclass(frozen=True)
class Selection:
    """The selector's answer: the strategy, the rule that chose it, why, and from what."""

    strategy: ProposalStrategy
    rule: str
    reason: str
    facts: ChangeFacts
    accepts: frozenset[ProposalStrategy]
    trace: tuple[RuleCheck, ...] = ()
    """Every rule tried, in table order, up to the one that matched."""

    def allows(self, declared: ProposalStrategy) -> bool:
        """True when a proposal declaring `declared` fits the table for this change."""
        return declared in self.accepts

    def to_json(self) -> dict[str, object]:
        return {
            "strategy": self.strategy.value,
            "rule": self.rule,
            "reason": self.reason,
            "accepts": sorted(s.value for s in self.accepts),
            "facts": self.facts.model_dump(mode="json"),
            "trace": [c.to_json() for c in self.trace],
        }


def select_strategy(facts: ChangeFacts, rules: Sequence[Rule] = RULES) -> Selection:
    """The first rule of `rules` that `facts` satisfy chooses; the last rule should match all."""
    trace: list[RuleCheck] = []
    for rule in rules:
        matched, why = rule.check(facts)
        trace.append(RuleCheck(rule.id, matched, why))
        if matched:
            return Selection(
                rule.strategy, rule.id, f"{rule.summary}: {why}", facts, rule.accepts, tuple(trace)
            )
    raise ValueError("no rule matched: the table must end with a rule that matches everything")


def strategy_check(declared: ProposalStrategy, selection: Selection) -> PatchFailure | None:
    """STRATEGY_MISMATCH when `declared` is not among the strategies the table accepts here."""
    if selection.allows(declared):
        return None
    accepted = ", ".join(sorted(s.value for s in selection.accepts))
    return PatchFailure(
        code=FailureCode.STRATEGY_MISMATCH,
        message=f"declared strategy {declared.value}, but the selector's table chooses "
        f"{selection.strategy.value} for this change (rule {selection.rule}: "
        f"{selection.reason}); it accepts {accepted}",
        hint=f"declare {selection.strategy.value} (or another accepted strategy), or split "
        "the change; `patchsmith select` explains the choice",
        rule="strategy_selector",
    )
