"""A recipe's preconditions (on the workspace) and postconditions (on its changed texts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from patchsmith.codemod.backends.astgrep import AST_GREP_LANGUAGES, pattern_rule
from patchsmith.codemod.manifests import MANIFESTS, declared_dependencies, has_dependency
from patchsmith.codemod.recipe import (
    CompilesCheck,
    DependencyPresent,
    FileExistsCheck,
    NoReference,
    PatternPresent,
    Recipe,
    TestsPassCheck,
)
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:
    from patchsmith.verify.profiles import ProfileSet
    from patchsmith.verify.report import VerifyReport

__all__ = [
    "CheckStatus",
    "ProfileRunner",
    "RecipeCheck",
    "check_failures",
    "postconditions",
    "preconditions",
]

ProfileRunner = Callable[[Sequence[str]], "VerifyReport"]
"""Runs the named verification profiles on the workspace with the recipe's changes applied."""


class CheckStatus(StrEnum):
    """The verdict on one recipe condition."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    """Nothing was established (the profiles were not run or could not run): never a pass."""


@dataclass(frozen=True)
class RecipeCheck:
    """One condition's verdict, with the evidence for it."""

    condition: str
    status: CheckStatus
    evidence: str
    before: bool
    """True for a precondition, False for a postcondition."""

    def to_json(self) -> dict[str, object]:
        return {"condition": self.condition, "status": self.status.value, "evidence": self.evidence}


def _check(condition: str, passed: bool, evidence: str, *, before: bool) -> RecipeCheck:
    status = CheckStatus.PASSED if passed else CheckStatus.FAILED
    return RecipeCheck(condition, status, evidence, before)


def check_failures(checks: Sequence[RecipeCheck]) -> list[PatchFailure]:
    """One PRECONDITION_FAILED or POSTCONDITION_FAILED per failed check."""
    return [
        PatchFailure(
            FailureCode.PRECONDITION_FAILED if c.before else FailureCode.POSTCONDITION_FAILED,
            f"{c.condition} failed: {c.evidence}",
            rule=c.condition,
        )
        for c in checks
        if c.status is CheckStatus.FAILED
    ]


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
            results.append(
                _check(f"dependency_present {pre.name}", where is not None, evidence, before=True)
            )
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
    profiles: ProfileSet | None = None,
    run_profiles: ProfileRunner | None = None,
    not_run: str | None = None,
) -> list[RecipeCheck] | PatchFailure:
    """Each postcondition checked on the changed texts (`work` holds them).

    `compiles` and `tests_pass` are decided by verification profiles when the workspace
    has them (`profiles`, run through `run_profiles` on the changed tree): the profile
    the condition names, else every profile of a kind that decides it (build or
    typecheck for `compiles`, test for `tests_pass`). Without one, by a syntax check.
    `not_run` (why the caller runs no repository program) makes a condition that a
    profile decides an `error`: not run, never passed.
    """
    results: list[RecipeCheck] = []
    for post in recipe.postconditions:
        if isinstance(post, NoReference):
            found = _pattern_matches(recipe, post.pattern, work, list(changed))
            if isinstance(found, PatchFailure):
                return found
            where = f": {', '.join(found[:5])}" if found else ""
            evidence = f"{len(found)} match(es) left in {len(changed)} changed file(s){where}"
            results.append(
                _check(f"no_reference {post.pattern}", not found, evidence, before=False)
            )
            continue
        assert isinstance(post, CompilesCheck | TestsPassCheck)
        names = _deciding_profiles(post, profiles)
        if names and not_run is not None:
            evidence = f"not run ({', '.join(names)}): {not_run}"
            results.append(RecipeCheck(post.type, CheckStatus.ERROR, evidence, before=False))
        elif names and run_profiles is not None:
            results.append(_verified(post.type, names, run_profiles(names)))
        else:
            results.append(_syntax(post.type, post.profile, changed))
    return results


def _deciding_profiles(
    post: CompilesCheck | TestsPassCheck, profiles: ProfileSet | None
) -> list[str]:
    """The profiles that decide `post` in this workspace (none: fall back to syntax)."""
    from patchsmith.verify.profiles import ProfileKind

    if profiles is None:
        return []
    if post.profile is not None:
        return [post.profile] if profiles.get(post.profile) is not None else []
    kinds = (
        (ProfileKind.BUILD, ProfileKind.TYPECHECK)
        if isinstance(post, CompilesCheck)
        else (ProfileKind.TEST,)
    )
    return sorted(name for name, p in profiles.profiles.items() if p.kind in kinds)


def _verified(name: str, profiles: Sequence[str], report: VerifyReport) -> RecipeCheck:
    """The verdict of real profile runs: passed unless the change broke what one checks."""
    if report.errors:
        problem = "; ".join(e.message for e in report.errors)
        return _check(
            name, False, f"profiles {', '.join(profiles)} could not run: {problem}", before=False
        )
    broken = [o for o in report.outcomes if not o.passed]
    if not broken:
        done = ", ".join(o.profile for o in report.outcomes)
        return _check(name, True, f"verified by {done} ({report.level.label})", before=False)
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


def _syntax(name: str, profile: str | None, changed: Mapping[str, bytes]) -> RecipeCheck:
    from patchsmith.guards.syntax import parse_problems, python_error

    broken = []
    for path, data in changed.items():
        text = data.decode("utf-8")
        if path.endswith((".py", ".pyi")):
            if python_error(text) is not None:
                broken.append(path)
            continue
        problems = parse_problems(path, text)
        if problems is not None and problems.count:
            broken.append(path)
    how = (
        f"profile {profile!r} is not available here; checked syntax instead"
        if profile
        else "no verification profile decides it here; checked syntax"
    )
    evidence = f"{how}: " + (
        f"{len(broken)} file(s) do not parse: {', '.join(broken[:5])}"
        if broken
        else f"{len(changed)} changed file(s) parse"
    )
    return _check(name, not broken, evidence, before=False)
