"""`patchsmith freeze RUN`: the run's net change as one diff, and a commit on a new branch."""

from __future__ import annotations

import argparse
import sys

from patchsmith.cli._output import EXIT_OK, missing_root, write_json
from patchsmith.cli.log import exit_code_for, fail
from patchsmith.errors import PatchRefused

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `freeze` subcommand."""
    parser = subparsers.add_parser(
        "freeze",
        help="write a run's net change as one diff (and a commit on a new git branch)",
        description="Compose every applied attempt of RUN into one git-format diff. In a "
        "git checkout, also commit it onto HEAD as a new branch (default patchsmith/RUN), "
        "without touching HEAD, the index or the working tree. Refused when the run "
        "changed nothing, or its files changed since.",
    )
    parser.add_argument("run_id", metavar="RUN", help="the run id (see `patchsmith log`)")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    parser.add_argument("--out", metavar="FILE", help="write the diff to FILE")
    parser.add_argument(
        "--branch", metavar="NAME", help="the new branch's name (default: patchsmith/RUN)"
    )
    parser.add_argument(
        "--no-commit",
        dest="commit",
        action="store_false",
        help="make no git commit or branch, only the diff",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """0 frozen, 1 refused, 2 for an unknown run or a bad DIR."""
    from patchsmith.pipeline.freeze import freeze

    as_json: bool = args.json
    missing = missing_root("freeze", args.root, as_json=as_json)
    if missing is not None:
        return missing
    try:
        frozen = freeze(
            args.run_id, args.root, out=args.out, branch=args.branch, commit=args.commit
        )
    except PatchRefused as refusal:
        return fail("freeze", refusal.failures, as_json=as_json, exit_code=exit_code_for(refusal))
    if as_json:
        write_json(frozen.to_json())
        return EXIT_OK
    if frozen.out is None:
        sys.stdout.write(frozen.diff)
    sys.stderr.write(
        f"patchsmith freeze: run {frozen.run_id}: {len(frozen.files)} file(s) from "
        f"{len(frozen.attempts)} attempt(s)\n"
    )
    if frozen.out is not None:
        sys.stderr.write(f"patchsmith freeze: wrote {frozen.out}\n")
    if frozen.branch is not None:
        sys.stderr.write(f"patchsmith freeze: branch {frozen.branch} at {frozen.commit}\n")
    return EXIT_OK
