"""Run a command profile on a scratch copy of the workspace and collect what it changed.

The workspace is copied (without `.git/` and `.patchsmith/`) into a fresh scratch
area, with the changes already staged in the transaction laid over it, so a lockfile
is generated from the manifest as the proposal leaves it. The command runs there
(HOME and TMPDIR point into the scratch area too); the copy is then compared with
what it was before the run. Anything written next to the copy (outside the
workspace), a change to a forbidden or unexpected path, a symlink or special file
where the copy had none, and any change to the real workspace (its hooks and git
config included) are refused; nothing of a refused run is kept. The command runs in
the sandbox (runtime/sandbox.py): only the scratch area is writable there, so the
last check matters only where no sandbox can be made.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchsmith.commands.profiles import CommandProfile, ParamValue, render_argv
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.evidence import Evidence, RunSide, ToolFailure
from patchsmith.policy import matches
from patchsmith.runtime.process import ProcessResult, run_process
from patchsmith.runtime.sandbox import (
    SandboxKind,
    SandboxSpec,
    sandbox_kind,
    sandbox_unavailable,
)
from patchsmith.runtime.watch import SKIPPED_DIRS, Fingerprint, walk_files
from patchsmith.runtime.watch import fingerprint as _fingerprint

__all__ = ["CommandRun", "GeneratedFile", "run_profile", "summarise_output"]

# SKIPPED_DIRS (`.git/`, `.patchsmith/`) are never copied into the scratch area, never
# compared; the real workspace's fingerprint watches `.git`'s hooks, config and info.

SCRATCH_ENTRIES = frozenset({"work", "home", "tmp"})
"""What the scratch area holds; anything else appearing there was written outside the copy."""

SUMMARY_LINES = 20
SUMMARY_CHARS = 2000


@dataclass(frozen=True)
class GeneratedFile:
    """One file the command changed: its new bytes (`None`: deleted) and permission bits."""

    path: str
    new_bytes: bytes | None
    mode: int | None = None


@dataclass(frozen=True)
class CommandRun:
    """The outcome of running one profile: what it changed, or why that is refused."""

    profile: str
    argv: tuple[str, ...]
    result: ProcessResult | None = None
    files: tuple[GeneratedFile, ...] = ()
    failures: tuple[PatchFailure, ...] = ()
    nondeterministic: tuple[str, ...] = ()
    """Paths whose content differed between the two runs of a `run_twice` profile."""
    extra: tuple[str, ...] = field(default=())
    """Further notes for the report."""

    @property
    def ok(self) -> bool:
        """True when the run may be staged."""
        return not self.failures

    def evidence(self) -> Evidence | None:
        """The run as evidence for the audit store (`None` when the command never started:
        a refused parameter or scratch copy is already in the failures)."""
        result = self.result
        if result is None:
            return None
        return Evidence(
            profile=self.profile,
            side=RunSide.COMMAND,
            argv=result.argv,
            exit_code=result.exit_code,
            duration_s=result.duration_s,
            passed=self.ok,
            output_sha256=result.output_sha256,
            failures=tuple(
                ToolFailure(tool=self.profile, message=f.message, code=f.code.value)
                for f in self.failures
            ),
            timed_out=result.timed_out,
            start_error=result.start_error,
            stdout=result.stdout,
            stderr=result.stderr,
            changed_paths=tuple(f.path for f in self.files),
            nondeterministic=self.nondeterministic,
            sandbox=None if result.sandbox is None else result.sandbox.value,
        )

    def summary(self) -> str:
        """One line for the model: what ran, how it ended, what it changed."""
        command = " ".join(self.argv) or self.profile
        if self.result is None:
            return f"command {self.profile} did not run"
        if self.result.timed_out:
            ended = "timed out"
        elif self.result.start_error is not None:
            ended = f"could not start ({self.result.start_error})"
        else:
            ended = f"exited {self.result.exit_code}"
        changed = ", ".join(f.path for f in self.files) or "nothing"
        text = (
            f"command {self.profile} (`{command}`) {ended} in {self.result.duration_s:.1f} s;"
            f" changed: {changed}"
        )
        if self.nondeterministic:
            text += "; nondeterministic: two runs differ in " + ", ".join(self.nondeterministic)
        if self.result.sandbox is SandboxKind.NONE:
            text += "; ran without a sandbox (bwrap unavailable)"
        return text


def summarise_output(result: ProcessResult) -> str:
    """The last lines of the command's output, bounded for a model to read."""
    parts = []
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        lines = [line[:200] for line in text.strip().splitlines()]
        if lines:
            tail = lines[-SUMMARY_LINES:]
            skipped = (
                f"[{len(lines) - len(tail)} earlier lines]\n" if len(lines) > len(tail) else ""
            )
            parts.append(f"--- {name} ---\n{skipped}" + "\n".join(tail))
    text = "\n".join(parts) or "(no output)"
    return text if len(text) <= SUMMARY_CHARS else "..." + text[-SUMMARY_CHARS:]


Snapshot = dict[str, tuple[bytes, int]]
"""Relative POSIX path → (bytes, permission bits) of every regular file."""


def run_profile(
    root: Path,
    name: str,
    profile: CommandProfile,
    params: Mapping[str, ParamValue],
    *,
    overlay: Mapping[str, bytes | None] | None = None,
    expected: Sequence[str] = (),
    forbidden: Sequence[str] = (),
    require_sandbox: bool = False,
) -> CommandRun:
    """Run profile `name` on a scratch copy of `root` (with `overlay` laid over it).

    `expected` (else the profile's `expected_changed_paths`) and `forbidden` (plus the
    profile's) are gitignore-style patterns. With `require_sandbox`, a machine where
    bwrap cannot run refuses (SANDBOX_UNAVAILABLE) before anything runs. Never raises
    for the command's failure; the real workspace is never written.
    """
    argv = render_argv(profile, params)
    if isinstance(argv, PatchFailure):
        return CommandRun(name, (), failures=(argv,))
    if require_sandbox and sandbox_kind() is SandboxKind.NONE:
        return CommandRun(name, argv, failures=(sandbox_unavailable("[commands] require_sandbox"),))
    allowed = tuple(expected) or profile.expected_changed_paths
    banned = (*forbidden, *profile.forbidden_changed_paths)
    before_real = _fingerprint(root)
    overlay = overlay or {}
    first = _run_once(root, name, profile, argv, overlay)
    if isinstance(first, CommandRun):
        return _with_real_check(root, before_real, first)
    result, changed = first
    failures = _judge(name, result, changed, allowed, banned)
    files = tuple(GeneratedFile(path, *changed[path]) for path in sorted(changed))
    nondeterministic: tuple[str, ...] = ()
    if not failures and profile.run_twice:
        second = _run_once(root, name, profile, argv, overlay)
        if isinstance(second, CommandRun):
            return _with_real_check(
                root, before_real, CommandRun(name, argv, result, files, second.failures)
            )
        again = second[1]
        nondeterministic = tuple(
            sorted(p for p in changed.keys() | again.keys() if changed.get(p) != again.get(p))
        )
    run = CommandRun(name, argv, result, files, tuple(failures), nondeterministic)
    return _with_real_check(root, before_real, run)


def _with_real_check(root: Path, before: Fingerprint, run: CommandRun) -> CommandRun:
    """`run`, refused when the real workspace changed while it ran (every process is gone:
    `run_process` returns only after its whole tree was killed)."""
    if _fingerprint(root) == before:
        return run
    failure = _out_of_bounds(
        f"command {run.profile} changed the real workspace, not only its scratch copy",
        hint="a profile must write only relative to its working directory",
    )
    return replace(run, failures=(*run.failures, failure))


def _run_once(
    root: Path,
    name: str,
    profile: CommandProfile,
    argv: tuple[str, ...],
    overlay: Mapping[str, bytes | None],
) -> tuple[ProcessResult, dict[str, tuple[bytes | None, int | None]]] | CommandRun:
    scratch = Path(tempfile.mkdtemp(prefix="patchsmith-command-"))
    try:
        work = scratch / "work"
        try:
            _copy_tree(root, work)
            _lay_over(work, overlay)
        except OSError as exc:
            failure = PatchFailure(
                code=FailureCode.IO_ERROR,
                message=f"cannot make the scratch copy for command {name}: {exc}",
                rule="command_profile",
            )
            return CommandRun(name, argv, failures=(failure,))
        (scratch / "home").mkdir()
        (scratch / "tmp").mkdir()
        before = _snapshot(work)
        odd_before = _odd_entries(work)
        result = run_process(
            argv,
            cwd=work / profile.cwd,
            timeout_s=profile.timeout_seconds,
            env_allow=profile.env,
            env_set={"HOME": str(scratch / "home"), "TMPDIR": str(scratch / "tmp")},
            sandbox=SandboxSpec(writable=(scratch.resolve(),), network=profile.network),
        )
        outside = sorted(
            entry.name for entry in scratch.iterdir() if entry.name not in SCRATCH_ENTRIES
        )
        if outside:
            failure = _out_of_bounds(
                f"command {name} wrote outside the workspace: {', '.join(outside)} "
                "(next to the workspace copy); nothing is kept",
                hint="a profile may write only inside the workspace",
            )
            return CommandRun(name, argv, result, failures=(failure,))
        after = _snapshot(work)
        odd = _odd_entries(work)
        made = sorted(p for p, kind in odd.items() if odd_before.get(p) != kind)
        if made:
            failure = _out_of_bounds(
                f"command {name} created symlinks or special files: {', '.join(made)}; "
                "nothing is kept",
                hint="command-generated changes may only be regular files",
            )
            return CommandRun(name, argv, result, failures=(failure,))
        return result, _changes(before, after)
    finally:
        _remove(scratch)


def _judge(
    name: str,
    result: ProcessResult,
    changed: Mapping[str, object],
    allowed: Sequence[str],
    banned: Sequence[str],
) -> list[PatchFailure]:
    failures: list[PatchFailure] = []
    if not result.ok:
        if result.timed_out:
            why = f"timed out after {result.duration_s:.0f} s"
        elif result.start_error is not None:
            why = f"could not start: {result.start_error}"
        else:
            why = f"exited {result.exit_code}"
        failures.append(
            PatchFailure(
                code=FailureCode.COMMAND_FAILED,
                message=f"command {name} (`{' '.join(result.argv)}`) {why}; nothing is kept",
                hint="fix what the output below reports (often the manifest), then retry",
                excerpt=summarise_output(result),
                rule="command_profile",
            )
        )
        return failures
    forbidden = sorted(p for p in changed if banned and matches(banned, p))
    if forbidden:
        failures.append(
            _out_of_bounds(
                f"command {name} changed forbidden paths: {', '.join(forbidden)}; nothing is kept",
                hint="forbidden: " + ", ".join(banned),
            )
        )
    unexpected = sorted(
        p for p in changed if p not in forbidden and not (allowed and matches(allowed, p))
    )
    if unexpected:
        failures.append(
            _out_of_bounds(
                f"command {name} changed unexpected paths: {', '.join(unexpected)}; "
                "nothing is kept",
                hint="expected: "
                + (", ".join(allowed) or "(none declared)")
                + "; list what the command may change in expected_changed_paths",
            )
        )
    return failures


def _out_of_bounds(message: str, *, hint: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.COMMAND_OUT_OF_BOUNDS, message=message, hint=hint, rule="command_profile"
    )


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in SKIPPED_DIRS}


def _copy_tree(root: Path, work: Path) -> None:
    shutil.copytree(root, work, symlinks=True, ignore=_ignore)


def _lay_over(work: Path, overlay: Mapping[str, bytes | None]) -> None:
    for path, data in overlay.items():
        target = work / path
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_bytes(data)


def _snapshot(base: Path) -> Snapshot:
    found: Snapshot = {}
    for relative, full in walk_files(base):
        info = full.lstat()
        if stat.S_ISREG(info.st_mode):
            found[relative] = (full.read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def _odd_entries(base: Path) -> dict[str, str]:
    """Every entry that is not a regular file or a folder: symlinks (with their target,
    folders' included) and fifos, sockets, devices."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for entry in (*dirnames, *filenames):
            full = Path(dirpath) / entry
            try:
                info = full.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                found[full.relative_to(base).as_posix()] = "link:" + os.readlink(full)
            elif not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                found[full.relative_to(base).as_posix()] = f"special:{stat.S_IFMT(info.st_mode)}"
    return found


def _changes(before: Snapshot, after: Snapshot) -> dict[str, tuple[bytes | None, int | None]]:
    changed: dict[str, tuple[bytes | None, int | None]] = {}
    for path in before.keys() | after.keys():
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        changed[path] = (None, None) if new is None else new
    return changed


def _remove(scratch: Path) -> None:
    # a tool may leave read-only directories (Go's module cache does); open them first
    for dirpath, _dirnames, _filenames in os.walk(scratch):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, stat.S_IRWXU)
    shutil.rmtree(scratch, ignore_errors=True)
