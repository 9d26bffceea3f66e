"""`patchsmith select`: which strategy the selector's table chooses for a described change.

With `-C DIR`, `--objective`, or `--pattern`, the facts are read from the repository
(`pipeline/survey.py`) and the facts given as options replace what was read."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, usage_error, write_json
from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:
    from patchsmith.pipeline.selector import Selection

__all__ = ["register", "run"]

EPILOG = """\
Describe the change with options, or give the same facts as a JSON object with
--facts FILE (- for stdin): {"files": [...], "changed_lines": N, "occurrences": N,
"recipe": ID, "structural_rule": true, "command": PROFILE}. docs/strategies.md
shows the table.

Or let it read the repository: -C DIR and/or --objective TEXT (and --recipe ID|FILE,
or --pattern P --language L, whose matches are counted in a dry run): the files, their
kinds and sizes, the matches and the command profiles are read from DIR; facts given as
options replace what was read.

exit status: 0 chosen (and, with --declared, the declared strategy fits);
1 the declared strategy does not fit (STRATEGY_MISMATCH); 2 usage error.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `select` subcommand."""
    parser = subparsers.add_parser(
        "select",
        help="explain which strategy the selector chooses for a described change",
        description="Run the strategy selector's table on a described change and say "
        "which rule chose which strategy, and why the rules above it did not match.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="paths the change touches")
    parser.add_argument(
        "--lines",
        dest="changed_lines",
        type=int,
        default=None,
        metavar="N",
        help="estimated added plus removed lines (default: unknown)",
    )
    parser.add_argument(
        "--occurrences",
        type=int,
        default=None,
        metavar="N",
        help="how often the same edit pattern repeats (default 1, or counted)",
    )
    parser.add_argument(
        "--recipe",
        default=None,
        metavar="ID",
        help="a recipe that makes it (with a repository: an id or file, its matches counted)",
    )
    parser.add_argument(
        "--structural-rule", action="store_true", help="a structural (ast-grep) rule could make it"
    )
    parser.add_argument(
        "--command", default=None, metavar="PROFILE", help="a command profile generates it"
    )
    parser.add_argument(
        "--facts", default=None, metavar="FILE", help="read the facts as JSON (- for stdin)"
    )
    parser.add_argument(
        "-C",
        "--workspace",
        default=None,
        metavar="DIR",
        help="read the facts from this repository (default . with --objective or --pattern)",
    )
    parser.add_argument(
        "--objective", default=None, metavar="TEXT", help="what the change is, in words"
    )
    parser.add_argument(
        "--pattern",
        default=None,
        metavar="PATTERN",
        help="an ast-grep pattern whose matches in the repository are counted",
    )
    parser.add_argument(
        "--language",
        default=None,
        metavar="LANG",
        help="the language of --pattern (python, java, yaml, ...)",
    )
    parser.add_argument(
        "--declared",
        default=None,
        metavar="STRATEGY",
        help="also check a proposal's declared strategy against the table",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def _invalid(message: str) -> PatchFailure:
    return PatchFailure(
        FailureCode.INVALID_TASK,
        message,
        hint="`patchsmith select --help` lists the facts a description may give",
    )


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from patchsmith.model.proposal import ProposalStrategy
    from patchsmith.pipeline.selector import ChangeFacts, select_strategy, strategy_check

    reading = args.workspace is not None or args.objective is not None or args.pattern is not None
    data: object
    if args.facts is not None:
        try:
            text = (
                sys.stdin.read()
                if args.facts == "-"
                else Path(args.facts).read_text(encoding="utf-8")
            )
            data = json.loads(text)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return usage_error("select", _invalid(f"cannot read facts: {exc}"), as_json=args.json)
    elif reading:
        # only what was typed in: each of these replaces what the survey reads
        data = {
            name: value
            for name, value, given in (
                ("files", args.files, bool(args.files)),
                ("changed_lines", args.changed_lines, args.changed_lines is not None),
                ("occurrences", args.occurrences, args.occurrences is not None),
                ("structural_rule", True, args.structural_rule),
                ("command", args.command, args.command is not None),
            )
            if given
        }
    else:
        data = {
            "files": args.files,
            "changed_lines": args.changed_lines,
            "occurrences": 1 if args.occurrences is None else args.occurrences,
            "recipe": args.recipe,
            "structural_rule": args.structural_rule,
            "command": args.command,
        }
    try:
        facts = ChangeFacts.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(facts)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        return usage_error("select", _invalid(f"invalid facts: {problems}"), as_json=args.json)
    declared: ProposalStrategy | None = None
    if args.declared is not None:
        try:
            declared = ProposalStrategy(args.declared.strip().upper())
        except ValueError:
            names = ", ".join(s.value for s in ProposalStrategy)
            failure = _invalid(f"unknown strategy {args.declared!r} (one of {names})")
            return usage_error("select", failure, as_json=args.json)
    if reading:
        chosen = _read_repository(args, facts)
        if isinstance(chosen, PatchFailure):
            return usage_error("select", chosen, as_json=args.json)
        selection = chosen
    else:
        selection = select_strategy(facts)
    mismatch = strategy_check(declared, selection) if declared is not None else None
    if args.json:
        payload = selection.to_json()
        if declared is not None:
            payload["declared"] = declared.value
            payload["errors"] = [mismatch.to_json()] if mismatch is not None else []
        write_json(payload)
    else:
        out = sys.stdout
        out.write(f"{selection.strategy.value} (rule {selection.rule}): {selection.reason}\n")
        for check in selection.trace[:-1]:
            out.write(f"  not {check.rule}: {check.reason}\n")
        accepted = ", ".join(sorted(s.value for s in selection.accepts))
        out.write(f"  a proposal may declare: {accepted}\n")
        if selection.expects:
            out.write(f"  expects: {', '.join(p.value for p in selection.expects)}\n")
        for reason in selection.reasons:
            if reason.source != "rule":
                out.write(f"  read ({reason.source}): {reason.text}\n")
        if mismatch is not None:
            sys.stderr.write(f"patchsmith select: {mismatch.code.value}: {mismatch.message}\n")
    if mismatch is not None:
        return EXIT_REFUSED
    return EXIT_OK


def _read_repository(args: argparse.Namespace, given: object) -> Selection | PatchFailure:
    """The selection from the facts read in the workspace, `given` replacing what it names."""
    from patchsmith.codemod.recipe import AstGrepRule, Language, Recipe
    from patchsmith.pipeline.selector import ChangeFacts
    from patchsmith.pipeline.survey import select_in

    assert isinstance(given, ChangeFacts)
    recipe: str | Recipe | None = args.recipe
    if args.pattern is not None:
        if args.recipe is not None:
            return _invalid("give --recipe or --pattern, not both")
        try:
            language = Language(str(args.language or "").strip().lower())
        except ValueError:
            names = ", ".join(lang.value for lang in Language)
            return _invalid(f"--pattern needs --language (one of {names})")
        recipe = Recipe(
            recipe_id="pattern",
            language=language,
            summary="the --pattern of patchsmith select",
            operations=(AstGrepRule(rule={"pattern": args.pattern}),),
        )
    return select_in(args.workspace or ".", args.objective, recipe=recipe, given=given)
