"""Running profiles: one run of one profile on one tree, parsed into evidence."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from patchsmith.evidence import Evidence, RunSide, ToolFailure
from patchsmith.runtime.process import ProcessResult, run_process
from patchsmith.runtime.sandbox import SandboxSpec
from patchsmith.verify.parsers import ParserInput, ParserName, parse_output
from patchsmith.verify.profiles import REPORT_PLACEHOLDER, Profile
from patchsmith.verify.trees import dependency_mounts

_PROTECTED = (".git", ".patchsmith")
"""Read-only even inside a writable tree: a tool must not plant hooks or rewrite our records."""

__all__ = ["run_profile"]

MAX_REPORT_BYTES = 20_000_000
"""A JUnit report larger than this is not read (the exit code still decides)."""

_TAIL_LINES = 20


def run_profile(
    name: str,
    profile: Profile,
    tree: Path,
    side: RunSide,
    *,
    targets: Sequence[str] = (),
    timeout_s: float | None = None,
) -> Evidence:
    """Run `profile` in `tree` (its `cwd` below it), `targets` appended; never raises.

    The run is sandboxed (runtime/sandbox.py): only `tree` and the report's folder are
    writable (a dependency folder bound into a copy takes writes in a throw-away layer),
    the network is off unless the profile says `network = true`.
    """
    cwd = tree / profile.cwd
    with tempfile.TemporaryDirectory(prefix="patchsmith-report-") as scratch:
        report_path = Path(scratch) / "report"
        argv = [arg.replace(REPORT_PLACEHOLDER, str(report_path)) for arg in profile.argv]
        argv.extend(targets)
        result = run_process(
            argv,
            cwd=cwd,
            timeout_s=timeout_s or profile.timeout_seconds,
            env_allow=profile.allowed_env(),
            env_set=profile.set_env,
            sandbox=_sandbox(tree, Path(scratch), network=profile.network),
        )
        report = _read_report(report_path)
    failures = parse_output(
        profile.parser, ParserInput(result.stdout, result.stderr, report, str(cwd.resolve()))
    )
    if not result.ok and not failures:
        failures = [_exit_failure(name, profile, result)]
    return Evidence(
        profile=name,
        side=side,
        argv=_shown_argv(profile, targets),
        exit_code=result.exit_code,
        duration_s=result.duration_s,
        passed=result.ok,
        output_sha256=result.output_sha256,
        failures=tuple(failures),
        timed_out=result.timed_out,
        start_error=result.start_error,
        stdout=result.stdout,
        stderr=result.stderr,
        sandbox=None if result.sandbox is None else result.sandbox.value,
    )


def _sandbox(tree: Path, scratch: Path, *, network: bool) -> SandboxSpec:
    real = tree.resolve()
    protected = tuple((real / name, real / name) for name in _PROTECTED if (real / name).exists())
    return SandboxSpec(
        writable=(real, scratch.resolve()),
        layered=dependency_mounts(tree),
        read_only=protected,
        network=network,
    )


def _shown_argv(profile: Profile, targets: Sequence[str]) -> tuple[str, ...]:
    # The report path is a throwaway temp name: keep the placeholder so runs compare equal.
    return (*profile.argv, *targets)


def _read_report(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _exit_failure(name: str, profile: Profile, result: ProcessResult) -> ToolFailure:
    """A failure standing for a run that failed without anything the parser could read."""
    if result.start_error is not None:
        message = f"could not start: {result.start_error}"
        code = "not-started"
    elif result.timed_out:
        message = f"timed out after {profile.timeout_seconds:g} s"
        code = "timeout"
    else:
        tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-_TAIL_LINES:]
        message = f"exited {result.exit_code}" + (":\n" + "\n".join(tail) if tail else "")
        code = "exit-status"
    tool = name if profile.parser is ParserName.EXIT_CODE else profile.parser.value
    return ToolFailure(tool=tool, message=message, code=code)
