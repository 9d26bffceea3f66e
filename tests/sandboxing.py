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
