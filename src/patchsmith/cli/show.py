"""`patchsmith show ID`: print one recorded attempt, its decisions, failures and diff."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchsmith.cli.log import (
    EXIT_OK,
    add_store_options,
    fail_refusal,
    load_attempt,
    write_json,
)
from patchsmith.errors import PatchRefused
from patchsmith.model.evidence import Evidence, RunSide, Verdict
from patchsmith.store import AttemptRecord

__all__ = ["register", "render", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `show` subcommand."""
    parser = subparsers.add_parser(
        "show",
        help="print one recorded attempt and its diff",
        description="Print a recorded attempt: its files, guard decisions, failures and diff.",
    )
    parser.add_argument("id", metavar="ID", help="an attempt id, or a unique prefix of one")
    add_store_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the attempt; 0 on success, 2 for an unknown id or a bad DIR, 1 for a store error."""
    as_json: bool = args.json
    try:
        attempt = load_attempt(Path(args.root), args.id)
    except PatchRefused as refusal:
        return fail_refusal("show", refusal, as_json=as_json)
    if as_json:
        write_json({"status": "ok", "attempt": attempt.to_json(), "errors": []})
    else:
        sys.stdout.write(render(attempt))
    return EXIT_OK


def render(attempt: AttemptRecord) -> str:
    """The plain-text view: header, files, decisions, commands, verification, failures, diff."""
    lines = [
        f"attempt   {attempt.id}",
        f"run       {attempt.run_id}",
        f"proposal  {attempt.proposal_id} #{attempt.attempt_no}",
        f"kind      {attempt.kind.value}",
        f"status    {attempt.status.value}",
        f"created   {attempt.created_at}",
        f"finished  {attempt.finished_at}",
        f"base      {attempt.base_commit or '(no commit)'}",
    ]
    if attempt.files:
        lines.append("files")
        for f in attempt.files:
            moved = f" (from {f.old_path})" if f.old_path else ""
            lines.append(
                f"  {f.action.value:<7} {f.path}{moved}  "
                f"{_short(f.before_sha256)} -> {_short(f.after_sha256)}"
            )
    if attempt.decisions:
        lines.append("decisions")
        for d in attempt.decisions:
            verdict = "pass" if d.passed else "FAIL"
            detail = f"  {d.detail}" if d.detail else ""
            lines.append(f"  {verdict}  {d.name} ({d.code.value}){detail}")
    commands = [e for e in attempt.evidence if e.side is RunSide.COMMAND]
    checks = [e for e in attempt.evidence if e.side is not RunSide.COMMAND]
    if commands:
        lines.append("commands")
        for e in commands:
            verdict = "pass" if e.passed else "FAIL"
            lines.append(
                f"  {verdict}  {e.profile} {_ended(e)}, {e.duration_s:.2f} s, "
                f"changed: {', '.join(e.changed_paths) or 'nothing'}"
            )
            lines.append(f"    argv    {' '.join(e.argv)}")
            lines.append(f"    output  sha256 {e.output_sha256}")
            if e.sandbox is not None:
                lines.append(f"    sandbox {e.sandbox}")
            if e.nondeterministic:
                lines.append(
                    "    nondeterministic  two runs differ in " + ", ".join(e.nondeterministic)
                )
            for found in e.failures:
                lines.append(f"    {found.code or 'failure'}  {found.message}")
    if checks:
        lines.append("verification")
        for e in checks:
            verdict = _VERDICT[e.verdict]
            cached = ", cached" if e.cached else ""
            lines.append(
                f"  {verdict}  {e.profile} [{e.side.value}{cached}] {_ended(e)}, "
                f"{e.duration_s:.2f} s, {len(e.failures)} failures"
                + (
                    f" ({len(e.introduced)} introduced, {len(e.fixed)} fixed)"
                    if e.side is not RunSide.BASE
                    else ""
                )
            )
            lines.append(f"    argv    {' '.join(e.argv)}")
            lines.append(f"    tool    {e.tool_version or '(version unknown)'}")
            lines.append(f"    output  sha256 {e.output_sha256}")
            if e.reason:
                lines.append(f"    verdict {e.verdict.value}: {e.reason}")
            if e.sandbox is not None:
                lines.append(f"    sandbox {e.sandbox}")
            for found in e.introduced:
                where = found.file or ""
                if where and found.line is not None:
                    where += f":{found.line}"
                label = found.test_id or found.code or ""
                first = (found.message.strip().splitlines() or [""])[0]
                lines.append(f"    introduced  {where} [{label}] {first}")
    if attempt.failures:
        lines.append("failures")
        for failure in attempt.failures:
            where = f"{failure.file}: " if failure.file else ""
            lines.append(f"  {failure.code.value}  {where}{failure.message}")
            if failure.hint:
                lines.append(f"    hint: {failure.hint}")
    text = "\n".join(lines) + "\n"
    # The applied diff is what reached the disk; a refused attempt only has the staged one.
    label, diff = (
        ("applied diff", attempt.applied_diff)
        if attempt.applied_diff
        else ("staged diff", attempt.staged_diff)
    )
    if diff:
        text += f"{label}\n{diff}"
        if not diff.endswith("\n"):
            text += "\n"
    else:
        text += "no diff recorded\n"
    return text


_VERDICT = {Verdict.PASSED: "pass", Verdict.FAILED: "FAIL", Verdict.ERROR: "ERROR"}


def _ended(run: Evidence) -> str:
    return run.start_error or ("timed out" if run.timed_out else f"exit {run.exit_code}")


def _short(sha256: str | None) -> str:
    return sha256[:12] if sha256 else "(none)"
