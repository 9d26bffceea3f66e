"""Run one external command: an argv list, a scrubbed environment, a deadline, bounded output.

This is the only place patchsmith starts a subprocess. Verification profiles and
command-generated changes both go through `run_process`, so every command gets the
same guarantees: no shell, an environment built from an allow-list, the whole
process group killed on timeout, and output held in memory only up to a bound (the
digest still covers every byte, so evidence can prove what the tool printed).
A run given a `SandboxSpec` (a repository's program) runs inside bubblewrap where it
works (runtime/sandbox.py); without it, every process the run started that can still
be found by its environment marker is killed before `run_process` returns.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from patchsmith.runtime import sandbox as _sandbox
from patchsmith.runtime.progress import cancel_requested
from patchsmith.runtime.sandbox import SandboxKind, SandboxSpec, bwrap_argv, sandbox_env

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "ESSENTIAL_ENV",
    "ProcessResult",
    "output_digest",
    "run_process",
    "scrub_env",
]

ESSENTIAL_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
)
"""What a tool needs to be found and to start: the executable search path, a home
directory (many tools read their config from it), the locale and the temp directory.
Windows needs SYSTEMROOT/COMSPEC/PATHEXT to start anything at all."""

DEFAULT_MAX_OUTPUT_BYTES = 1_000_000
"""Per stream. Test suites can print megabytes; the head and the tail carry the story."""

_KILL_GRACE_SECONDS = 2.0
"""After SIGTERM on timeout, how long the group gets before SIGKILL."""

_READER_JOIN_SECONDS = 2.0
"""After the main process exits, how long to wait for the pipes to close before
killing stragglers (a background child still holding stdout open)."""

_CANCEL_POLL_SECONDS = 0.1
"""How often a run that can be cancelled looks whether it was."""

RUN_MARKER = "PATCHSMITH_RUN_ID"
"""Set in the environment of a run that asked for a sandbox: every process it starts
inherits it, so the ones that left its process group can still be found and killed: a
command that called `setsid` where bubblewrap is missing, or bubblewrap's own process
inside the sandbox when the one outside was stopped before that one had tied itself to
it (bwrap's `--die-with-parent` is set after its fork; a cancel in that instant left the
sandbox running, in a session of its own)."""

_PR_SET_PDEATHSIG = 1

_SWEEP_ROUNDS = 50
_SWEEP_PAUSE_S = 0.02


@dataclass(frozen=True)
class ProcessResult:
    """What one command did: the evidence a verification or generation step keeps.

    `exit_code` is `None` when the command could not start (`start_error` says why)
    or was killed on timeout (`timed_out`). A negative exit code is the signal that
    ended it (POSIX). `stdout`/`stderr` are decoded UTF-8 (undecodable bytes
    replaced) and bounded: when a stream was longer than the bound, its middle is
    replaced by one marker line and `*_truncated` is true. `output_sha256` is
    `sha256(sha256(stdout) + sha256(stderr))` over the complete byte streams,
    computed while streaming, so it covers what was dropped too.
    """

    argv: tuple[str, ...]
    cwd: str
    exit_code: int | None
    duration_s: float
    stdout: str
    stderr: str
    timed_out: bool = False
    start_error: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    output_sha256: str = field(
        default_factory=lambda: output_digest(hashlib.sha256().digest(), hashlib.sha256().digest())
    )
    sandbox: SandboxKind | None = None
    """How the run was isolated when a sandbox was asked for; `None` for patchsmith's own
    commands (git), which run unsandboxed."""

    @property
    def ok(self) -> bool:
        """True when the command started, finished in time and exited 0."""
        return self.exit_code == 0 and not self.timed_out and self.start_error is None


def scrub_env(
    allow: Sequence[str],
    *,
    source: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment a command gets: only variables whose names match `allow`.

    Entries of `allow` are exact names or shell-style patterns (`LC_*`, `PYTHON*`).
    `extra` sets variables explicitly (after the filter, so a profile can set what it
    does not inherit). `source` defaults to this process's environment.
    """
    env = dict(os.environ if source is None else source)
    exact = {name for name in allow if not _is_pattern(name)}
    patterns = [name for name in allow if _is_pattern(name)]
    kept = {
        name: value
        for name, value in env.items()
        if name in exact or any(fnmatch.fnmatchcase(name, p) for p in patterns)
    }
    if extra:
        kept.update(extra)
    return kept


def run_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    timeout_s: float,
    env_allow: Sequence[str] = ESSENTIAL_ENV,
    env_set: Mapping[str, str] | None = None,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    sandbox: SandboxSpec | None = None,
) -> ProcessResult:
    """Run `argv` (never through a shell) in `cwd` and wait for it, at most `timeout_s`.

    The command runs in a new process group (session) with stdin closed; on timeout
    the whole group is terminated, then killed. With `sandbox`, it runs inside
    bubblewrap when this machine can make one (`result.sandbox` says which it got).
    Never raises for the command's own failure: a missing executable or cwd is a
    result with `start_error` set. Inside `progress.watched(cancel=...)`, setting the
    event stops the group as a timeout would (`start_error` says it was cancelled).
    """
    args = tuple(str(a) for a in argv)
    if not args:
        raise ValueError("argv must not be empty")
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    workdir = str(Path(cwd))
    env = scrub_env(env_allow, extra=env_set)
    started = time.monotonic()
    cancel = cancel_requested()
    if cancel is not None and cancel.is_set():
        return _not_started(args, workdir, started, "cancelled before it started")
    if not Path(workdir).is_dir():
        return _not_started(args, workdir, started, f"working directory not found: {workdir}")
    launched = args
    kind: SandboxKind | None = None
    marker: str | None = None
    before_exec: Callable[[], None] | None = None
    if sandbox is not None:
        marker = uuid.uuid4().hex
        env[RUN_MARKER] = marker
        bwrap = _sandbox.usable_bwrap()
        if bwrap is not None:
            kind = SandboxKind.BWRAP
            # Inside, a missing program would be bwrap's exit 1: say it did not start.
            missing = _not_runnable(args[0], Path(workdir), env, sandbox)
            if missing is not None:
                return _not_started(args, workdir, started, missing, kind)
            env = sandbox_env(env, sandbox)
            layers = bool(sandbox.layered) and _sandbox.layers_supported()
            launched = tuple(bwrap_argv(bwrap, args, sandbox, cwd=Path(workdir), layers=layers))
            before_exec = _die_with_parent()
        else:
            kind = SandboxKind.NONE
    try:
        proc = subprocess.Popen(
            launched,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=sys.platform != "win32",
            preexec_fn=before_exec,
        )
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return _not_started(args, workdir, started, f"{args[0]}: {reason}", kind)

    assert proc.stdout is not None and proc.stderr is not None  # PIPE was asked for
    out = _Collector(proc.stdout, max_output_bytes)
    err = _Collector(proc.stderr, max_output_bytes)
    out.thread.start()
    err.thread.start()

    stopped = not _wait(proc, timeout_s, cancel)
    interrupted = stopped and cancel is not None and cancel.is_set()
    timed_out = stopped and not interrupted
    if stopped:
        _stop_group(proc)
    # The main process is gone; a child it left behind may still hold the pipes open.
    out.thread.join(_READER_JOIN_SECONDS)
    err.thread.join(_READER_JOIN_SECONDS)
    # Nothing a command started may outlive it (nor keep writing into the workspace).
    _signal_group(proc, signal.SIGKILL)
    if marker is not None:
        _kill_marked(marker)
    out.thread.join()
    err.thread.join()
    duration = time.monotonic() - started
    stderr = err.text()
    if kind is SandboxKind.BWRAP and proc.returncode == 1 and stderr.startswith("bwrap: "):
        # bwrap itself failed (the program is not visible inside: under the private /tmp,
        # say): the command never started, it did not fail
        why = stderr.strip().splitlines()[0]
        return _not_started(args, workdir, started, why, kind)

    return ProcessResult(
        argv=args,
        cwd=workdir,
        exit_code=None if stopped else proc.returncode,
        # not a start failure, but like one it proves nothing: the run was stopped
        start_error="cancelled while running" if interrupted else None,
        duration_s=duration,
        stdout=out.text(),
        stderr=stderr,
        timed_out=timed_out,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        output_sha256=output_digest(out.sha256.digest(), err.sha256.digest()),
        sandbox=kind,
    )


def output_digest(stdout_sha256: bytes, stderr_sha256: bytes) -> str:
    """One digest for both streams, from each stream's raw SHA-256 digest."""
    return hashlib.sha256(stdout_sha256 + stderr_sha256).hexdigest()


class _Collector:
    """Reads one pipe to the end on a thread: keeps a head and a tail, hashes everything."""

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        self._pipe = pipe
        self._head_limit = max(limit // 2, 0)
        self._tail_limit = max(limit - self._head_limit, 0)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self.sha256 = hashlib.sha256()
        self.thread = threading.Thread(target=self._read, daemon=True)

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def _read(self) -> None:
        try:
            while chunk := self._pipe.read1(65536):  # type: ignore[attr-defined]
                self._take(bytes(chunk))
        finally:
            self._pipe.close()

    def _take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.sha256.update(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self._tail_limit:
            self._tail += chunk
            if len(self._tail) > self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + self._tail.decode("utf-8", errors="replace")
        dropped = self.total - len(self._head) - len(self._tail)
        tail = self._tail.decode("utf-8", errors="replace")
        return f"{head}\n[... {dropped} bytes omitted ...]\n{tail}"


def _wait(proc: subprocess.Popen[bytes], timeout_s: float, cancel: threading.Event | None) -> bool:
    """Wait for `proc`: True when it exited, False on timeout or once `cancel` is set."""
    if cancel is None:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout_s
    while not cancel.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            proc.wait(timeout=min(left, _CANCEL_POLL_SECONDS))
        except subprocess.TimeoutExpired:
            continue
        return True
    return False


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the command's whole process group, then kill what is left."""
    _signal_group(proc, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_KILL_GRACE_SECONDS)
    _signal_group(proc, signal.SIGKILL)
    proc.wait()


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    if sys.platform == "win32":  # pragma: no cover - no process groups to signal
        proc.kill()
        return
    # start_new_session made the child a group leader: its pid is the group id.
    # The group may already be gone: nothing left to signal.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _not_started(
    args: tuple[str, ...],
    cwd: str,
    started: float,
    why: str,
    kind: SandboxKind | None = None,
) -> ProcessResult:
    return ProcessResult(
        argv=args,
        cwd=cwd,
        exit_code=None,
        duration_s=time.monotonic() - started,
        stdout="",
        stderr="",
        start_error=why,
        sandbox=kind,
    )


def _die_with_parent() -> Callable[[], None] | None:
    """What bwrap runs between fork and exec: SIGKILL it when this process dies.

    bwrap's own `--die-with-parent` is set only once bwrap runs; a patchsmith killed in
    that first instant would leave it (and the command) running. Set before exec and
    checked against the parent's pid, no such window is left. The calling thread waits
    for the run, so its exit (which also fires the signal) cannot come first.
    """
    if not sys.platform.startswith("linux"):  # pragma: no cover - prctl is Linux's
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    parent = os.getpid()

    def before_exec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return before_exec


def _not_runnable(
    program: str, cwd: Path, env: Mapping[str, str], sandbox: SandboxSpec | None = None
) -> str | None:
    """Why `program` cannot be executed (the message `Popen` would give), or `None`.

    With `sandbox`, a path under a folder bound over another (a copy's `.venv`
    placeholder) is looked up where the sandbox will see it: in the bound source.
    """
    if os.sep in program:
        path: str | None = _as_seen(cwd / program, sandbox)
    else:
        path = shutil.which(program, path=env.get("PATH", os.defpath))
    if path is None or not os.path.exists(path):
        return f"{program}: No such file or directory"
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        return f"{program}: Permission denied"
    return None


def _as_seen(path: Path, sandbox: SandboxSpec | None) -> str:
    """`path` on the host as the sandbox will show it (bound folders mapped to their source)."""
    if sandbox is not None:
        for source, target in (*sandbox.layered, *sandbox.read_only):
            if path.is_relative_to(target):
                return str(source / path.relative_to(target))
    return str(path)


def _kill_marked(marker: str) -> None:
    """Kill every process whose environment carries `marker`, until none is left.

    Without a PID namespace this is how a child that left the process group (`setsid`,
    a double fork) is found; one that rewrote its environment is not (docs/limits.md).
    """
    if not sys.platform.startswith("linux"):  # pragma: no cover - /proc is Linux's
        return
    needle = f"{RUN_MARKER}={marker}".encode()
    for _ in range(_SWEEP_ROUNDS):
        found = [pid for pid in _pids() if _carries(pid, needle)]
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(_SWEEP_PAUSE_S)


def _pids() -> list[int]:
    try:
        names = os.listdir("/proc")
    except OSError:  # pragma: no cover - no /proc mounted
        return []
    own = os.getpid()
    return [int(n) for n in names if n.isdigit() and int(n) != own]


def _carries(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return False
    # A zombie (killed, not yet reaped by its parent) shows an empty environment.
    return needle in environ.split(b"\0")


def _is_pattern(name: str) -> bool:
    return any(ch in name for ch in "*?[")
