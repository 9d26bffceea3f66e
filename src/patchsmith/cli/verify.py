"""`patchsmith verify`: run verification profiles and report only what the change broke.

Exit 0 only when every profile ran to a result and none found anything the change
broke, 1 when one did, 3 when a profile established nothing (verdict `error`: the tool
is missing, exited with a code that is not a result, timed out or crashed), 2 for a
usage error (an unknown or misspelled profile, a bad config, a missing directory).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from patchsmith.cli._consent import add_trust_option, trust_of
from patchsmith.cli._output import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNVERIFIED,
    EXIT_USAGE,
    missing_root,
    print_failures,
    write_json,
)
from patchsmith.errors import PatchFailure
from patchsmith.model.evidence import Verdict

if TYPE_CHECKING:
    from patchsmith.verify.profiles import ProfileSet

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `verify` subcommand."""
    parser = subparsers.add_parser(
        "verify",
        help="run verification profiles; report introduced, fixed and pre-existing failures",
        description="Run verification profiles on the workspace and on its base revision, "
        "and report only the failures the change introduced.",
    )
    parser.add_argument("profiles", nargs="*", metavar="PROFILE", help="profiles to run (all)")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="the workspace root")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--list", action="store_true", help="list the profiles and exit")
    parser.add_argument(
        "--base",
        default="HEAD",
        metavar="REV",
        help="git revision to compare with (default HEAD; its runs are cached)",
    )
    parser.add_argument("--no-base", action="store_true", help="no base run: every failure counts")
    parser.add_argument(
        "--full",
        action="store_true",
        help="after the targeted tests, run the whole test profile too",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=10,
        metavar="N",
        help="introduced failures shown per profile (default 10)",
    )
    parser.add_argument(
        "--output", action="store_true", help="with --json, include each run's output"
    )
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="run the changed side in the workspace itself, not in a private copy "
        "(its tools' writes then land there)",
    )
    add_trust_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the profiles (or list them) and print the report."""
    from patchsmith.verify import load_profiles, verify

    missing = missing_root("verify", args.root, as_json=args.json)
    if missing is not None:
        return missing
    loaded = load_profiles(args.root)
    if isinstance(loaded, PatchFailure):
        return _usage(loaded, as_json=args.json)
    if args.list:
        return _list(loaded, as_json=args.json)
    top = max(args.top, 0)
    report = verify(
        args.root,
        args.profiles,
        base=None if args.no_base else args.base,
        full=args.full,
        top=top,
        profile_set=loaded,
        trust=trust_of(args),
        in_copy=not args.in_place,
    )
    if report.errors:
        return _usage(report.errors[0], as_json=args.json)
    if args.json:
        write_json(report.to_json(top=top, output=args.output))
    else:
        sys.stdout.write(report.summary(top=top) + "\n")
    return _EXIT[report.status]


_EXIT = {Verdict.PASSED: EXIT_OK, Verdict.FAILED: EXIT_REFUSED, Verdict.ERROR: EXIT_UNVERIFIED}


def _usage(failure: PatchFailure, *, as_json: bool) -> int:
    if as_json:
        write_json({"status": "error", "errors": [failure.to_json()]})
    else:
        print_failures("verify", [failure], excerpts=False)
    return EXIT_USAGE


def _list(loaded: ProfileSet, *, as_json: bool) -> int:
    rows = [
        {
            "name": name,
            "source": loaded.sources[name].value,
            "kind": profile.kind.value,
            "parser": profile.parser.value,
            "targeted": profile.targeted,
            "argv": list(profile.argv),
            "cwd": profile.cwd,
            "timeout_seconds": profile.timeout_seconds,
            "description": profile.description,
        }
        for name, profile in sorted(loaded.profiles.items())
    ]
    if as_json:
        levels = {s.value: lvl.label for s, lvl in loaded.minimum_evidence.items()}
        write_json({"profiles": rows, "minimum_evidence": levels})
        return EXIT_OK
    if not rows:
        sys.stdout.write("no profiles detected or configured (docs/verify.md)\n")
    for name, profile in sorted(loaded.profiles.items()):
        argv = " ".join(profile.argv)
        source = loaded.sources[name].value
        sys.stdout.write(f"{name:<14} {profile.kind.value:<10} {source:<15} {argv}\n")
    return EXIT_OK
