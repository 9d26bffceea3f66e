"""Run a recipe's operations, then its import changes, over a `WorkSet`, in memory.

Each operation type goes to the backend registered for it in `backend_table` (docs/codemods.md
says which and why), except ast-grep rules, which this module batches itself; all of them
see the texts the operations before them produced. Import changes are scheduled for the
files the operations changed and applied once, last, by the language's import fixer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from patchsmith.codemod.backend_table import backend_for, import_fixer
from patchsmith.codemod.backends import astgrep
from patchsmith.codemod.edits import EditGroup, apply_groups
from patchsmith.codemod.layout import keep_layout
from patchsmith.codemod.matches import SeenMatch, SyntaxFallback
from patchsmith.codemod.recipe import AstGrepRule, Language, Recipe
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import FailureCode, PatchFailure

__all__ = ["MAX_PASSES", "SeenMatch", "SyntaxFallback", "Transformed", "transform"]

MAX_PASSES = 8
"""Passes of one rule over the files whose matches nested (an outer fix first, then inner)."""


@dataclass
class Transformed:
    """What one run of the operations found: matches per file, matches left alone, failures,
    and the files a type-aware operation had to match by syntax."""

    matches: Counter[str] = field(default_factory=Counter)
    seen: list[SeenMatch] = field(default_factory=list)
    errors: list[PatchFailure] = field(default_factory=list)
    by_syntax: list[SyntaxFallback] = field(default_factory=list)
    taken: dict[str, set[str]] = field(default_factory=dict)
    """Per Java file javac attributed: classes whose simple name means another type there."""


def transform(recipe: Recipe, work: WorkSet) -> Transformed:
    """Apply every operation and the import changes to `work`; failures are collected."""
    result = Transformed()
    operations = list(recipe.operations)
    index = 0
    while index < len(operations):
        op = operations[index]
        if isinstance(op, AstGrepRule):
            # consecutive rules of one language share one ast-grep run
            batch = [op]
            while (
                index + len(batch) < len(operations)
                and isinstance(following := operations[index + len(batch)], AstGrepRule)
                and (following.language or recipe.language) == (op.language or recipe.language)
            ):
                batch.append(following)
            failure = _ast_grep(batch, recipe.language, work, result)
            if failure is not None:
                result.errors.append(_at(index, failure))
                return result
            index += len(batch)
            continue
        failure = backend_for(op)(
            op,
            work,
            result.matches,
            result.seen,
            by_syntax=result.by_syntax,
            taken=result.taken,
            import_names=recipe.imports.add,
        )
        if failure is not None:
            result.errors.append(_at(index, failure))
            return result
        index += 1
    changed = list(work.changed)
    if recipe.imports.add or recipe.imports.remove:
        failure = import_fixer(recipe.language)(recipe.imports, work, changed, taken=result.taken)
        if failure is not None:
            result.errors.append(failure)
    return result


def _at(index: int, failure: PatchFailure) -> PatchFailure:
    return PatchFailure(
        failure.code,
        f"operations[{index}]: {failure.message}",
        failure.file,
        hint=failure.hint,
        rule=failure.rule,
    )


def _ast_grep(
    rules: list[AstGrepRule], language: Language, work: WorkSet, result: Transformed
) -> PatchFailure | None:
    rule_language = rules[0].language or language
    if rule_language not in astgrep.AST_GREP_LANGUAGES:
        return PatchFailure(
            FailureCode.INVALID_RECIPE,
            f"ast-grep has no grammar for {rule_language.value}",
            hint="use config_key_rename for TOML keys",
        )
    documents = [astgrep.rule_document(rule, language) for rule in rules]
    fixes = any(rule.fix is not None for rule in rules)
    paths = [p for p in work.paths if p.lower().endswith(rule_language.suffixes)]
    for _ in range(MAX_PASSES):
        found = work.scan(documents, paths)
        if isinstance(found, PatchFailure):
            return found
        by_file: dict[str, list[EditGroup]] = {}
        for match in found:
            if work.data(match.path) is None:
                continue  # reported as skipped, with the reason
            if match.edit is None:
                reason = f"reported by rule {match.rule_id!r}, which has no fix"
                result.seen.append(SeenMatch(match.path, match.line, match.text, reason))
                result.matches[match.path] += 1
                continue
            if match.edit.replacement == match.text.encode("utf-8"):
                continue  # already in the fixed form: nothing to do, nothing to report
            result.matches[match.path] += 1
            by_file.setdefault(match.path, []).append(EditGroup((match.edit,), match.line))
        deferred_paths = []
        for path, groups in by_file.items():
            data = work.data(path)
            assert data is not None
            new, deferred = apply_groups(data, groups)
            taken = [g for g in groups if g not in deferred]
            new, refusal = keep_layout(path, data, taken, new)
            work.note_edits(path, data, [(g.start, g.end) for g in taken], refusal)
            work.set(path, new)
            if deferred:
                deferred_paths.append(path)
                result.matches[path] -= len(deferred)  # counted again on the next pass
        if not fixes or not deferred_paths:
            return None
        paths = deferred_paths
    return PatchFailure(
        FailureCode.NOT_IDEMPOTENT,
        f"rules {', '.join(r.id for r in rules)} still had overlapping matches after "
        f"{MAX_PASSES} passes",
        file=paths[0] if paths else None,
        hint="narrow the rules so that a fix does not produce new matches",
    )
