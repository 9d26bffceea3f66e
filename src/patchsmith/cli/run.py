"""`patchsmith run`: a repair loop run, driven by scripted replies or a command per turn."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from patchsmith.cli._consent import add_trust_option, trust_of
from patchsmith.cli._output import (
    EXIT_OK,
    EXIT_REFUSED,
    missing_root,
    print_failures,
    usage_error,
    write_json,
)
from patchsmith.cli.apply import add_record_option
from patchsmith.errors import FailureCode, PatchFailure

__all__ = ["register", "run"]

EPILOG = """\
TASK is a JSON or YAML file (docs/agents.md): {"objective": ..., "files": [...],
"changed_lines": N, "verify": [...], "risk": "LOW", "milestones": [...]}.

The replies come from --replies FILE (a JSON array of replies, or JSON Lines; a
string is model text in any edit format, an object a proposal), or from
--source-cmd 'COMMAND ARGS', run once per turn (no shell, in the current
directory, $PATCHSMITH_ROOT naming the workspace) with the turn's prompt on stdin
(--turn-format json: the whole turn as JSON) and the reply on stdout.

exit status: 0 every milestone applied; 1 the budget ran out, the source failed,
or the run could not start; 2 usage error.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `run` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="run a task through the budgeted repair loop (scripted or command source)",
        description="Plan the task's milestones, choose a strategy for each, ask the source "
        "for a reply, apply and verify it, and send the refusal back until it applies or "
        "the budget is spent. Every attempt is recorded under one run id.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("task", metavar="TASK", help="the task, a .json or .yaml file")
    parser.add_argument("-C", dest="root", metavar="DIR", default=".", help="workspace root")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--replies", metavar="FILE", help="scripted replies (JSON or JSONL)")
    source.add_argument("--source-cmd", metavar="COMMAND", help="a command run per turn")
    parser.add_argument(
        "--turn-format",
        choices=("text", "json"),
        default="text",
        help="what --source-cmd gets on stdin (default: the prompt as text)",
    )
    parser.add_argument("--max-attempts", type=int, default=5, metavar="N")
    parser.add_argument("--max-seconds", type=float, default=600.0, metavar="S")
    parser.add_argument(
        "--feedback-chars", type=int, default=4000, metavar="N", help="per repair message"
    )
    parser.add_argument(
        "--max-feedback-chars", type=int, default=20000, metavar="N", help="over the whole run"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_trust_option(parser)
    add_record_option(parser)
    parser.set_defaults(func=run)


def _usage(message: str, *, as_json: bool) -> int:
    failure = PatchFailure(
        FailureCode.INVALID_TASK, message, hint="`patchsmith run --help` shows the options"
    )
    return usage_error("run", failure, as_json=as_json)


def run(args: argparse.Namespace) -> int:
    from patchsmith.pipeline.budget import Budget
    from patchsmith.pipeline.loop import RunStatus, run_task
    from patchsmith.pipeline.source import (
        CommandSource,
        ProposalSource,
        SourceError,
        load_replies,
    )
    from patchsmith.pipeline.task import load_task

    bad_root = missing_root("run", args.root, as_json=args.json)
    if bad_root is not None:
        return bad_root
    task = load_task(args.task)
    if isinstance(task, PatchFailure):
        return usage_error("run", task, as_json=args.json)
    try:
        budget = Budget(
            max_attempts=args.max_attempts,
            max_seconds=args.max_seconds,
            feedback_chars=args.feedback_chars,
            max_feedback_chars=args.max_feedback_chars,
        )
    except ValueError as exc:
        return _usage(f"invalid budget: {exc}", as_json=args.json)
    source: ProposalSource
    if args.replies is not None:
        try:
            source = load_replies(args.replies)
        except SourceError as exc:
            return _usage(str(exc), as_json=args.json)
    else:
        try:
            argv = shlex.split(args.source_cmd)
        except ValueError as exc:
            return _usage(f"cannot split --source-cmd: {exc}", as_json=args.json)
        if not argv:
            return _usage("--source-cmd names no command", as_json=args.json)
        # The command runs where the user typed it, so its relative paths mean what they
        # meant in their shell; the workspace is named in its environment.
        root = {"PATCHSMITH_ROOT": os.path.abspath(args.root)}
        source = CommandSource(argv, turn_format=args.turn_format, env=root)
    result = run_task(
        task, source, budget, root=args.root, record=args.record, trust=trust_of(args)
    )
    if args.json:
        write_json(result.to_json())
    else:
        out = sys.stdout
        out.write(f"run {result.run_id}: {result.status.value} ({result.stop_reason})\n")
        for milestone in result.milestones:
            mark = "done" if milestone.done else "not done"
            out.write(
                f"  {milestone.id}: {mark} after {len(milestone.attempts)} attempt(s); "
                f"{milestone.selection.strategy.value} (rule {milestone.selection.rule})\n"
            )
        out.write(
            f"  spent: {result.attempts} attempt(s), {result.feedback_chars} feedback chars, "
            f"{result.seconds:.1f}s\n"
        )
        if result.errors:
            print_failures("run", result.errors, excerpts=False)
    if result.status is RunStatus.SUCCEEDED:
        return EXIT_OK
    return EXIT_REFUSED
