"""A long call's two signals: progress reported out to its caller, and a cancel request in.

The workflows report a step (`report("profile tests: changed run")`) and the process
runner honours a cancel request, without knowing who listens: a caller that wants
either (the MCP server, for `verify`, `propose`, `run_recipe`) runs the call inside
`watched(...)` on its own thread. Outside such a block both are no-ops, so the library
and the CLI behave as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["cancel_requested", "cancelled", "report", "watched"]

_REPORTER: ContextVar[Callable[[str], None] | None] = ContextVar(
    "patchsmith_progress", default=None
)
_CANCEL: ContextVar[threading.Event | None] = ContextVar("patchsmith_cancel", default=None)


@contextmanager
def watched(
    reporter: Callable[[str], None] | None = None, cancel: threading.Event | None = None
) -> Iterator[None]:
    """Within this block (on this thread), `report` calls `reporter` and `cancel` can stop runs.

    `reporter` must not raise and should return quickly (it runs on the working
    thread); setting `cancel` from any thread stops the running program, and every
    program the call would start after it.
    """
    reporting = _REPORTER.set(reporter)
    cancelling = _CANCEL.set(cancel)
    try:
        yield
    finally:
        _CANCEL.reset(cancelling)
        _REPORTER.reset(reporting)


def report(step: str) -> None:
    """Tell whoever watches this call that it reached `step` (nothing when nobody does)."""
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter(step)


def cancel_requested() -> threading.Event | None:
    """The event that cancels this call when set, or None when it cannot be cancelled."""
    return _CANCEL.get()


def cancelled() -> bool:
    """Whether this call was asked to stop."""
    event = _CANCEL.get()
    return event is not None and event.is_set()
