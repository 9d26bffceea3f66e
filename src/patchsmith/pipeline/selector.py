"""The strategy selector: which way a described change should be made, by a fixed table.

Deterministic and table-driven: `RULES` is data, read top to bottom, and the first
rule whose every criterion holds chooses the strategy. The inputs (`ChangeFacts`),
the rule that chose and a sentence saying why come back together as a `Selection`,
which the repair loop records with its run and `patchsmith select` prints. Each rule
also names the strategies a proposal may declare for such a change (`accepts`);
`strategy_check` compares a proposal's declared strategy with them (docs/strategies.md).
`EXPECTATIONS`, a second table, names the postconditions such a change should prove.
The facts are typed in by the caller or read from a repository (`pipeline/survey.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from posixpath import basename, splitext

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.generated import is_generated_path
from patchsmith.guards.lockfiles import is_lockfile
from patchsmith.model.proposal import PostconditionType, ProposalStrategy

__all__ = [
    "EXPECTATIONS",
    "RULES",
    "ChangeFacts",
    "Cue",
    "Expectation",
    "FileKind",
    "Reason",
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
    GENERATED = "generated"
    """Written by a tool: a generated-file path convention, or a marker in its header."""
    BUILD_MANIFEST = "build manifest"
    """What a build tool reads to resolve dependencies (`pom.xml`, `package.json`, ...)."""
    DOC = "doc"
    CONFIG = "config"
    TEST = "test"
    SOURCE = "source"


class Cue(StrEnum):
    """What the objective's words say the change is (`pipeline/survey.py` reads them)."""

    BUMP = "bump"
    REGENERATE = "regenerate"
    RENAME = "rename"
    TEST = "test"
    FIX = "fix"


_DOC_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".org"})
_DOC_NAMES = frozenset({"README", "CHANGELOG", "LICENSE", "NOTICE", "AUTHORS", "CONTRIBUTING"})
_CONFIG_SUFFIXES = frozenset(
    {".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".conf", ".properties", ".env"}
)
_CONFIG_NAMES = frozenset(
    {".editorconfig", ".gitignore", ".gitattributes", ".dockerignore", ".env", "Dockerfile"}
)
BUILD_MANIFESTS = frozenset(
    {
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "libs.versions.toml",
        "package.json",
        "Cargo.toml",
        "go.mod",
    }
)
"""File names a build tool resolves dependencies from (Gradle's version catalog included)."""
_CODE_SUFFIXES = frozenset(
    {".py", ".java", ".kt", ".go", ".rs", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".rb"}
)
_TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec", "testing"})


def _is_test(path: str) -> bool:
    parts = path.split("/")
    stem, suffix = splitext(parts[-1])
    if suffix.lower() not in _CODE_SUFFIXES:
        return False
    if any(part in _TEST_FOLDERS for part in parts[:-1]):
        return True
    return (
        stem.startswith("test_")
        or stem.endswith(("_test", "Test", "Tests", "IT"))
        or stem.endswith((".test", ".spec"))
    )


def file_kind(path: str) -> FileKind:
    """The kind of `path`, by its name only: lockfiles first (`package-lock.json` is not
    config), then generated-file conventions, build manifests, docs, config, tests."""
    name = basename(path)
    if is_lockfile(path):
        return FileKind.LOCKFILE
    if is_generated_path(path):
        return FileKind.GENERATED
    if name in BUILD_MANIFESTS:
        return FileKind.BUILD_MANIFEST
    stem, suffix = splitext(name)
    if suffix.lower() in _DOC_SUFFIXES or name in _DOC_NAMES or stem in _DOC_NAMES:
        return FileKind.DOC
    if suffix.lower() in _CONFIG_SUFFIXES or name in _CONFIG_NAMES:
        return FileKind.CONFIG
    if _is_test(path):
        return FileKind.TEST
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
    generated_files: tuple[str, ...] = ()
    """Files of `files` known to be generated by the marker in their header."""
    cue: Cue | None = None
    """What the objective's words say the change is."""
    profiles: tuple[str, ...] = ()
    """Command profiles of the workspace that may write the touched manifests, lockfiles
    or generated files (their `expected_changed_paths` cover them)."""

    def kinds(self) -> tuple[FileKind, ...]:
        """The kind of each file, in order (a marked file is generated, whatever its name)."""
        marked = set(self.generated_files)
        return tuple(
            FileKind.GENERATED if path in marked else file_kind(path) for path in self.files
        )


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
    cue_in: frozenset[Cue] | None = None
    """The objective's cue is one of these."""
    needs_profile: bool = False
    """A command profile of the workspace may write the touched files."""
    any_of: tuple[str, ...] = ()
    """Criteria of which one suffices (`any_file_of`, `generated`); all others must hold."""

    def check(self, facts: ChangeFacts) -> tuple[bool, str]:
        """Whether the rule matches `facts`, and the reason (the first criterion that failed)."""
        kinds = facts.kinds()
        results: dict[str, tuple[bool, str]] = {}
        if self.any_file_of is not None:
            hit = [(p, k) for p, k in zip(facts.files, kinds, strict=True) if k in self.any_file_of]
            results["any_file_of"] = (
                bool(hit),
                f"{hit[0][0]} is {_a(hit[0][1])}"
                if hit
                else f"no file is {' or '.join(_a(k) for k in sorted(self.any_file_of))}",
            )
        if self.generated is not None:
            made = facts.command is not None
            results["generated"] = (
                made == self.generated,
                f"command profile {facts.command!r} generates it" if made else "no command named",
            )
        if self.every_file_of is not None:
            odd = [
                (p, k)
                for p, k in zip(facts.files, kinds, strict=True)
                if k not in self.every_file_of
            ]
            ok = bool(facts.files) and not odd
            why = (
                "no files named"
                if not facts.files
                else f"{odd[0][0]} is {odd[0][1].value}, not {_names(self.every_file_of)}"
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
        if self.cue_in is not None:
            fits = facts.cue in self.cue_in
            results["cue_in"] = (
                fits,
                f"the objective says {facts.cue.value}"
                if facts.cue is not None
                else "the objective gives no cue",
            )
            if not fits and facts.cue is not None:
                results["cue_in"] = (False, f"{results['cue_in'][1]}, not {_cues(self.cue_in)}")
        if self.needs_profile:
            results["needs_profile"] = (
                bool(facts.profiles),
                f"command profile {', '.join(facts.profiles)} may write them"
                if facts.profiles
                else "no command profile may write them",
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


def _a(kind: FileKind) -> str:
    """`a lockfile`, `a build manifest`, but `generated`."""
    return kind.value if kind is FileKind.GENERATED else f"a {kind.value}"


def _cues(cues: frozenset[Cue]) -> str:
    return " or ".join(sorted(c.value for c in cues))


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
        id="regenerate",
        strategy=S.BUILD_TOOL_GENERATED,
        accepts=frozenset({S.BUILD_TOOL_GENERATED, S.HYBRID}),
        summary="a generated file is touched: its generator rewrites it",
        any_file_of=frozenset({FileKind.GENERATED}),
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
        id="manifest-bump",
        strategy=S.BUILD_TOOL_GENERATED,
        accepts=frozenset({S.BUILD_TOOL_GENERATED, S.HYBRID, S.UNIFIED_DIFF, S.DIRECT_FILE_EDIT}),
        summary="a version bump in build manifests that a command profile may write",
        every_file_of=frozenset({FileKind.BUILD_MANIFEST}),
        cue_in=frozenset({Cue.BUMP}),
        needs_profile=True,
    ),
    Rule(
        id="manifests",
        strategy=S.UNIFIED_DIFF,
        accepts=frozenset({S.UNIFIED_DIFF, S.DIRECT_FILE_EDIT, S.BUILD_TOOL_GENERATED, S.HYBRID}),
        summary="every file is a build manifest: a hand edit, or its build tool",
        every_file_of=frozenset({FileKind.BUILD_MANIFEST}),
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
        summary="every file is documentation, configuration or a build manifest, "
        "at most 3 files and 100 lines",
        every_file_of=frozenset({FileKind.DOC, FileKind.CONFIG, FileKind.BUILD_MANIFEST}),
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
class Expectation:
    """One row of the second table: a postcondition a change of this shape should prove."""

    postcondition: PostconditionType
    why: str
    any_file_of: frozenset[FileKind] = frozenset()
    cue_in: frozenset[Cue] = frozenset()

    def holds(self, facts: ChangeFacts) -> bool:
        """True when a file is of one of the kinds, or the objective's cue is one of them."""
        return bool(set(facts.kinds()) & self.any_file_of) or facts.cue in self.cue_in


P = PostconditionType

EXPECTATIONS: tuple[Expectation, ...] = (
    Expectation(
        P.TESTS_PASS,
        "a test is written or changed: it must run and pass",
        any_file_of=frozenset({FileKind.TEST}),
        cue_in=frozenset({Cue.TEST}),
    ),
    Expectation(
        P.COMPILES,
        "a build manifest or generated code changes: the project must still build",
        any_file_of=frozenset({FileKind.BUILD_MANIFEST, FileKind.GENERATED}),
        cue_in=frozenset({Cue.BUMP, Cue.REGENERATE}),
    ),
)
"""What a change should prove, each row independent (docs/strategies.md shows it)."""


@dataclass(frozen=True)
class Reason:
    """One fact the selection rests on, and where it came from."""

    source: str
    """`caller` (typed in), `repository` (read from it), `objective` (its words) or `rule`."""
    text: str

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "text": self.text}


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
    expects: tuple[PostconditionType, ...] = ()
    """Postconditions the change should prove (`EXPECTATIONS`)."""
    reasons: tuple[Reason, ...] = ()
    """The facts read or given, then the rule's criteria and the expectations, in order."""

    def allows(self, declared: ProposalStrategy) -> bool:
        """True when a proposal declaring `declared` fits the table for this change."""
        return declared in self.accepts

    def to_json(self) -> dict[str, object]:
        return {
            "strategy": self.strategy.value,
            "rule": self.rule,
            "reason": self.reason,
            "accepts": sorted(s.value for s in self.accepts),
            "expects": [p.value for p in self.expects],
            "reasons": [r.to_json() for r in self.reasons],
            "facts": self.facts.model_dump(mode="json"),
            "trace": [c.to_json() for c in self.trace],
        }


def select_strategy(
    facts: ChangeFacts,
    rules: Sequence[Rule] = RULES,
    *,
    read: Sequence[Reason] = (),
) -> Selection:
    """The first rule of `rules` that `facts` satisfy chooses; the last rule should match all.

    `read` are the reasons behind the facts themselves (what a survey of the repository
    found); the selection's `reasons` list them first, then the rule's and expectations'.
    """
    trace: list[RuleCheck] = []
    for rule in rules:
        matched, why = rule.check(facts)
        trace.append(RuleCheck(rule.id, matched, why))
        if matched:
            expected = [e for e in EXPECTATIONS if e.holds(facts)]
            reasons = (
                *read,
                Reason("rule", f"rule {rule.id} chooses {rule.strategy.value}: {why}"),
                *(Reason("rule", f"expects {e.postcondition.value}: {e.why}") for e in expected),
            )
            return Selection(
                rule.strategy,
                rule.id,
                f"{rule.summary}: {why}",
                facts,
                rule.accepts,
                tuple(trace),
                tuple(dict.fromkeys(e.postcondition for e in expected)),
                reasons,
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
