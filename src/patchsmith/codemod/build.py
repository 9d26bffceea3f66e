"""Which verification profiles decide a recipe's `compiles` and `tests_pass`, by its language.

A condition that names a profile is decided by that profile. Otherwise by every
profile of the workspace of a deciding kind (build or typecheck for `compiles`,
test for `tests_pass`) whose tool fits the recipe's language, else by the
language's default build: `javac` over the workspace's Java sources, `go build` and
`go vet` for a Go module. When nothing decides it, the answer says what to
configure: the condition's verdict is then `error`, never a syntax check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from patchsmith.codemod.files import language_files
from patchsmith.codemod.recipe import CompilesCheck, Language, TestsPassCheck

if TYPE_CHECKING:
    from patchsmith.verify.profiles import Profile, ProfileSet

__all__ = ["Deciders", "deciding_profiles", "default_profiles", "profile_languages"]

_SCRIPT = (Language.JAVASCRIPT, Language.TYPESCRIPT, Language.TSX)
_TOOL_LANGUAGES: Mapping[str, tuple[Language, ...]] = {
    **dict.fromkeys(("javac", "ecj", "mvn", "mvnw", "gradle", "gradlew", "ant"), (Language.JAVA,)),
    **dict.fromkeys(
        (
            "mypy",
            "dmypy",
            "pyright",
            "basedpyright",
            "compileall",
            "py_compile",
            "pytype",
            "pyre",
            "pytest",
            "unittest",
            "tox",
            "nox",
        ),
        (Language.PYTHON,),
    ),
    **dict.fromkeys(
        ("tsc", "vue-tsc", "npm", "yarn", "pnpm", "node", "jest", "vitest", "bun", "deno"),
        _SCRIPT,
    ),
    "go": (Language.GO,),
    **dict.fromkeys(("cargo", "rustc"), (Language.RUST,)),
}
"""The languages a known tool checks. A profile whose tool is not listed here is the
project's own command (`make build`) and is taken to check every language."""

_CONFIG_TOOLS: Mapping[Language, frozenset[str]] = {
    Language.YAML: frozenset(),
    Language.TOML: frozenset({"cargo"}),
    Language.JSON: frozenset({"tsc", "vue-tsc", "npm", "yarn", "pnpm"}),
}
"""The known tools that read a config language's files as part of the build (Cargo.toml,
tsconfig.json and package.json); the project's own commands count too."""

_HOW: Mapping[Language, str] = {
    Language.PYTHON: 'mypy, pyright or `python -m compileall` with kind = "typecheck" or "build"',
    Language.JAVA: 'a .java source for the built-in javac, or mvn/gradle with kind = "build"',
    Language.JAVASCRIPT: 'tsc (tsconfig.json) with kind = "typecheck"',
    Language.TYPESCRIPT: 'tsc (tsconfig.json) with kind = "typecheck"',
    Language.TSX: 'tsc (tsconfig.json) with kind = "typecheck"',
    Language.GO: "a go.mod for the built-in go build and go vet",
    Language.RUST: "a Cargo.toml for the built-in cargo check",
}

JAVAC_ARGS = (
    "-d",
    "{report}",
    "-proc:none",
    "-encoding",
    "UTF-8",
    "-nowarn",
    "-Xlint:none",
    "-Xmaxerrs",
    "100000",
)
"""javac's options: classes go to the run's throwaway report path (javac makes the folder),
annotation processors never run, warnings stay out and no error is cut off."""


def tool_of(profile: Profile) -> str:
    """The tool a profile runs: `mypy` for `python -m mypy`, `tsc` for `npx tsc`."""
    argv = profile.argv
    name = PurePosixPath(argv[0].replace("\\", "/")).name.lower().removesuffix(".exe")
    rest = list(argv[1:])
    if name.startswith("python") and len(rest) > 1 and rest[0] == "-m":
        return rest[1].lower()
    if name in ("npx", "pnpx", "bunx"):
        named = [a for a in rest if not a.startswith("-")]
        return named[0].lower() if named else name
    return name


def profile_languages(profile: Profile) -> tuple[Language, ...] | None:
    """The languages `profile` checks; `None` when its tool is the project's own (any)."""
    return _TOOL_LANGUAGES.get(tool_of(profile))


def _fits(profile: Profile, language: Language) -> bool:
    languages = profile_languages(profile)
    if languages is None:
        return True
    if language in _CONFIG_TOOLS:
        return tool_of(profile) in _CONFIG_TOOLS[language]
    return language in languages


def default_profiles(language: Language, root: Path) -> dict[str, Profile]:
    """The language's default build profiles for the workspace at `root` (may be none)."""
    from patchsmith.verify.parsers import ParserName
    from patchsmith.verify.profiles import Profile, ProfileKind

    if language is Language.JAVA:
        sources = language_files(root, Language.JAVA.suffixes)
        if not sources:
            return {}
        return {
            "javac": Profile(
                argv=("javac", *JAVAC_ARGS, *sources),
                parser=ParserName.GENERIC,
                kind=ProfileKind.BUILD,
                env=("JAVA_HOME", "JDK_JAVA_OPTIONS"),
                description="javac over the workspace's Java sources, classes thrown away",
            )
        }
    if language is Language.GO and (root / "go.mod").is_file():
        return {
            name: Profile(
                argv=("go", verb, "./..."),
                parser=ParserName.GENERIC,
                kind=ProfileKind.BUILD,
                env=("GO*", "CGO_*"),
                description=f"go {verb} ./...",
            )
            for name, verb in (("go-build", "build"), ("go-vet", "vet"))
        }
    return {}


@dataclass(frozen=True)
class Deciders:
    """The profiles that decide a condition, in the set that holds them; or why none does."""

    names: tuple[str, ...]
    profile_set: ProfileSet
    problem: str = ""
    """Why nothing decides the condition (empty when `names` is not)."""
    hint: str = ""


def deciding_profiles(
    post: CompilesCheck | TestsPassCheck, language: Language, root: Path, profiles: ProfileSet
) -> Deciders:
    """The profiles that decide `post` for a recipe of `language` in the workspace at `root`."""
    from patchsmith.verify.profiles import ProfileKind, ProfileSource

    defaults = (
        {n: p for n, p in default_profiles(language, root).items() if n not in profiles.profiles}
        if isinstance(post, CompilesCheck)
        else {}
    )
    merged = replace(
        profiles,
        profiles={**profiles.profiles, **defaults},
        sources={**profiles.sources, **dict.fromkeys(defaults, ProfileSource.BUILTIN)},
    )
    if post.profile is not None:
        if merged.get(post.profile) is not None:
            return Deciders((post.profile,), merged)
        known = ", ".join(sorted(merged.profiles)) or "none"
        return Deciders(
            (),
            merged,
            f"unknown verification profile {post.profile!r} (known here: {known})",
            "name a profile `patchsmith verify --list` shows, or define it under "
            "[verify.NAME] in patchsmith.toml (docs/verify.md)",
        )
    compiles = isinstance(post, CompilesCheck)
    kinds = (ProfileKind.BUILD, ProfileKind.TYPECHECK) if compiles else (ProfileKind.TEST,)
    fitting = sorted(
        n for n, p in profiles.profiles.items() if p.kind in kinds and _fits(p, language)
    )
    chosen = fitting or sorted(defaults)
    if chosen:
        return Deciders(tuple(chosen), merged)
    what = "build or type-check" if compiles else "test"
    how = (
        _HOW.get(language, 'the command that builds the project, with kind = "build"')
        if compiles
        else f'a test command for {language.value} with kind = "test"'
    )
    return Deciders(
        (),
        merged,
        f"no {what} profile for {language.value} in this workspace",
        f"configure one under [verify.NAME] in patchsmith.toml ({how}); "
        + ("or write `parses` to check syntax only" if compiles else "docs/verify.md"),
    )
