"""`patchsmith recipe list|show|test|run|new`: codemod recipes from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patchsmith.cli._consent import add_trust_option, add_verify_option, trust_of, verify_of
from patchsmith.cli._output import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    missing_root,
    print_failures,
    usage_error,
    write_json,
)
from patchsmith.cli.apply import add_record_option
from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:
    from patchsmith.codemod.runner import Progress

__all__ = ["register"]

PROGRESS_AFTER_SECONDS = 1.0
"""A run shorter than this shows no progress bar."""


class _Intermixed(argparse.ArgumentParser):
    """A parser whose options may come anywhere among its positionals:
    `recipe run ID --no-diff src/**` reads `src/**` as a path, not as an unknown word."""

    _mixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._mixing:  # the intermixed parse calls back here, twice
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the `recipe` subcommand and its own subcommands."""
    parser = subparsers.add_parser(
        "recipe",
        help="list, show, test, run or scaffold codemod recipes",
        description="Codemod recipes: deterministic changes as data (docs/codemods.md).",
    )
    commands = parser.add_subparsers(
        dest="recipe_command", metavar="ACTION", parser_class=_Intermixed
    )

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("-C", dest="root", default=".", metavar="DIR", help="workspace root")
        sub.add_argument(
            "--recipes",
            action="append",
            default=[],
            metavar="DIR",
            help="another folder of recipes (searched first; may repeat)",
        )
        sub.add_argument("--json", action="store_true", help="print one JSON object")

    listing = commands.add_parser("list", help="list the recipes found")
    common(listing)
    listing.set_defaults(func=_list)

    show = commands.add_parser("show", help="print a recipe")
    show.add_argument("recipe", help="a recipe id or a recipe file")
    common(show)
    show.set_defaults(func=_show)

    test = commands.add_parser("test", help="run recipes' before/after and negative fixtures")
    test.add_argument("recipe", nargs="*", help="recipe ids (default: every recipe)")
    common(test)
    add_trust_option(test)
    test.set_defaults(func=_test)

    run = commands.add_parser(
        "run",
        help="run a recipe (a dry run unless --apply)",
        description="Run a recipe over DIR. Without --apply nothing is written: the report "
        "shows what would change. With --apply the change is committed all or nothing "
        "through the workspace's guards, and refused if a second run would change it again. "
        "Exit status: 0 done (or nothing to do); 1 refused, nothing written; 2 usage error.",
    )
    run.add_argument("recipe", help="a recipe id or a recipe file")
    run.add_argument("paths", nargs="*", help="narrow the scope (gitignore-style patterns)")
    run.add_argument("--apply", action="store_true", help="write the changes")
    add_verify_option(
        run,
        "run the profiles of compiles/tests_pass postconditions on a dry run too "
        "(an apply runs them)",
    )
    add_trust_option(run)
    run.add_argument(
        "--no-diff", action="store_true", help="leave the diffs out of the text report"
    )
    add_record_option(run)
    common(run)
    run.set_defaults(func=_run)

    new = commands.add_parser(
        "new",
        help="scaffold a recipe and its fixtures from a before/after example",
        description="Write DIR/.patchsmith/recipes/ID/recipe.yaml with an ast-grep rule made "
        "from the lines that differ between BEFORE and AFTER, the example as its positive "
        "fixture and AFTER as its negative one; then run its fixtures.",
    )
    new.add_argument("recipe_id", metavar="ID")
    new.add_argument("--before", required=True, type=Path, help="a file before the change")
    new.add_argument("--after", required=True, type=Path, help="the same file after it")
    new.add_argument("--language", required=True, help="python, java, javascript, ...")
    new.add_argument(
        "--into", type=Path, help="the recipes folder (default: DIR/.patchsmith/recipes)"
    )
    common(new)
    new.set_defaults(func=_new)

    parser.set_defaults(func=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _list(args: argparse.Namespace) -> int:
    from patchsmith.codemod.registry import list_recipes

    entries, failures = list_recipes(Path(args.root), args.recipes)
    if args.json:
        write_json(
            {
                "recipes": [
                    {
                        "recipe_id": e.recipe.recipe_id,
                        "language": e.recipe.language.value,
                        "summary": e.recipe.summary,
                        "builtin": e.builtin,
                        "source": str(e.source),
                    }
                    for e in entries
                ],
                "errors": [f.to_json() for f in failures],
            }
        )
    else:
        width = max((len(e.recipe.recipe_id) for e in entries), default=0)
        for e in entries:
            origin = "built-in" if e.builtin else str(e.source)
            sys.stdout.write(
                f"{e.recipe.recipe_id:<{width}}  {e.recipe.language.value:<10}  "
                f"{e.recipe.summary}  [{origin}]\n"
            )
        print_failures("recipe list", failures)
    return EXIT_REFUSED if failures else EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from patchsmith.codemod.registry import find_recipe

    entry = find_recipe(args.recipe, Path(args.root), args.recipes)
    if isinstance(entry, PatchFailure):
        return usage_error("recipe show", entry, as_json=args.json)
    if args.json:
        write_json(
            {
                "recipe": entry.recipe.model_dump(mode="json", by_alias=True),
                "source": str(entry.source),
            }
        )
    else:
        sys.stdout.write(entry.text if entry.text.endswith("\n") else entry.text + "\n")
    return EXIT_OK


def _test(args: argparse.Namespace) -> int:
    from patchsmith.codemod.fixtures import run_fixtures
    from patchsmith.codemod.registry import find_recipe, list_recipes

    if args.recipe:
        entries = []
        for name in args.recipe:
            entry = find_recipe(name, Path(args.root), args.recipes)
            if isinstance(entry, PatchFailure):
                return usage_error("recipe test", entry, as_json=args.json)
            entries.append(entry)
        failures: list[PatchFailure] = []
    else:
        entries, failures = list_recipes(Path(args.root), args.recipes)
    results = [r for entry in entries for r in run_fixtures(entry, trust=trust_of(args))]
    failed = [r for r in results if not r.passed]
    if args.json:
        write_json(
            {
                "passed": len(results) - len(failed),
                "failed": len(failed),
                "results": [r.to_json() for r in results],
                "errors": [f.to_json() for f in failures],
            }
        )
    else:
        for r in results:
            verdict = "skipped" if r.skipped else ("ok" if r.passed else "FAILED")
            sys.stdout.write(f"{verdict:<7}  {r.recipe_id}  {r.case} ({r.kind.value})")
            note = r.skipped or (r.detail if not r.passed else "")
            sys.stdout.write(f": {note}\n" if note and "\n" not in note else "\n")
            if note and "\n" in note:
                sys.stdout.write("".join(f"    {line}\n" for line in note.splitlines()))
        print_failures("recipe test", failures)
        sys.stdout.write(f"{len(results) - len(failed)} passed, {len(failed)} failed\n")
    return EXIT_REFUSED if failed or failures else EXIT_OK


class _Bar:
    """A rich progress bar on stderr, shown only once a run has taken a second."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, step: str, done: int, total: int) -> None:
        if self.progress is None:
            if time.monotonic() - self.started < PROGRESS_AFTER_SECONDS or not sys.stderr.isatty():
                return
            from rich.console import Console
            from rich.progress import Progress

            self.progress = Progress(console=Console(stderr=True), transient=True)
            self.progress.start()
            self.task = self.progress.add_task(step, total=total)
        self.progress.update(self.task, description=step, completed=done, total=total)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _run(args: argparse.Namespace) -> int:
    from patchsmith.codemod.runner import run_recipe

    missing = missing_root("recipe run", args.root, as_json=args.json)
    if missing is not None:
        return missing
    bar = _Bar()
    progress: Progress = bar
    try:
        report = run_recipe(
            args.recipe,
            args.root,
            apply=args.apply,
            paths=args.paths,
            record=args.record,
            recipe_dirs=args.recipes,
            progress=progress,
            verify=verify_of(args),
            trust=trust_of(args),
        )
    finally:
        bar.close()
    if report.errors and any(e.code is FailureCode.RECIPE_NOT_FOUND for e in report.errors):
        return usage_error("recipe run", report.errors[0], as_json=args.json)
    if args.json:
        write_json(report.to_json())
    else:
        sys.stdout.write(report.to_text(diffs=not args.no_diff))
    return EXIT_OK if report.ok else EXIT_REFUSED


def _new(args: argparse.Namespace) -> int:
    from patchsmith.codemod.fixtures import run_fixtures, scaffold_recipe
    from patchsmith.codemod.recipe import Language
    from patchsmith.codemod.registry import PROJECT_DIR, load_recipe_file

    try:
        language = Language(args.language)
    except ValueError:
        failure = PatchFailure(
            FailureCode.INVALID_RECIPE,
            f"unknown language {args.language!r}",
            hint="one of: " + ", ".join(lang.value for lang in Language),
        )
        return usage_error("recipe new", failure, as_json=args.json)
    try:
        before = args.before.read_text(encoding="utf-8")
        after = args.after.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        failure = PatchFailure(FailureCode.FILE_NOT_FOUND, f"cannot read the example: {exc}")
        return usage_error("recipe new", failure, as_json=args.json)
    folder = args.into or Path(args.root) / PROJECT_DIR
    try:
        path = scaffold_recipe(
            args.recipe_id, language, before, after, folder, file_name=args.before.name
        )
    except FileExistsError as exc:
        failure = PatchFailure(
            FailureCode.FILE_ALREADY_EXISTS,
            f"{exc} exists",
            hint="choose another id, or remove the folder first",
        )
        return usage_error("recipe new", failure, as_json=args.json)
    except ValueError as exc:
        failure = PatchFailure(FailureCode.INVALID_RECIPE, str(exc))
        return usage_error("recipe new", failure, as_json=args.json)
    entry = load_recipe_file(path)
    if isinstance(entry, PatchFailure):
        return usage_error("recipe new", entry, as_json=args.json)
    results = run_fixtures(entry, trust=trust_of(args))
    failed = [r for r in results if not r.passed]
    if args.json:
        write_json({"recipe": str(path), "results": [r.to_json() for r in results]})
    else:
        sys.stdout.write(f"wrote {path}\n")
        for r in results:
            sys.stdout.write(f"  {'ok' if r.passed else 'FAILED'}  {r.case} ({r.kind.value})\n")
    return EXIT_REFUSED if failed else EXIT_OK
