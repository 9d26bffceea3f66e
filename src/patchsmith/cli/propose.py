"""`patchsmith propose`: apply a `PatchProposal` (JSON or YAML) to a directory, all or nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchsmith.cli._consent import add_trust_option, add_verify_option, trust_of, verify_of
from patchsmith.cli._output import EXIT_USAGE, missing_root
from patchsmith.cli.apply import add_metadata_options, add_record_option, policy_for, print_report

__all__ = ["register", "run"]

EPILOG = """\
The proposal is a JSON or YAML object; `patchsmith schema` prints its JSON Schema.
Operations of type ast_transform run a recipe; command operations run an allow-listed
profile on a scratch copy (see `patchsmith run-command --list`).

exit status: 0 applied (or would be, with --check), or already applied;
1 refused, nothing changed (also when an expected TESTS_PASS/COMPILES could not be
established: POSTCONDITION_UNVERIFIED, VERIFICATION_ERROR; --allow-unverified lets it
through with a note); 2 usage error (e.g. FILE cannot be read).
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `propose` subcommand."""
    parser = subparsers.add_parser(
        "propose",
        help="apply a PatchProposal (JSON or YAML) with its checks and guards",
        description="Check the proposal's preconditions, stage every operation, run the "
        "policy's guards and the proposal's postconditions, then write everything or nothing.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("proposal", metavar="FILE", help="a .json or .yaml file, or - for stdin")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    parser.add_argument(
        "--check", action="store_true", help="dry run: check and print the diff, write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_verify_option(
        parser,
        "run the verification plan (or the one unplanned = auto makes) on a --check too",
    )
    add_trust_option(parser)
    parser.add_argument(
        "--allow-unverified",
        action="store_true",
        help="apply even when an expected TESTS_PASS/COMPILES or the strategy's minimum "
        "evidence could not be established (a note says so) instead of refusing",
    )
    add_record_option(parser)
    add_metadata_options(parser)
    parser.set_defaults(func=run)


def _read(name: str) -> str | None:
    try:
        if name == "-":
            return sys.stdin.read()
        return Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        sys.stderr.write(f"patchsmith propose: cannot read {name}: {reason}\n")
        return None


def run(args: argparse.Namespace) -> int:
    from patchsmith.attempt.propose import propose

    bad_root = missing_root("propose", args.root, as_json=args.json)
    if bad_root is not None:
        return bad_root
    text = _read(args.proposal)
    if text is None:
        return EXIT_USAGE
    # Passed as text, never as a path: the file was named on the command line, and its
    # content must not be mistaken for another path.
    report = propose(
        _as_text(text),
        args.root,
        check=args.check,
        record=args.record,
        policy=policy_for(args),
        verify=verify_of(args),
        trust=trust_of(args),
        allow_unverified=args.allow_unverified,
    )
    return print_report("propose", report, as_json=args.json)


def _as_text(text: str) -> str:
    # `load_proposal` reads a one-line str as a path; a one-line JSON object starts with
    # "{" and is read as text, and YAML of one line cannot be a proposal anyway.
    return text if "\n" in text or text.lstrip().startswith(("{", "[")) else text + "\n"
