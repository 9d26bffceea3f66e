"""A recipe's preconditions (on the workspace) and postconditions (on its changed texts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

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

__all__ = ["CheckStatus", "RecipeCheck", "check_failures", "postconditions", "preconditions"]


class CheckStatus(StrEnum):
    """The verdict on one recipe condition."""

    PASSED = "passed"
    FAILED = "failed"


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
    recipe: Recipe, changed: Mapping[str, bytes], work: WorkSet
) -> list[RecipeCheck] | PatchFailure:
    """Each postcondition checked on the changed texts (`work` holds them)."""
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
        else:
            assert isinstance(post, CompilesCheck | TestsPassCheck)
            results.append(_syntax(post.type, post.profile, changed))
    return results


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
        else "no verification profile named; checked syntax"
    )
    evidence = f"{how}: " + (
        f"{len(broken)} file(s) do not parse: {', '.join(broken[:5])}"
        if broken
        else f"{len(changed)} changed file(s) parse"
    )
    return _check(name, not broken, evidence, before=False)
