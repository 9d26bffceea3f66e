"""Recipe fixtures: `recipe test` runs them, `recipe new` scaffolds them from one example.

A recipe folder `<id>/recipe.yaml` keeps its fixtures in `<id>/fixtures/<case>/`:
`before/` and `after/` (the recipe must turn the one into the other, exactly), or
`unchanged/` (a negative fixture: code that looks similar and must not change). Every
recipe needs at least one of each. A Java recipe with a `compiles` postcondition also
compiles each positive fixture's output with `javac` when a JDK is installed.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import tempfile
import textwrap
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import yaml

from patchsmith.codemod.generalise import generalised_rule
from patchsmith.codemod.recipe import CompilesCheck, Language
from patchsmith.codemod.registry import RECIPE_FILE, RecipeEntry
from patchsmith.codemod.report import RecipeStatus

__all__ = [
    "FixtureKind",
    "FixtureResult",
    "run_fixtures",
    "scaffold_recipe",
]

JAVAC_TIMEOUT_SECONDS = 120.0


class FixtureKind(StrEnum):
    POSITIVE = "positive"
    NEGATIVE = "negative"
    COMPILE = "compile"


@dataclass(frozen=True)
class FixtureResult:
    """One fixture's verdict; `skipped` says why a check could not run (then it did not fail)."""

    recipe_id: str
    case: str
    kind: FixtureKind
    passed: bool
    detail: str = ""
    skipped: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "recipe_id": self.recipe_id,
            "case": self.case,
            "kind": self.kind.value,
            "passed": self.passed,
            "detail": self.detail,
            "skipped": self.skipped,
        }


_NOT_FIXTURE = (".patchsmith", "__pycache__")
"""Folders a fixture tree never holds on purpose: the record, and the bytecode an installer
compiles next to the fixtures' `.py` files (pip byte-compiles everything it installs)."""


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not set(_NOT_FIXTURE) & set(p.relative_to(folder).parts)
    }


def _difference(expected: dict[str, bytes], actual: dict[str, bytes]) -> str:
    for path in sorted(set(expected) | set(actual)):
        want, got = expected.get(path), actual.get(path)
        if want == got:
            continue
        if want is None or got is None:
            return f"{path}: {'unexpected' if want is None else 'missing'} in the output"
        diff = difflib.unified_diff(
            want.decode("utf-8", "replace").splitlines(),
            got.decode("utf-8", "replace").splitlines(),
            f"expected/{path}",
            f"actual/{path}",
            lineterm="",
        )
        return "\n".join(list(diff)[:40])
    return ""


def _run_case(
    entry: RecipeEntry, source: Path, work: Path, trust: bool | None
) -> tuple[str, RecipeStatus, str]:
    """The run's errors, its status, and which files it matched by syntax (types unknown)."""
    from patchsmith.codemod.runner import run_recipe
    from patchsmith.policy import Policy

    shutil.copytree(source, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_NOT_FIXTURE))
    report = run_recipe(entry.recipe, work, apply=True, record=False, policy=Policy(), trust=trust)
    errors = "; ".join(f"{e.code.value}: {e.message}" for e in report.errors)
    syntax = "; ".join(f"{f.path}: {f.reason}" for f in report.matched_by_syntax)
    return errors, report.status, f"\n(matched by syntax: {syntax})" if syntax else ""


def run_fixtures(entry: RecipeEntry, *, trust: bool | None = None) -> list[FixtureResult]:
    """Run every fixture of `entry`; a missing positive or negative fixture is a failure too.

    A built-in recipe's fixtures ship with patchsmith, so their postconditions' programs
    run; a repository recipe's fixtures are the repository's, so they run only with
    `trust` (a fixture runs in a scratch copy the trust store cannot know).
    """
    trust = True if entry.builtin else trust
    rid = entry.recipe.recipe_id
    results: list[FixtureResult] = []
    cases = (
        sorted(p for p in entry.fixtures.iterdir() if p.is_dir()) if entry.fixtures.is_dir() else []
    )
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="patchsmith-fixture-") as tmp:
            work = Path(tmp) / "work"
            if (case / "before").is_dir() and (case / "after").is_dir():
                errors, status, syntax = _run_case(entry, case / "before", work, trust)
                diff = _difference(_tree(case / "after"), _tree(work))
                passed = not errors and not diff and status is RecipeStatus.APPLIED
                detail = errors or diff or ("" if passed else f"status {status.value}")
                detail += "" if passed else syntax
                results.append(FixtureResult(rid, case.name, FixtureKind.POSITIVE, passed, detail))
                if passed and _wants_javac(entry):
                    results.append(_javac(rid, case.name, work))
            elif (case / "unchanged").is_dir():
                errors, status, syntax = _run_case(entry, case / "unchanged", work, trust)
                diff = _difference(_tree(case / "unchanged"), _tree(work))
                passed = not errors and not diff and status is RecipeStatus.NO_CHANGE
                detail = errors or diff or ("" if passed else f"status {status.value}")
                detail += "" if passed else syntax
                results.append(FixtureResult(rid, case.name, FixtureKind.NEGATIVE, passed, detail))
    kinds = {r.kind for r in results}
    for kind in (FixtureKind.POSITIVE, FixtureKind.NEGATIVE):
        if kind not in kinds:
            results.append(
                FixtureResult(
                    rid,
                    "(none)",
                    kind,
                    False,
                    f"no {kind.value} fixture in {entry.fixtures} "
                    f"({'before/ + after/' if kind is FixtureKind.POSITIVE else 'unchanged/'})",
                )
            )
    return results


def _wants_javac(entry: RecipeEntry) -> bool:
    return entry.recipe.language is Language.JAVA and any(
        isinstance(p, CompilesCheck) for p in entry.recipe.postconditions
    )


def _javac(rid: str, case: str, work: Path) -> FixtureResult:
    javac = shutil.which("javac")
    sources = sorted(str(p) for p in work.rglob("*.java"))
    if javac is None:
        return FixtureResult(
            rid, case, FixtureKind.COMPILE, True, skipped="javac is not installed (no JDK)"
        )
    with tempfile.TemporaryDirectory(prefix="patchsmith-javac-") as classes:
        try:
            done = subprocess.run(
                [javac, "-d", classes, *sources],
                capture_output=True,
                text=True,
                timeout=JAVAC_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return FixtureResult(rid, case, FixtureKind.COMPILE, False, f"javac failed: {exc}")
    passed = done.returncode == 0
    detail = f"javac compiled {len(sources)} file(s)" if passed else done.stderr[-2000:]
    return FixtureResult(rid, case, FixtureKind.COMPILE, passed, detail)


def _changed_region(before: str, after: str) -> tuple[str, str]:
    """The lines that differ between the two texts (dedented), the whole texts when all do."""
    old, new = before.splitlines(), after.splitlines()
    opcodes = [op for op in difflib.SequenceMatcher(a=old, b=new).get_opcodes() if op[0] != "equal"]
    if not opcodes:
        return before.strip(), after.strip()
    a0, a1 = opcodes[0][1], opcodes[-1][2]
    b0, b1 = opcodes[0][3], opcodes[-1][4]
    return (
        textwrap.dedent("\n".join(old[a0:a1])).strip(),
        textwrap.dedent("\n".join(new[b0:b1])).strip(),
    )


def scaffold_recipe(
    recipe_id: str,
    language: Language,
    before: str,
    after: str,
    folder: Path,
    *,
    file_name: str | None = None,
) -> Path:
    """Write `<folder>/<recipe_id>/recipe.yaml` and its fixtures from one before/after example.

    The rule's pattern is the call that changed, its unchanged arguments as
    metavariables (`codemod.generalise`), its fix the same call after; where no single
    call holds the change, the lines of `before` that differ from `after` and the
    matching lines of `after`. The example becomes the positive fixture and its
    `after` text the negative one (migrated code must stay as it is). Returns the
    recipe file. FileExistsError when the recipe folder exists.
    """
    home = folder / recipe_id
    if home.exists():
        raise FileExistsError(str(home))
    name = file_name or f"example{language.suffixes[0]}"
    suffix = Path(name).suffix or language.suffixes[0]
    pattern, fix = generalised_rule(suffix, before, after) or _changed_region(before, after)
    recipe = {
        "recipe_id": recipe_id,
        "language": language.value,
        "summary": f"Rewrite `{pattern.splitlines()[0] if pattern else ''}` (scaffolded)",
        "operations": [
            {"type": "ast_grep_rule", "id": recipe_id, "rule": {"pattern": pattern}, "fix": fix}
        ],
        "idempotency": {"rerun_produces_no_diff": True},
    }
    for sub, text in (
        ("example/before", before),
        ("example/after", after),
        ("migrated/unchanged", after),
    ):
        target = home / "fixtures" / sub / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    path = home / RECIPE_FILE
    path.write_text(yaml.safe_dump(recipe, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
