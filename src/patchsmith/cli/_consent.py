"""`--verify` and `--trust`: the options of every command that can run a repository's programs."""

from __future__ import annotations

import argparse

__all__ = ["add_trust_option", "add_verify_option", "trust_of", "verify_of"]


def add_trust_option(parser: argparse.ArgumentParser) -> None:
    """`--trust`: trust the repository for this call only (docs/policy.md, the trust model)."""
    parser.add_argument(
        "--trust",
        action="store_true",
        help="let the repository run its own programs (profiles, commands) in this call, as "
        "`patchsmith trust` would for good",
    )


def add_verify_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--verify`: run the repository's programs on a dry run too."""
    parser.add_argument("--verify", action="store_true", help=what)


def trust_of(args: argparse.Namespace) -> bool | None:
    """True for `--trust`, else `None`: the trust store decides."""
    return True if getattr(args, "trust", False) else None


def verify_of(args: argparse.Namespace) -> bool | None:
    """True for `--verify`, else `None`: run what an apply asks for, nothing on a dry run."""
    return True if getattr(args, "verify", False) else None
