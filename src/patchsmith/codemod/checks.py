"""A recipe's preconditions (on the workspace) and postconditions (on its changed texts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from patchsmith.codemod.backends.astgrep import AST_GREP_LANGUAGES, pattern_rule
from patchsmith.codemod.manifests import (
    MANIFESTS,
    declared_dependencies,
    has_dependency,
    maven_versions,
)
from patchsmith.codemod.recipe import (
    CompilesCheck,
    DependencyPresent,
    FileExistsCheck,
    NoReference,
    ParsesCheck,
    PatternPresent,
    Recipe,
    RerunProducesNoDiff,
    TestsPassCheck,
)
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.model.evidence import Evidence, RunSide, Verdict
from patchsmith.runtime.change import FileChange

if TYPE_CHECKING:
    from patchsmith.verify.profiles import ProfileSet
    from patchsmith.verify.report import ProfileOutcome, VerifyReport

__all__ = [
    "ProfileRunner",
    "RecipeCheck",
    "check_failures",
    "postconditions",
    "preconditions",
]

ProfileRunner = Callable[[Sequence[str], "ProfileSet"], "VerifyReport"]
"""Runs the named profiles of the set on the workspace with the recipe's changes applied."""

MAX_LISTED = 20
"""How many references left a `no_reference` verdict lists (all are counted)."""


@dataclass(frozen=True)
class RecipeCheck:
    """One condition's verdict (`error`: it could not be established), with the evidence."""

    condition: str
    status: Verdict
    evidence: str
    before: bool
    """True for a precondition, False for a postcondition."""
    hint: str | None = None
    """For an `error`: what to configure so the condition can be decided."""
    not_run: bool = False
    """An `error` because the call runs no repository program (a dry run without
    `--verify`): a dry run reports it, an apply is refused for it (`not_run_failures`)."""
    skipped: str | None = None
    """Why the condition was skipped: this repository defines no profile that can decide
    it (the one named, or any of its kind). Still an `error`, never a pass; a fleet run
    counts the repository `skipped`."""

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "condition": self.condition,
            "status": self.status.value,
            "evidence": self.evidence,
        }
        if self.skipped is not None:
            data["skipped"] = self.skipped
        return data

    @property
    def label(self) -> str:
        """The verdict as the text report shows it (`skipped` for a skipped `error`)."""
        return "skipped" if self.skipped is not None else self.status.value


def _check(condition: str, passed: bool, evidence: str, *, before: bool) -> RecipeCheck:
    status = Verdict.PASSED if passed else Verdict.FAILED
    return RecipeCheck(condition, status, evidence, before)


def _error(condition: str, evidence: str, hint: str | None = None) -> RecipeCheck:
    return RecipeCheck(condition, Verdict.ERROR, evidence, False, hint)


def check_failures(checks: Sequence[RecipeCheck]) -> list[PatchFailure]:
    """One PRECONDITION_FAILED or POSTCONDITION_FAILED per check that did not pass.

    A condition that could not be established (`error`) refuses the run as a failed
    one does: nothing is reported passed that no tool proved. The failure's `rule` is
    the condition (`compiles`), suffixed `:error` when it could not be established and
    `:skipped` when no profile here can decide it (a fleet run counts these apart).
    """
    return [
        PatchFailure(
            FailureCode.PRECONDITION_FAILED if c.before else FailureCode.POSTCONDITION_FAILED,
            (
                f"{c.condition} failed: {c.evidence}"
                if c.status is Verdict.FAILED
                else f"{c.condition} could not be established: {c.evidence}"
            ),
            hint=c.hint,
            rule=_rule(c),
        )
        for c in checks
        if c.status is not Verdict.PASSED and not c.not_run
    ]


def _rule(check: RecipeCheck) -> str:
    if check.status is Verdict.FAILED:
        return check.condition
    return f"{check.condition}:{'skipped' if check.skipped is not None else 'error'}"


def preconditions(recipe: Recipe, root: Path, work: WorkSet) -> list[RecipeCheck] | PatchFailure:
    """Each precondition checked against the workspace (pattern_present over the recipe's files)."""
    results: list[RecipeCheck] = []
    manifests: dict[str, set[str]] | None = None
    for pre in recipe.preconditions:
        if isinstance(pre, FileExistsCheck):
            relative = PurePosixPath(pre.path)
            inside = not relative.is_absolute() and ".." not in relative.parts
            exists = inside and (root / relative).is_file()
            evidence = f"{pre.path}: {'file exists' if exists else 'no such file'}"
            results.append(_check(f"file_exists {pre.path}", exists, evidence, before=True))
        elif isinstance(pre, DependencyPresent):
            if manifests is None:
                manifests, broken = declared_dependencies(root)
                if broken:
                    return PatchFailure(
                        FailureCode.PRECONDITION_FAILED,
                        f"dependency_present: cannot read {', '.join(broken)}",
                        hint="fix the manifest, or drop the precondition",
                    )
            where = has_dependency(manifests, pre.name)
            evidence = (
                f"declared in {where}"
                if where
                else f"not declared in {', '.join(manifests) or 'any manifest'} "
                f"(read: {', '.join(MANIFESTS)})"
            )
            declared = where is not None
            label = f"dependency_present {pre.name}"
            if pre.version is not None:
                label += f" {pre.version}"
                if declared:
                    declared, evidence = _version_matches(root, where, pre.name, pre.version)
            results.append(_check(label, declared, evidence, before=True))
        else:
            assert isinstance(pre, PatternPresent)
            found = _pattern_matches(recipe, pre.pattern, work, work.paths)
            if isinstance(found, PatchFailure):
                return found
            evidence = f"{len(found)} match(es) in {len(work.paths)} file(s)"
            results.append(
                _check(f"pattern_present {pre.pattern}", bool(found), evidence, before=True)
            )
    return results


def _version_matches(root: Path, manifest: str | None, name: str, version: str) -> tuple[bool, str]:
    """Whether the manifest declares `name` at `version` (pom.xml only), with the evidence."""
    if manifest != "pom.xml":
        return False, f"declared in {manifest}, whose versions are not read (pom.xml only)"
    found = maven_versions((root / "pom.xml").read_text(encoding="utf-8"), name)
    if version in found:
        return True, f"declared in pom.xml at version {version}"
    listed = ", ".join(sorted(v or "no version" for v in found)) or "no version"
    return False, f"declared in pom.xml at {listed}, not {version}"


def _pattern_matches(
    recipe: Recipe, pattern: str, work: WorkSet, paths: Sequence[str]
) -> list[str] | PatchFailure:
    """`path:line` of every match of `pattern` in `paths`."""
    if recipe.language not in AST_GREP_LANGUAGES:
        return PatchFailure(
            FailureCode.INVALID_RECIPE,
            f"patterns need an ast-grep language; {recipe.language.value} has none",
        )
    rule = pattern_rule("condition", pattern, recipe.language)
    wanted = [p for p in paths if p.lower().endswith(recipe.language.suffixes)]
    found = work.scan([rule], wanted)
    return found if isinstance(found, PatchFailure) else [f"{m.path}:{m.line}" for m in found]


def postconditions(
    recipe: Recipe,
    changed: Mapping[str, bytes],
    work: WorkSet,
    *,
    root: Path | None = None,
    scope: Sequence[str] = (),
    profiles: ProfileSet | None = None,
    run_profiles: ProfileRunner | None = None,
    not_run: str | None = None,
    rerun_clean: bool | None = None,
    originals: Mapping[str, bytes] | None = None,
) -> list[RecipeCheck] | PatchFailure:
    """Each postcondition checked on the changed texts (`work` holds them).

    `no_reference` searches every file of `scope` (the files the run reads, under
    `root`), the changed ones in their new text. `compiles` and `tests_pass` are
    decided by verification profiles (`codemod.build` picks them; `run_profiles` runs
    them on the changed tree); where none can decide, the verdict is `error`.
    `parses` is a syntax check of the changed files only.
    `not_run` (why the caller runs no repository program) makes a condition that a
    profile decides an `error`: not run, never passed. `rerun_clean` is what the
    idempotency re-run found (`None`: it did not run), for `rerun_produces_no_diff`.
    `originals` (the changed files' bytes before) lets `parses` judge a file that did
    not parse before by where its errors are (without them, every error counts).
    """
    results: list[RecipeCheck] = []
    for post in recipe.postconditions:
        if isinstance(post, NoReference):
            found = _references_left(recipe, post.pattern, changed, work, root, scope)
            if isinstance(found, PatchFailure):
                return found
            searched = len(set(scope) | set(changed))
            where = f": {', '.join(found[:MAX_LISTED])}" if found else ""
            more = f" (and {len(found) - MAX_LISTED} more)" if len(found) > MAX_LISTED else ""
            evidence = f"{len(found)} reference(s) left in {searched} file(s) in scope{where}{more}"
            results.append(
                _check(f"no_reference {post.pattern}", not found, evidence, before=False)
            )
        elif isinstance(post, ParsesCheck):
            results.append(_syntax(changed, originals))
        elif isinstance(post, RerunProducesNoDiff):
            results.append(_rerun_check(rerun_clean))
        else:
            assert isinstance(post, CompilesCheck | TestsPassCheck)
            results.append(_decided(post, recipe, root, profiles, run_profiles, not_run))
    return results


def _references_left(
    recipe: Recipe,
    pattern: str,
    changed: Mapping[str, bytes],
    work: WorkSet,
    root: Path | None,
    scope: Sequence[str],
) -> list[str] | PatchFailure:
    """`path:line` of every match of `pattern` in the changed texts and the rest of `scope`."""
    from patchsmith.codemod.backends.astgrep import scan

    found = _pattern_matches(recipe, pattern, work, list(changed))
    if isinstance(found, PatchFailure):
        return found
    rest = [p for p in scope if p not in changed and p.lower().endswith(recipe.language.suffixes)]
    if rest and root is not None:
        matches = scan([pattern_rule("condition", pattern, recipe.language)], root, rest)
        if isinstance(matches, PatchFailure):
            return matches
        found.extend(f"{m.path}:{m.line}" for m in matches)
    return sorted(set(found), key=_by_place)


def _rerun_check(clean: bool | None) -> RecipeCheck:
    """`rerun_produces_no_diff`: the idempotency re-run's answer (never assumed)."""
    name = "rerun_produces_no_diff"
    if clean is None:
        return _error(name, "the recipe was not run again on its output")
    evidence = (
        "running the recipe again on its output changed nothing"
        if clean
        else "running the recipe again on its output changed it again"
    )
    return _check(name, clean, evidence, before=False)


def _by_place(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return (path, int(line) if line.isdigit() else 0)


def _decided(
    post: CompilesCheck | TestsPassCheck,
    recipe: Recipe,
    root: Path | None,
    profiles: ProfileSet | None,
    run_profiles: ProfileRunner | None,
    not_run: str | None = None,
) -> RecipeCheck:
    """`compiles` / `tests_pass`: the deciding profiles' verdict, or `error` with what to do."""
    from patchsmith.codemod.build import deciding_profiles

    if profiles is None or run_profiles is None or root is None:
        return _error(
            post.type,
            "no verification profile was run for it",
            "run the recipe with its workspace's verification profiles (docs/verify.md)",
        )
    deciders = deciding_profiles(post, recipe.language, root, profiles)
    if not deciders.names:
        problem = deciders.problem
        return RecipeCheck(post.type, Verdict.ERROR, problem, False, deciders.hint, skipped=problem)
    if not_run is not None:
        hint = "pass --verify (and trust the repository: `patchsmith trust PATH`) to run it"
        return RecipeCheck(
            post.type,
            Verdict.ERROR,
            f"not run ({', '.join(deciders.names)}): {not_run}",
            False,
            hint,
            True,
        )
    report = run_profiles(deciders.names, deciders.profile_set)
    return _verified(post.type, deciders.names, report)


def _verdict_of(outcome: ProfileOutcome) -> Verdict:
    """One profile's verdict: its own, made stricter for a recipe's build: `error` also
    when a failed run on the changed tree left nothing its parser could read."""
    if outcome.verdict is Verdict.ERROR:
        return Verdict.ERROR
    for run in outcome.runs:
        if run.start_error is not None or run.timed_out or run.exit_code is None:
            return Verdict.ERROR
        if _unread(run, outcome.profile):
            return Verdict.ERROR
    if not outcome.passed:
        return Verdict.FAILED
    return Verdict.PASSED


def _unread(run: Evidence, profile: str) -> bool:
    """A failed run on the changed tree whose output its parser could not read: only the
    runner's stand-in for the exit status (a profile read by exit code alone names itself
    as the tool; it is decided by that status)."""
    return (
        run.side is not RunSide.BASE
        and not run.passed
        and bool(run.failures)
        and all(f.code == "exit-status" and f.tool != profile for f in run.failures)
    )


def _unproven(outcome: ProfileOutcome) -> str:
    """Why a profile's runs proved nothing, for the evidence."""
    for run in outcome.runs:
        if run.start_error is not None:
            return f"{outcome.profile} ({run.side.value}) could not start: {run.start_error}"
        if run.timed_out:
            return f"{outcome.profile} ({run.side.value}) timed out"
        if run.exit_code is None:
            return f"{outcome.profile} ({run.side.value}) did not finish"
        if _unread(run, outcome.profile):
            return (
                f"{outcome.profile} ({run.side.value}) exited {run.exit_code} "
                "with no failure its parser could read"
            )
    return f"{outcome.profile} proved nothing"


def _verified(name: str, profiles: Sequence[str], report: VerifyReport) -> RecipeCheck:
    """The verdict of real profile runs: passed only when every one ran and nothing broke."""
    if report.errors:
        problem = "; ".join(e.message for e in report.errors)
        return _error(
            name,
            f"profiles {', '.join(profiles)} could not run: {problem}",
            report.errors[0].hint,
        )
    verdicts = [(o, _verdict_of(o)) for o in report.outcomes]
    unproven = [o for o, v in verdicts if v is Verdict.ERROR]
    if unproven:
        return _error(
            name,
            "; ".join(_unproven(o) for o in unproven),
            "install the tool or fix its profile (`patchsmith verify --list`), then run again",
        )
    broken = [o for o, v in verdicts if v is Verdict.FAILED]
    if not broken:
        done = ", ".join(o.profile for o in report.outcomes)
        preexisting = sum(len(o.preexisting) for o in report.outcomes)
        before = (
            f"; {preexisting} failure(s) already there before the change" if preexisting else ""
        )
        return _check(
            name, True, f"verified by {done} ({report.level.label}){before}", before=False
        )
    parts = []
    for outcome in broken:
        first = outcome.introduced[0] if outcome.introduced else None
        detail = ""
        if first is not None:
            where = first.file or ""
            if where and first.line is not None:
                where += f":{first.line}"
            label = first.test_id or first.code or ""
            message = (first.message.strip().splitlines() or [""])[0]
            detail = ": " + " ".join(
                x for x in (where, f"[{label}]" if label else "", message) if x
            )
        if outcome.introduced:
            parts.append(
                f"{outcome.profile}: {len(outcome.introduced)} introduced failure(s){detail}"
            )
        else:
            parts.append(f"{outcome.profile} failed where the base passed (or could not finish)")
    return _check(name, False, "; ".join(parts), before=False)


def _syntax(
    changed: Mapping[str, bytes], originals: Mapping[str, bytes] | None = None
) -> RecipeCheck:
    """`parses`: no changed file has a syntax error the change made (a syntax check; it
    proves no compile). A file that did not parse before is judged as the syntax guard
    judges it (ADR 0025): by where its errors are before and after, carried through the
    edit, never by their count; it fails only for an error the change added, and the
    evidence names it as not parsed before."""
    from patchsmith.guards.syntax import syntax_failure
    from patchsmith.runtime.syntax import parse_problems, python_error

    broken: list[str] = []
    unknown: list[str] = []
    unparsed: list[str] = []
    for path, data in changed.items():
        text = data.decode("utf-8")
        old = originals.get(path) if originals is not None else None
        before = old.decode("utf-8") if old is not None else None
        if path.endswith((".py", ".pyi")):
            if python_error(text) is None:
                continue
            if before is None or python_error(before) is None:
                broken.append(path)
                continue
        else:
            problems = parse_problems(path, text)
            if problems is None:
                unknown.append(path)
                continue
            if not problems.count:
                continue
            earlier = parse_problems(path, before) if before is not None else None
            if earlier is None or not earlier.count:
                broken.append(path)
                continue
        assert old is not None and before is not None
        change = FileChange(path, Action.UPDATE, path, old, data, before, text)
        (broken if syntax_failure(change) is not None else unparsed).append(path)
    if unknown and not broken:
        return _error(
            "parses",
            f"no parser for {len(unknown)} changed file(s): {', '.join(unknown[:5])}",
            "`parses` needs a language the syntax guard reads; use `compiles` for the others",
        )
    note = (
        f"; {len(unparsed)} did not parse before the change and it added no error there: "
        f"{', '.join(unparsed[:5])}"
        if unparsed
        else ""
    )
    evidence = (
        f"{len(broken)} changed file(s) do not parse: {', '.join(broken[:5])}{note}"
        if broken
        else f"{len(changed) - len(unparsed)} changed file(s) parse (syntax only){note}"
    )
    return _check("parses", not broken, evidence, before=False)
