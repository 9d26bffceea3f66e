"""Reading a repository for the selector: a change's facts found, not typed in.

`survey` walks the workspace and gathers what `select_strategy` decides from: the
files a recipe or an ast-grep rule would change and how often it matches (a dry run
in memory: nothing written, no repository program run), each file's kind (a marker
in its header makes it generated), the files the objective names, the build manifests
a version bump reaches, the generated files a regeneration rewrites, the tests of a
named source file, their sizes, and the command and verification profiles the
workspace has. The objective's words give a cue (`CUES`); the repository's facts
decide. What the caller typed in overrides what was read. Every fact comes back as a
`Reason`, so `patchsmith select` can say what it read.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from posixpath import basename, splitext
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.generated import MARKER_LINES, generated_marker
from patchsmith.pipeline.selector import (
    ChangeFacts,
    Cue,
    FileKind,
    Reason,
    Selection,
    file_kind,
    select_strategy,
)
from patchsmith.policy import matches

if TYPE_CHECKING:
    from patchsmith.codemod.recipe import Recipe
    from patchsmith.codemod.runner import RecipeSource

__all__ = ["CUES", "CUE_LINES", "MAVEN_BUMP", "MAX_FILES", "Survey", "select_in", "survey"]

CUES: tuple[tuple[Cue, tuple[str, ...]], ...] = (
    (Cue.REGENERATE, ("regenerate", "re-generate", "generate", "codegen")),
    (Cue.BUMP, ("bump", "upgrade", "update the version", "version bump")),
    (Cue.TEST, ("unit test", "regression test", "a test", "test for", "test that")),
    (Cue.RENAME, ("rename",)),
    (Cue.FIX, ("fix", "null check", "bug", "crash")),
)
"""Words of the objective and the cue they give, first row that matches wins."""

CUE_LINES: Mapping[Cue, int] = {Cue.FIX: 40, Cue.TEST: 80}
"""A hand edit's changed lines when the objective's cue says how large it is."""

MAVEN_BUMP = "maven-dependency-version"
"""The command profile that bumps one Maven dependency (commands/profiles.py)."""

MAX_FILES = 20_000
"""Files read at most (their names; the first lines of each for a generated marker)."""

_HEAD_BYTES = 2048
_MAX_READ = 2_000_000
_NAMED = re.compile(r"[\w./@-]+")
_COORDINATES = re.compile(r"\b([\w.-]+):([\w.-]+)\b")
_TO_VERSION = re.compile(r"\bto\s+v?(\d[\w.+-]*)", re.IGNORECASE)
_RENAME_KEY = re.compile(
    r"\brename\s+(?:the\s+)?(?:config(?:uration)?\s+|yaml\s+)?key\s+`?([\w.*-]+)`?"
    r"\s+to\s+`?([\w-]+)`?",
    re.IGNORECASE,
)
_SUFFIX_ONLY = re.compile(r"\*\.[\w.]+")
_WRITTEN_BY_TOOLS = frozenset({FileKind.BUILD_MANIFEST, FileKind.LOCKFILE, FileKind.GENERATED})


@dataclass(frozen=True)
class Survey:
    """The facts read from a repository, and each reason behind them."""

    facts: ChangeFacts
    reasons: tuple[Reason, ...]


def select_in(
    root: str | Path,
    objective: str | None = None,
    *,
    recipe: RecipeSource | None = None,
    given: ChangeFacts | None = None,
) -> Selection | PatchFailure:
    """`select_strategy` on the facts `survey` reads, its reasons first in the answer."""
    found = survey(root, objective, recipe=recipe, given=given)
    if isinstance(found, PatchFailure):
        return found
    return select_strategy(found.facts, read=found.reasons)


def survey(
    root: str | Path,
    objective: str | None = None,
    *,
    recipe: RecipeSource | None = None,
    given: ChangeFacts | None = None,
) -> Survey | PatchFailure:
    """Read the facts of the change `objective` describes from the workspace at `root`.

    `recipe` (an id, a recipe file or a `Recipe`) is run as a dry run in memory to
    count its matches. `given` holds facts the caller typed in: each field it sets
    replaces what was read. INVALID_TASK when `root` is not a folder; a recipe that
    cannot be found or read is its own failure (RECIPE_NOT_FOUND, INVALID_RECIPE).
    """
    base = Path(root)
    if not base.is_dir():
        return PatchFailure(
            FailureCode.INVALID_TASK,
            f"workspace {base} is not a folder",
            hint="give the repository's root folder (-C DIR)",
        )
    text = objective or ""
    reasons: list[Reason] = []
    inventory = _inventory(base, reasons)
    cue = _cue(text)
    if cue is not None:
        reasons.append(Reason("objective", f"the objective says {cue.value}"))

    files: list[str] = []
    occurrences = 1
    changed_lines: int | None = None
    recipe_id: str | None = None
    structural = False
    plan_source = recipe if recipe is not None else _rename_recipe(text, reasons)
    if plan_source is not None:
        counted = _count(plan_source, base, reasons)
        if isinstance(counted, PatchFailure):
            return counted
        recipe_id, structural, matched, occurrences, changed_lines = counted
        files.extend(matched)

    named = _named_paths(text, inventory)
    if cue is Cue.REGENERATE:
        made = [p for p, k in inventory.items() if k is FileKind.GENERATED]
        if named:
            reasons.append(Reason("objective", f"{_list(named)}: the generator's input"))
        if made:
            reasons.append(
                Reason("repository", f"{len(made)} generated file(s) to regenerate{_under(made)}")
            )
        files.extend(made)
    else:
        if named:
            reasons.append(Reason("objective", f"it names {_list(named)}"))
        files.extend(named)
    if cue is Cue.BUMP:
        files.extend(_bumped_manifests(text, base, inventory, reasons))
    if cue is Cue.TEST:
        files.extend(_tests_of(named, inventory, reasons))
    files = list(dict.fromkeys(files))
    typed = given is not None and "files" in given.model_fields_set
    if given is not None and typed:
        files = list(given.files)  # still classified and measured below
    generated = tuple(p for p in files if inventory.get(p) is FileKind.GENERATED)

    if (plan_source is None or typed) and files:
        changed_lines = _estimate(files, base, inventory, cue, reasons)
    profiles = _command_profiles(base, files, inventory, reasons)
    if cue is Cue.BUMP and MAVEN_BUMP in profiles:
        _suggest_maven(text, reasons)
    _verify_profiles(base, reasons)

    facts = ChangeFacts(
        files=tuple(files),
        changed_lines=changed_lines,
        occurrences=occurrences,
        recipe=recipe_id,
        structural_rule=structural,
        generated_files=generated,
        cue=cue,
        profiles=profiles,
    )
    if given is not None:
        facts = _override(facts, given, reasons)
    return Survey(facts, tuple(reasons))


def _inventory(root: Path, reasons: list[Reason]) -> dict[str, FileKind]:
    """Every file the recipes could read (gitignore honoured), with its kind."""
    from patchsmith.codemod.files import language_files

    paths = language_files(root, ("",))
    if len(paths) > MAX_FILES:
        reasons.append(Reason("repository", f"only the first {MAX_FILES} files were read"))
        paths = paths[:MAX_FILES]
    kinds: dict[str, FileKind] = {}
    for path in paths:
        kind = file_kind(path)
        if kind not in (FileKind.LOCKFILE, FileKind.GENERATED) and _marked(root / path):
            kind = FileKind.GENERATED
        kinds[path] = kind
    counts = Counter(kinds.values())
    summary = ", ".join(f"{n} {k.value}" for k, n in sorted(counts.items(), key=lambda i: i[0]))
    reasons.append(Reason("repository", f"{len(kinds)} file(s): {summary or 'none'}"))
    return kinds


def _marked(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return False
    if b"\0" in head:
        return False
    lines = head.decode("utf-8", errors="replace").split("\n", MARKER_LINES)
    return generated_marker("\n".join(lines[:MARKER_LINES])) is not None


def _cue(objective: str) -> Cue | None:
    lowered = objective.lower()
    for cue, words in CUES:
        if any(re.search(rf"\b{re.escape(word)}\b", lowered) for word in words):
            return cue
    return None


def _rename_recipe(objective: str, reasons: list[Reason]) -> Recipe | None:
    """`rename key a.b to c` in the objective: a config key rename recipe, in memory."""
    found = _RENAME_KEY.search(objective)
    if found is None:
        return None
    from patchsmith.codemod.recipe import ConfigKeyRename, Language, Recipe

    old, new = found.group(1), found.group(2)
    reasons.append(Reason("objective", f"it renames the key {old} to {new}"))
    return Recipe(
        recipe_id="objective-key-rename",
        language=Language.YAML,
        summary=f"rename {old} to {new}",
        operations=(ConfigKeyRename.model_validate({"from": old, "to": new}),),
    )


def _count(
    source: RecipeSource, root: Path, reasons: list[Reason]
) -> tuple[str | None, bool, list[str], int, int] | PatchFailure:
    """Run the recipe as a dry run in memory: (recipe id or None for a bare rule,
    structural, files it changes or matches, matches, changed lines)."""
    from patchsmith.codemod.recipe import AstGrepRule, Recipe
    from patchsmith.codemod.registry import find_recipe
    from patchsmith.codemod.runner import plan_recipe

    if isinstance(source, Recipe):
        recipe = source
    else:
        entry = find_recipe(source, root)
        if isinstance(entry, PatchFailure):
            return entry
        recipe = entry.recipe
    bare = all(isinstance(op, AstGrepRule) and op.fix is None for op in recipe.operations)
    # Counting needs no proof: postconditions (a build, the tests) and the idempotency
    # re-run are left out, so nothing of the repository runs.
    plan = plan_recipe(
        recipe.model_copy(update={"postconditions": ()}),
        root,
        rerun=False,
        cache=False,
        programs=False,
    )
    name = "rule" if bare else f"recipe {recipe.recipe_id}"
    if plan.errors:
        first = plan.errors[0]
        reasons.append(
            Reason("repository", f"{name} does not apply here: {first.code.value}: {first.message}")
        )
        return (None if bare else recipe.recipe_id), True, [], 0, 0
    total = sum(plan.matches.values())
    matched = sorted(plan.matches)
    lines = sum(_diff_lines(plan.originals[p], plan.changed[p]) for p in plan.changed)
    reasons.append(
        Reason(
            "repository",
            f"{name} matches {total} place(s) in {len(matched)} of {plan.files_scanned} "
            f"file(s) it reads (a dry run, nothing written)",
        )
    )
    if plan.changed:
        reasons.append(Reason("repository", f"its change: {lines} changed line(s)"))
    return (None if bare else recipe.recipe_id), True, matched, total, lines if plan.changed else 0


def _diff_lines(old: bytes, new: bytes) -> int:
    a = old.decode("utf-8", errors="replace").splitlines()
    b = new.decode("utf-8", errors="replace").splitlines()
    return sum(
        1
        for line in difflib.unified_diff(a, b, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def _named_paths(objective: str, inventory: Mapping[str, FileKind]) -> list[str]:
    """Files of the repository the objective names, by path or by a unique file name."""
    by_name: dict[str, list[str]] = {}
    for path in inventory:
        by_name.setdefault(basename(path), []).append(path)
    found: list[str] = []
    for raw in _NAMED.findall(objective):
        token = raw.rstrip(".")
        token = token[2:] if token.startswith("./") else token
        if "." not in token and "/" not in token:
            continue
        if token in inventory:
            found.append(token)
        elif len(by_name.get(token, ())) == 1:
            found.append(by_name[token][0])
    return list(dict.fromkeys(found))


def _bumped_manifests(
    objective: str, root: Path, inventory: Mapping[str, FileKind], reasons: list[Reason]
) -> list[str]:
    """The build manifests that name the dependency the objective bumps."""
    manifests = [p for p, k in inventory.items() if k is FileKind.BUILD_MANIFEST]
    coordinates = [m for m in _COORDINATES.findall(objective) if not m[0].isdigit()]
    version = _TO_VERSION.search(objective)
    if not manifests:
        reasons.append(Reason("repository", "no build manifest to bump"))
        return []
    if not coordinates:
        reasons.append(Reason("objective", "it names no group:artifact; every build manifest"))
        return manifests
    hits = []
    for path in manifests:
        text = _read(root / path)
        # `group:artifact` (Gradle, a catalog) or Maven's `<artifactId>` element
        if any(
            f"{group}:{artifact}" in text or f"<artifactId>{artifact}</artifactId>" in text
            for group, artifact in coordinates
        ):
            hits.append(path)
    names = ", ".join(f"{g}:{a}" for g, a in coordinates)
    target = f" to {version.group(1)}" if version else ""
    reasons.append(
        Reason(
            "repository",
            f"{_list(hits)} declare(s) {names} (bumped{target})"
            if hits
            else f"no build manifest declares {names}",
        )
    )
    return hits


def _suggest_maven(objective: str, reasons: list[Reason]) -> None:
    """The Maven profile's command line, when the objective names one artifact and a version."""
    coordinates = [m for m in _COORDINATES.findall(objective) if not m[0].isdigit()]
    version = _TO_VERSION.search(objective)
    if len(coordinates) == 1 and version is not None:
        group, artifact = coordinates[0]
        reasons.append(
            Reason(
                "repository",
                f"patchsmith run-command {MAVEN_BUMP} --param artifact={group}:{artifact} "
                f"--param version={version.group(1)} would make it",
            )
        )


def _tests_of(
    named: Sequence[str], inventory: Mapping[str, FileKind], reasons: list[Reason]
) -> list[str]:
    """The existing test files of each named source file (test_x.py, XTest.java, ...)."""
    tests = {basename(p): p for p, k in inventory.items() if k is FileKind.TEST}
    found: list[str] = []
    for path in named:
        if inventory.get(path) is not FileKind.SOURCE:
            continue
        stem, suffix = splitext(basename(path))
        candidates = (
            f"test_{stem}{suffix}",
            f"{stem}_test{suffix}",
            f"{stem}Test{suffix}",
            f"{stem}.test{suffix}",
            f"{stem}.spec{suffix}",
        )
        hit = [tests[c] for c in candidates if c in tests]
        reasons.append(
            Reason(
                "repository",
                f"the tests of {path}: {_list(hit)}" if hit else f"{path} has no test file yet",
            )
        )
        found.extend(hit)
    return found


def _estimate(
    files: Sequence[str],
    root: Path,
    inventory: Mapping[str, FileKind],
    cue: Cue | None,
    reasons: list[Reason],
) -> int | None:
    """At most twice the files' lines (a rewrite of all), or less when the cue sizes it."""
    if any(p not in inventory for p in files):
        return None
    sizes = {p: _read(root / p).count("\n") for p in files}
    held = sum(sizes.values())
    reasons.append(
        Reason("repository", "sizes: " + ", ".join(f"{p} {n} line(s)" for p, n in sizes.items()))
    )
    bound = 2 * held
    sized = CUE_LINES.get(cue) if cue is not None else None
    if cue is not None and sized is not None and sized < bound:
        reasons.append(Reason("objective", f"a {cue.value} changes about {sized} line(s)"))
        return sized
    reasons.append(Reason("repository", f"at most {bound} changed line(s): a rewrite of them all"))
    return bound


def _command_profiles(
    root: Path, files: Sequence[str], inventory: Mapping[str, FileKind], reasons: list[Reason]
) -> tuple[str, ...]:
    """The command profiles whose expected paths name the touched tool-written files
    (build manifests, lockfiles, generated files); a bare `*.ext` pattern does not."""
    from patchsmith.commands.profiles import load_profiles

    loaded = load_profiles(root)
    if isinstance(loaded, PatchFailure):
        reasons.append(Reason("repository", f"command profiles unreadable: {loaded.message}"))
        return ()
    written = [p for p in files if inventory.get(p, file_kind(p)) in _WRITTEN_BY_TOOLS]
    found: list[str] = []
    for name, profile in sorted(loaded.items()):
        # `*.py` says what a formatter may touch, not which files a tool generates
        expected = tuple(p for p in profile.expected_changed_paths if not _SUFFIX_ONLY.fullmatch(p))
        covered = [p for p in written if expected and matches(expected, p)]
        if covered:
            found.append(name)
            reasons.append(
                Reason("repository", f"command profile {name} may write {_list(covered)}")
            )
    return tuple(found)


def _verify_profiles(root: Path, reasons: list[Reason]) -> None:
    from patchsmith.verify.profiles import load_profiles

    loaded = load_profiles(root)
    if isinstance(loaded, PatchFailure):
        reasons.append(Reason("repository", f"verification profiles unreadable: {loaded.message}"))
        return
    names = ", ".join(f"{n} ({p.kind.value})" for n, p in sorted(loaded.profiles.items()))
    reasons.append(Reason("repository", f"verification profiles: {names or 'none'}"))


def _override(facts: ChangeFacts, given: ChangeFacts, reasons: list[Reason]) -> ChangeFacts:
    """Each field the caller set replaces the one read, and says so among the reasons."""
    update: dict[str, object] = {}
    for name in sorted(given.model_fields_set):
        value = getattr(given, name)
        update[name] = value
        shown = value.value if isinstance(value, Cue) else value
        if isinstance(shown, tuple):
            shown = ", ".join(shown) or "none"
        reasons.append(Reason("caller", f"{name}: {shown}"))
    return facts.model_copy(update=update)


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(_MAX_READ).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _list(paths: Sequence[str], most: int = 3) -> str:
    if not paths:
        return "none"
    shown = ", ".join(paths[:most])
    return shown if len(paths) <= most else f"{shown} and {len(paths) - most} more"


def _under(paths: Sequence[str]) -> str:
    common = posixpath.commonpath([str(PurePosixPath(p).parent) for p in paths])
    return f" under {common}/" if common not in ("", ".") else ""
