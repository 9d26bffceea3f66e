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
