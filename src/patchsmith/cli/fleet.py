"""`patchsmith fleet run|report`: one recipe or proposal over many repositories."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from patchsmith.cli._consent import add_trust_option
from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, usage_error, write_json

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the `fleet` subcommand and its `run` and `report` actions."""
    parser = subparsers.add_parser(
        "fleet",
        help="run a recipe or proposal over many repositories; report on a run",
        description="Fleet runs: one change over many repositories, resumable (docs/fleet.md).",
    )
    commands = parser.add_subparsers(dest="fleet_command", metavar="ACTION")

    run = commands.add_parser(
        "run",
        help="run a recipe or a proposal over the repositories in FILE",
        description="Check out each repository of FILE clean, run the change through the "
        "normal transaction, guards and verification, and commit each result to the run's "
        "store (RUNS_DIR/RUN_ID/fleet.db) as it lands. Rerunning the same run id (by default "
        "derived from the change and the repositories) skips finished repositories. "
        "Exit status: 0 every repository changed or had nothing to change; 1 some were "
        "refused, failed verification or errored; 2 usage error.",
    )
    run.add_argument(
        "change", metavar="RECIPE|PROPOSAL", help="a recipe id or file, or a proposal file"
    )
    run.add_argument(
        "--repos", required=True, metavar="FILE", help="one path or git URL a line, optionally @REF"
    )
    run.add_argument("--executor", choices=["local", "dask"], default="local")
    run.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="a Dask scheduler (tcp://HOST:PORT); default: a LocalCluster",
    )
    run.add_argument(
        "--workers", type=int, metavar="N", help="parallel workers (default: one per CPU)"
    )
    run.add_argument(
        "--batch", type=int, default=1, metavar="N", help="repositories per task (default 1)"
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds per repository (default 600)",
    )
    run.add_argument(
        "--run-id",
        metavar="ID",
        help="name the run (default: from the change and the repositories)",
    )
    run.add_argument(
        "--runs-dir",
        default="fleet-runs",
        metavar="DIR",
        help="where runs live (default ./fleet-runs)",
    )
    run.add_argument(
        "--kind",
        choices=["recipe", "proposal"],
        help="read the change as this (default: by content)",
    )
    run.add_argument(
        "--recipes", action="append", default=[], metavar="DIR", help="another folder of recipes"
    )
    run.add_argument(
        "--policy",
        metavar="FILE",
        help="a patchsmith.toml applied instead of each repository's own",
    )
    run.add_argument(
        "--verify",
        action="append",
        default=[],
        metavar="PROFILE",
        help="a verification profile to run after the change (may repeat); without it no "
        "repository program runs (postconditions and plans included)",
    )
    add_trust_option(run)
    run.add_argument(
        "--retry-errors",
        action="store_true",
        help="on a resume, run the repositories that errored again",
    )
    run.add_argument(
        "--keep-checkouts", action="store_true", help="keep each changed checkout under RUN/work"
    )
    run.add_argument(
        "--json", action="store_true", help="print one JSON object; no progress display"
    )
    run.set_defaults(func=_run)

    report = commands.add_parser(
        "report",
        help="print a run's summary table; write its HTML report",
        description="Print the summary of RUN (a run id under --runs-dir, a run folder or its "
        "fleet.db) and, with --html, write a static HTML page of every repository's status "
        "and diff.",
    )
    report.add_argument("run", metavar="RUN")
    report.add_argument("--html", metavar="OUT", help="write the HTML report to OUT")
    report.add_argument("--runs-dir", default="fleet-runs", metavar="DIR")
    report.add_argument("--json", action="store_true", help="print one JSON object")
    report.add_argument(
        "--no-repos", action="store_true", help="only the counts, not one row per repository"
    )
    report.set_defaults(func=_report)

    parser.set_defaults(func=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _exit(summary: Any) -> int:
    from patchsmith.fleet import FleetStatus

    if summary.errors:
        return EXIT_USAGE if not summary.results else EXIT_REFUSED
    good = (FleetStatus.CHANGED, FleetStatus.NO_OP)
    complete = summary.complete and all(r.status in good for r in summary.results)
    return EXIT_OK if complete else EXIT_REFUSED


def _run(args: argparse.Namespace) -> int:
    from patchsmith.fleet import run_fleet
    from patchsmith.fleet.lifeline import FleetInterrupted
    from patchsmith.fleet.progress import LiveProgress

    options = {
        "run_id": args.run_id,
        "runs_dir": args.runs_dir,
        "executor": args.executor,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "batch": args.batch,
        "timeout": args.timeout,
        "retry_errors": args.retry_errors,
        "keep_checkouts": args.keep_checkouts,
        "kind": args.kind,
        "recipe_dirs": args.recipes,
        "policy": args.policy,
        "verify": args.verify,
        "trust": bool(args.trust),
    }
    live = not args.json and sys.stderr.isatty()
    try:
        if live:
            with LiveProgress(sys.stderr) as progress:
                summary = run_fleet(args.change, args.repos, progress=progress, **options)
        else:
            summary = run_fleet(args.change, args.repos, **options)
    except FleetInterrupted as stop:
        sys.stderr.write(
            f"patchsmith fleet run: stopped by {stop}; every worker was stopped, the "
            "finished repositories are kept (run the same command again to resume)\n"
        )
        return 128 + stop.signum
    if summary.errors and not summary.results and summary.total == 0:
        return usage_error("fleet run", summary.errors[0], as_json=args.json)
    if args.json:
        write_json(summary.to_json(diffs=False))
    else:
        sys.stdout.write(summary.to_text())
        sys.stdout.write(
            f"\nreport: patchsmith fleet report {summary.run_id} --runs-dir {args.runs_dir} "
            "--html report.html\n"
        )
    return _exit(summary)


def _report(args: argparse.Namespace) -> int:
    from patchsmith.errors import PatchFailure
    from patchsmith.fleet import fleet_report

    summary = fleet_report(args.run, runs_dir=args.runs_dir, html=args.html)
    if isinstance(summary, PatchFailure):
        return usage_error("fleet report", summary, as_json=args.json)
    if args.json:
        payload = summary.to_json()
        payload["html"] = args.html
        write_json(payload)
    else:
        sys.stdout.write(summary.to_text(repos=not args.no_repos))
        if args.html:
            sys.stdout.write(f"\nwrote {args.html}\n")
    return _exit(summary)
