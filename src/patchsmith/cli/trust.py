"""`patchsmith trust`: allow a repository to run its own programs, list or revoke that.

Exit 0 done, 1 `--revoke` of a path that was not trusted, 2 usage error (not a
directory, a store that cannot be written).
"""

from __future__ import annotations

import argparse
import os
import sys

from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, missing_root, write_json

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `trust` subcommand."""
    parser = subparsers.add_parser(
        "trust",
        help="let a repository run its verification and command profiles (like direnv allow)",
        description="Record the repository's resolved path and a digest of its verification "
        "configuration ([verify] and [commands], the interpreters and tools under it) in "
        "the user's config directory. Its profiles then run when a call asks for them; a "
        "changed configuration needs trust again. See docs/policy.md.",
    )
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the repository (.)")
    parser.add_argument("--list", action="store_true", help="list the trusted repositories")
    parser.add_argument("--revoke", action="store_true", help="forget the trust given to PATH")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Trust, list or revoke."""
    from patchsmith.runtime import trust

    if args.list:
        return _list(as_json=args.json)
    if args.revoke:
        known = trust.revoke(args.path)
        path = os.path.abspath(args.path)
        if args.json:
            write_json({"status": "revoked" if known else "not_trusted", "path": path})
        else:
            said = "no longer trusted" if known else "was not trusted"
            sys.stdout.write(f"{path}: {said}\n")
        return EXIT_OK if known else EXIT_REFUSED
    missing = missing_root("trust", args.path, as_json=args.json)
    if missing is not None:
        return missing
    try:
        entry = trust.trust(args.path)
    except OSError as exc:
        sys.stderr.write(f"patchsmith trust: cannot write the trust store: {exc}\n")
        return EXIT_USAGE
    if args.json:
        write_json({"status": "trusted", **entry.to_json(), "store": str(trust.store_path())})
    else:
        sys.stdout.write(
            f"trusted {entry.path} ({entry.digest[:19]}); its verification and command "
            "profiles run when a call asks for them, until their configuration changes\n"
        )
    return EXIT_OK


def _list(*, as_json: bool) -> int:
    from patchsmith.runtime import trust

    rows = []
    for entry in trust.trusted():
        state = trust.trust_state(entry.path) if os.path.isdir(entry.path) else None
        rows.append({**entry.to_json(), "state": state.value if state else "missing"})
    if as_json:
        write_json({"repositories": rows, "store": str(trust.store_path())})
        return EXIT_OK
    if not rows:
        sys.stdout.write("no trusted repositories\n")
    for row in rows:
        sys.stdout.write(f"{row['path']}  {row['state']}  (since {row['trusted_at']})\n")
    return EXIT_OK
