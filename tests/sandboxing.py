"""Helpers for tests of the sandbox: skip where bwrap cannot run, or take it away."""

from __future__ import annotations

import pytest

from patchsmith.runtime import sandbox

needs_bwrap = pytest.mark.skipif(
    sandbox.usable_bwrap() is None, reason="bwrap cannot make a sandbox on this machine"
)
"""Marks a test of what the bwrap sandbox prevents."""


def take_bwrap_away(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process act as on a machine without bwrap: every run falls back."""
    monkeypatch.setattr(sandbox, "usable_bwrap", lambda: None)


def processes_left(tag: str, *, within_s: float = 5.0) -> list[int]:
    """The live processes tagged `tag` once the kernel has had `within_s` to reap them.

    A PID namespace's processes are killed when its first process exits, but their
    entries leave `/proc` a moment later (zombies first): an immediate look can still list
    a process that is already dead. Zombies count as gone; anything alive after the wait
    is returned.
    """
    import time

    deadline = time.monotonic() + within_s
    while True:
        alive = [pid for pid in processes_tagged(tag) if not _zombie(pid)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return True  # gone already
    return bool(fields) and fields[0] in (b"Z", b"X")


def processes_tagged(tag: str, *, running: bool = False) -> list[int]:
    """Host pids whose command line holds `tag` (a sandboxed process is listed too);
    `running`: only the tool itself, not the bwrap still setting up its sandbox."""
    import os

    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if tag.encode() in cmdline and not (running and b"bwrap" in cmdline.split(b"\0")[0]):
            found.append(int(name))
    return found
