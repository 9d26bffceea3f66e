"""Running profiles: one run of one profile on one tree, parsed into evidence."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from patchsmith.model.evidence import Evidence, RunSide, ToolFailure, Verdict
from patchsmith.runtime.process import ProcessResult, run_process
from patchsmith.runtime.sandbox import SandboxKind, SandboxSpec, sandbox_kind
from patchsmith.runtime.watch import changed, fingerprint
from patchsmith.verify.editable import copy_import_paths
from patchsmith.verify.parsers import ParserInput, ParserName, exit_verdict_of, parse_output
from patchsmith.verify.parsers.pytest_junit import collected_files
from patchsmith.verify.profiles import REPORT_PLACEHOLDER, Profile
from patchsmith.verify.toolversion import tool_version
from patchsmith.verify.trees import dependency_mounts

_CRASH_SIGNALS = frozenset(
    {signal.SIGILL, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGKILL, signal.SIGSEGV}
)
"""Signals that mean a crash (or the kernel's OOM kill), never a test result."""

_PROTECTED = (".git", ".patchsmith")
"""Read-only even inside a writable tree: a tool must not plant hooks or rewrite our records."""

__all__ = ["UNPARSED_CODES", "run_profile", "run_verdict"]

UNPARSED_CODES = frozenset({"exit-status", "not-started", "timeout"})
"""Codes of the one failure standing for a run whose output had nothing parsable."""

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
    real_root: Path | None = None,
) -> Evidence:
    """Run `profile` in `tree` (its `cwd` below it), `targets` appended; never raises.

    The evidence carries the run's verdict (its tool's exit-code table) and the tool's
    version.
    The run is sandboxed (runtime/sandbox.py): only `tree` and the report's folder are
    writable (a dependency folder bound into a copy takes writes in a throw-away layer),
    the network is off unless the profile says `network = true`. `real_root` is the
    workspace `tree` copies (ignored when `tree` is that workspace): where no sandbox
    can be made it is fingerprinted before and after, and a tool that wrote into it by
    absolute path makes the verdict `error`; an editable install in its virtualenv is
    pointed at the copy (verify/editable.py).
    """
    cwd = tree / profile.cwd
    if real_root is not None and tree.resolve() == real_root.resolve():
        real_root = None  # `patchsmith verify`'s changed run: the workspace is the tree
    watched = real_root is not None and sandbox_kind() is SandboxKind.NONE
    before = fingerprint(real_root) if watched and real_root is not None else None
    env_set = _env_for(profile, tree, real_root)
    version = tool_version(profile.argv, cwd, env_allow=profile.allowed_env(), env_set=env_set)
    with tempfile.TemporaryDirectory(prefix="patchsmith-report-") as scratch:
        report_path = Path(scratch) / "report"
        argv = [arg.replace(REPORT_PLACEHOLDER, str(report_path)) for arg in profile.argv]
        argv.extend(targets)
        result = run_process(
            argv,
            cwd=cwd,
            timeout_s=timeout_s or profile.timeout_seconds,
            env_allow=profile.allowed_env(),
            env_set=env_set,
            sandbox=_sandbox(tree, Path(scratch), network=profile.network),
        )
        report = _read_report(report_path)
    data = ParserInput(
        result.stdout,
        result.stderr,
        report,
        str(cwd.resolve()),
        argv=tuple(argv),
        report_expected=any(REPORT_PLACEHOLDER in arg for arg in profile.argv),
    )
    failures = parse_output(profile.parser, data)
    verdict, reason = run_verdict(profile, result, data, failures, timeout_s=timeout_s)
    if before is not None and real_root is not None:
        wrote = changed(before, fingerprint(real_root))
        if wrote:
            shown = ", ".join(wrote[:5]) + (f" and {len(wrote) - 5} more" if len(wrote) > 5 else "")
            verdict = Verdict.ERROR
            reason = (
                f"the tool changed the real workspace, not only its private copy ({shown}); "
                "with no sandbox (sandbox: none) nothing it established is trusted"
            )
    if not result.ok and not failures:
        failures = [_exit_failure(name, profile, result)]
    collected = collected_files(data) if profile.parser is ParserName.PYTEST else ()
    return Evidence(
        profile=name,
        side=side,
        argv=_shown_argv(profile, targets),
        exit_code=result.exit_code,
        duration_s=result.duration_s,
        passed=verdict is Verdict.PASSED,
        output_sha256=result.output_sha256,
        failures=tuple(failures),
        timed_out=result.timed_out,
        start_error=result.start_error,
        stdout=result.stdout,
        stderr=result.stderr,
        verdict=verdict,
        reason=reason,
        tool_version=version,
        collected=collected,
        sandbox=None if result.sandbox is None else result.sandbox.value,
    )


def _env_for(profile: Profile, tree: Path, real_root: Path | None) -> dict[str, str]:
    """The profile's `set_env`, with the copy's folders first on `PYTHONPATH` where an
    editable install would import the real workspace's package instead."""
    if real_root is None:
        return dict(profile.set_env)
    paths = copy_import_paths(real_root, tree)
    if not paths:
        return dict(profile.set_env)
    existing = profile.set_env.get("PYTHONPATH")
    if existing is None and any(fnmatchcase("PYTHONPATH", p) for p in profile.allowed_env()):
        existing = os.environ.get("PYTHONPATH")
    entries = [str(p.resolve()) for p in paths] + ([existing] if existing else [])
    return {**profile.set_env, "PYTHONPATH": os.pathsep.join(entries)}


def _sandbox(tree: Path, scratch: Path, *, network: bool) -> SandboxSpec:
    real = tree.resolve()
    protected = tuple((real / name, real / name) for name in _PROTECTED if (real / name).exists())
    return SandboxSpec(
        writable=(real, scratch.resolve()),
        layered=dependency_mounts(tree),
        read_only=protected,
        network=network,
    )


def run_verdict(
    profile: Profile,
    result: ProcessResult,
    data: ParserInput,
    failures: list[ToolFailure],
    *,
    timeout_s: float | None = None,
) -> tuple[Verdict, str]:
    """What one run established: `error` when it did not start, timed out or crashed, else
    what its tool's exit-code table says."""
    if result.start_error is not None:
        return Verdict.ERROR, f"could not start: {result.start_error}"
    if result.timed_out:
        return Verdict.ERROR, f"timed out after {timeout_s or profile.timeout_seconds:g} s"
    if result.exit_code is None or result.exit_code < 0:
        signal = -result.exit_code if result.exit_code is not None else "?"
        return Verdict.ERROR, f"crashed: killed by signal {signal}"
    if result.sandbox is SandboxKind.BWRAP and result.exit_code - 128 in _CRASH_SIGNALS:
        # bwrap reports a child killed by signal N as exit 128 + N
        return Verdict.ERROR, f"crashed: killed by signal {result.exit_code - 128}"
    return exit_verdict_of(profile.parser, result.exit_code, data, failures)


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
