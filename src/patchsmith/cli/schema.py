"""`patchsmith schema`: print the JSON Schema a proposal must follow."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the `schema` subcommand."""
    parser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of a proposal or a recipe",
        description="Print the JSON Schema of a PatchProposal (what `propose` accepts), "
        "or with `recipe`, of a codemod recipe (what `recipe run` accepts).",
    )
    parser.add_argument(
        "which",
        nargs="?",
        choices=("proposal", "recipe"),
        default="proposal",
        help="which schema (default: proposal)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema to stdout; exit 0."""
    if getattr(args, "which", "proposal") == "recipe":
        from patchsmith.codemod.recipe import recipe_json_schema

        sys.stdout.write(schema_text(recipe_json_schema()))
        return 0
    from patchsmith.model.proposal import proposal_json_schema

    sys.stdout.write(schema_text(proposal_json_schema()))
    return 0


def schema_text(schema: dict[str, object]) -> str:
    """The schema as committed in docs/proposal.schema.json (indented, sorted, newline-ended)."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
