"""`patchsmith run-command PROFILE`: run an allow-listed command profile, keep what it changed."""

from __future__ import annotations

import argparse
import sys

from patchsmith.cli._consent import add_trust_option, trust_of
from patchsmith.cli._output import EXIT_USAGE, missing_root, write_json
from patchsmith.cli.apply import add_record_option, print_report

__all__ = ["register", "run"]

EPILOG = """\
The profile runs on a scratch copy of the workspace; what it changed is checked
(expected and forbidden paths, nothing written outside the workspace), guarded and
written all or nothing. Profiles: the built-ins (npm-lock, ruff-format, go-mod-tidy)
and those in patchsmith.toml [commands.NAME]; --list prints them.

examples:
  patchsmith run-command npm-lock -C web
  patchsmith run-command ruff-format -C repo --param paths=src --param paths=tests

exit status: 0 applied (or would be, with --check); 1 refused, nothing changed;
2 usage error.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `run-command` subcommand."""
    parser = subparsers.add_parser(
        "run-command",
        help="run an allow-listed command profile (lockfiles, formatters) and apply its changes",
        description="Run a command profile on a scratch copy of the workspace, then apply "
        "what it changed under the policy's guards, all or nothing.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("profile", metavar="PROFILE", nargs="?", help="the profile's name")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value for one of the profile's parameters (repeat for several values)",
    )
    parser.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a path the command may change (default: the profile's expected paths)",
    )
    parser.add_argument(
        "--forbid", action="append", default=[], metavar="PATTERN", help="a path it must not change"
    )
    parser.add_argument(
        "--allow-dependency",
        action="append",
        default=[],
        metavar="NAME",
        help="a dependency the command may add, remove or re-version",
    )
    parser.add_argument("--list", action="store_true", help="list the profiles and exit")
    parser.add_argument(
        "--check", action="store_true", help="dry run: run, check and print the diff, write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_trust_option(parser)
    parser.add_argument(
        "--allow-unverified",
        action="store_true",
        help="apply even when no profile can give the compile evidence BUILD_TOOL_GENERATED "
        "needs (a note says so)",
    )
    add_record_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from patchsmith.commands.profiles import load_profiles
    from patchsmith.commands.run import run_command
    from patchsmith.errors import PatchFailure

    bad_root = missing_root("run-command", args.root, as_json=args.json)
    if bad_root is not None:
        return bad_root
    if args.list:
        profiles = load_profiles(args.root)
        if isinstance(profiles, PatchFailure):
            sys.stderr.write(f"patchsmith run-command: {profiles.message}\n")
            return EXIT_USAGE
        if args.json:
            listing = {name: p.model_dump(mode="json") for name, p in sorted(profiles.items())}
            write_json({"profiles": listing})
        else:
            for name, profile in sorted(profiles.items()):
                sys.stdout.write(f"{name}: {' '.join(profile.argv)}\n")
                if profile.description:
                    sys.stdout.write(f"    {profile.description}\n")
        return 0
    if not args.profile:
        sys.stderr.write("patchsmith run-command: a PROFILE is required (or --list)\n")
        return EXIT_USAGE
    params: dict[str, list[str]] = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not name:
            sys.stderr.write(f"patchsmith run-command: --param {item!r} is not NAME=VALUE\n")
            return EXIT_USAGE
        params.setdefault(name, []).append(value)
    report = run_command(
        args.profile,
        args.root,
        params={k: v[0] if len(v) == 1 else tuple(v) for k, v in params.items()},
        expected_changed_paths=args.expect,
        forbidden_changed_paths=args.forbid,
        allowed_dependency_changes=args.allow_dependency,
        check=args.check,
        record=args.record,
        trust=trust_of(args),
        allow_unverified=args.allow_unverified,
    )
    return print_report("run-command", report, as_json=args.json)
