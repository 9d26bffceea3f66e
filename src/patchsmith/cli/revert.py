"""`patchsmith revert ID`: undo an applied attempt whose files are still as it left them."""

from __future__ import annotations

import argparse
import sys

from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, missing_root, write_json
from patchsmith.cli.apply import add_metadata_options, add_record_option, policy_for
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `revert` subcommand."""
    parser = subparsers.add_parser(
        "revert",
        help="undo an applied attempt (when its files are unchanged since)",
        description="Undo the applied attempt ID: every file it touched gets back the exact "
        "bytes it had before, in one atomic, guarded, recorded change. Refused, with the "
        "diff of what changed, when a file is no longer as the attempt left it; reverting "
        "twice answers already reverted.",
    )
    parser.add_argument("id", metavar="ID", help="an attempt id, or a unique prefix of one")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    parser.add_argument(
        "--check", action="store_true", help="dry run: print the diff, write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_record_option(parser)
    add_metadata_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """0 reverted (or already reverted), 1 refused, 2 for an unknown id or a bad DIR."""
    from patchsmith.pipeline.revert import revert

    as_json: bool = args.json
    missing = missing_root("revert", args.root, as_json=as_json)
    if missing is not None:
        return missing
    report = revert(
        args.id, args.root, check=args.check, record=args.record, policy=policy_for(args)
    )
    code = EXIT_OK if report.ok else EXIT_REFUSED
    if any(e.code is FailureCode.RECORD_NOT_FOUND for e in report.errors):
        code = EXIT_USAGE
    if as_json:
        write_json(report.to_json())
        return code
    for note in report.notes:
        sys.stdout.write(f"note: {note}\n")
    if report.errors:
        sys.stderr.write(f"patchsmith revert: {report.feedback()}\n")
    if report.check and report.diff:
        sys.stdout.write(report.diff)
    if report.status is ApplyStatus.ALREADY_APPLIED:
        sys.stdout.write("already reverted: nothing to do\n")
    elif report.ok:
        verb = "would revert" if report.check else "reverted"
        sys.stdout.write(f"{verb}: {len(report.files)} file(s)\n")
    if report.attempt_id is not None:
        sys.stderr.write(f"patchsmith revert: recorded as {report.attempt_id}\n")
    return code
