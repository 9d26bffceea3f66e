"""`patchsmith judge ATTEMPT|RUN`: score an attempt or a run on the deterministic rubric."""

from __future__ import annotations

import argparse
import sys

from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, missing_root, write_json
from patchsmith.cli.log import exit_code_for, fail
from patchsmith.errors import PatchRefused

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `judge` subcommand."""
    parser = subparsers.add_parser(
        "judge",
        help="score a recorded attempt or run, criterion by criterion",
        description="Judge an attempt (id or unique prefix) or a run on a deterministic "
        "rubric: outcome, guards, verification, scope, size, drift, a test for a bug fix. "
        "The judgement is recorded in the store. Exit 0 for pass or warn, 1 for fail.",
    )
    parser.add_argument("subject", metavar="ATTEMPT|RUN", help="an attempt id or a run id")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument(
        "--run", dest="kind", action="store_const", const="run", help="read SUBJECT as a run id"
    )
    kind.add_argument(
        "--attempt",
        dest="kind",
        action="store_const",
        const="attempt",
        help="read SUBJECT as an attempt id",
    )
    parser.add_argument(
        "--no-record", dest="record", action="store_false", help="keep no record of the judgement"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """0 pass or warn, 1 fail or a store error, 2 for an unknown subject or a bad DIR."""
    from patchsmith.pipeline.judge import judge

    as_json: bool = args.json
    missing = missing_root("judge", args.root, as_json=as_json)
    if missing is not None:
        return missing
    try:
        judgement = judge(args.subject, args.root, kind=args.kind, record=args.record)
    except PatchRefused as refusal:
        return fail("judge", refusal.failures, as_json=as_json, exit_code=exit_code_for(refusal))
    code = EXIT_OK if judgement.ok else EXIT_REFUSED
    if as_json:
        write_json(judgement.to_json())
        return code
    sys.stdout.write(
        f"{judgement.kind.value} {judgement.subject}: {judgement.verdict.value.upper()} "
        f"score {judgement.score:.2f}\n"
    )
    for c in judgement.criteria:
        score = f"{c.score:.2f}" if c.applies else " n/a"
        flag = " (blocking)" if c.blocking and c.applies and c.score == 0.0 else ""
        sys.stdout.write(f"  {score}  x{c.weight:g}  {c.name:<13} {c.reason}{flag}\n")
    for note in judgement.notes:
        sys.stdout.write(f"note: {note}\n")
    if judgement.number is not None:
        sys.stderr.write(f"patchsmith judge: recorded as judgement {judgement.number}\n")
    return code
