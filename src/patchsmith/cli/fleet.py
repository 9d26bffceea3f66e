"""`patchsmith fleet run|publish|report`: one recipe or proposal over many repositories."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from patchsmith.cli._consent import add_trust_option
from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, usage_error, write_json

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the `fleet` subcommand and its `run`, `publish` and `report` actions."""
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
        "change",
        metavar="RECIPE|PROPOSAL",
        nargs="?",
        help="a recipe id or file, or a proposal file (not with --resume)",
    )
    run.add_argument("--repos", metavar="FILE", help="one path or git URL a line, optionally @REF")
    run.add_argument(
        "--resume",
        metavar="RUN",
        help="go on with RUN (its change and repositories are read from its store)",
    )
    run.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run a wave of N unfinished repositories (seeded choice), then stop",
    )
    run.add_argument(
        "--seed", type=int, default=0, metavar="N", help="the seed of --sample (default 0)"
    )
    run.add_argument(
        "--stop-when",
        metavar="COND",
        help="stop once STATUS>N, STATUS>=N or STATUS>N%% of the finished repositories "
        "(e.g. refused>10%%; a share is judged once the --sample wave is done)",
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
        "--keep-checkouts",
        action="store_true",
        help="keep the checkouts of the changed repositories under RUN/work (only those)",
    )
    run.add_argument(
        "--publish",
        action="store_true",
        help="after the run, publish it (as `fleet publish` does, with --branch/--push/--author)",
    )
    _publish_options(run)
    run.add_argument(
        "--json", action="store_true", help="print one JSON object; no progress display"
    )
    run.set_defaults(func=_run)

    publish = commands.add_parser(
        "publish",
        help="make a branch and commit per changed repository; push; write change descriptions",
        description="For each repository of RUN that ended `changed` (with verification "
        "evidence `passed` when the run asked for verification), commit the run's diff on "
        "the commit it changed to a branch in RUN/publish/, optionally push it, and write "
        "its change description (RUN/changes/NAME.json and .md). Publishing again skips what "
        "is done and makes the same commits. Exit status: 0 all published or skipped; 1 some "
        "failed; 2 usage error.",
    )
    publish.add_argument("run", metavar="RUN")
    publish.add_argument("--runs-dir", default="fleet-runs", metavar="DIR")
    _publish_options(publish)
    publish.add_argument("--json", action="store_true", help="print one JSON object")
    publish.set_defaults(func=_publish)

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


def _publish_options(parser: argparse.ArgumentParser) -> None:
    from patchsmith.fleet.publish import DEFAULT_AUTHOR, DEFAULT_BRANCH

    parser.add_argument(
        "--branch",
        default=DEFAULT_BRANCH,
        metavar="NAME",
        help="the branch to make ({run}: the run id, {change}: the recipe or proposal id; "
        f"default {DEFAULT_BRANCH})",
    )
    parser.add_argument(
        "--push",
        metavar="REMOTE",
        help="push each branch (never forced): origin is the repository the run cloned, "
        "another name a remote of the local repository",
    )
    parser.add_argument(
        "--author",
        default=DEFAULT_AUTHOR,
        metavar="'NAME <EMAIL>'",
        help=f"author and committer of the commits (default {DEFAULT_AUTHOR!r})",
    )


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
    from patchsmith.errors import FailureCode, PatchFailure
    from patchsmith.fleet import run_fleet
    from patchsmith.fleet.lifeline import FleetInterrupted
    from patchsmith.fleet.progress import LiveProgress
    from patchsmith.fleet.run import resume_fleet

    resuming = args.resume is not None
    if resuming == bool(args.change or args.repos):
        wrong = PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            "name a change and --repos FILE, or --resume RUN (not both)",
            hint="patchsmith fleet run RECIPE --repos repos.txt | fleet run --resume RUN",
            rule="fleet_run",
        )
        return usage_error("fleet run", wrong, as_json=args.json)
    if not resuming and not (args.change and args.repos):
        missing = PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            "a change and --repos FILE are both needed",
            hint="patchsmith fleet run RECIPE --repos repos.txt",
            rule="fleet_run",
        )
        return usage_error("fleet run", missing, as_json=args.json)
    options: dict[str, Any] = {
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
        "sample": args.sample,
        "seed": args.seed,
        "stop_when": args.stop_when,
    }

    def start(**more: Any) -> Any:
        if resuming:
            return resume_fleet(args.resume, **options, **more)
        return run_fleet(args.change, args.repos, run_id=args.run_id, **options, **more)

    live = not args.json and sys.stderr.isatty()
    try:
        if live:
            with LiveProgress(sys.stderr) as progress:
                summary = start(progress=progress)
        else:
            summary = start()
    except FleetInterrupted as stop:
        sys.stderr.write(
            f"patchsmith fleet run: stopped by {stop}; every worker was stopped, the "
            "finished repositories are kept (run the same command again to resume)\n"
        )
        return 128 + stop.signum
    if summary.errors and not summary.results and summary.total == 0:
        return usage_error("fleet run", summary.errors[0], as_json=args.json)
    published = None
    if args.publish and summary.run_id and not (summary.errors and not summary.results):
        from patchsmith.fleet.publish import publish_run

        published = publish_run(
            summary.run_dir,
            branch=args.branch,
            push=args.push,
            author=args.author,
        )
    if args.json:
        payload = summary.to_json(diffs=False)
        if published is not None:
            payload["publish"] = published.to_json()
        write_json(payload)
    else:
        sys.stdout.write(summary.to_text())
        if published is not None:
            sys.stdout.write("\n" + published.to_text())
        sys.stdout.write(
            f"\nreport: patchsmith fleet report {summary.run_id} --runs-dir {args.runs_dir} "
            "--html report.html\n"
        )
    code = _exit(summary)
    if published is not None and not published.ok:
        code = max(code, EXIT_REFUSED)
    return code


def _publish(args: argparse.Namespace) -> int:
    from patchsmith.fleet.publish import publish_run

    published = publish_run(
        args.run,
        runs_dir=args.runs_dir,
        branch=args.branch,
        push=args.push,
        author=args.author,
    )
    if published.errors:
        return usage_error("fleet publish", published.errors[0], as_json=args.json)
    if args.json:
        write_json(published.to_json())
    else:
        sys.stdout.write(published.to_text())
    return EXIT_OK if published.ok else EXIT_REFUSED


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
