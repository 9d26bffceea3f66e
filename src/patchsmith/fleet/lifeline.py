"""Fleet processes stop together: a stopped driver stops its workers, a dead one too.

The driver turns SIGTERM and SIGINT into `FleetInterrupted` while it runs workers, so
the run's normal abort path kills every worker's process group (git and whatever else a
worker started) before the driver exits. A worker child asks the kernel for a signal
when the driver thread that started it dies (`PR_SET_PDEATHSIG`, Linux), even by
SIGKILL, and then kills its own process group: no worker or git outlives its driver.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["PARENT_ENV", "FleetInterrupted", "die_with_parent", "stop_on_signals"]

PARENT_ENV = "PATCHSMITH_FLEET_PARENT"
"""The driver's pid, given to each worker child so it can tell it was orphaned early."""

_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class FleetInterrupted(KeyboardInterrupt):
    """SIGTERM or SIGINT arrived while a fleet run was driving its workers."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Inside, SIGTERM and SIGINT raise `FleetInterrupted` (once) in the main thread.

    A signal the process ignores stays ignored; outside the main thread (where Python
    cannot install handlers) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        if not fired:  # a second signal must not break the clean-up of the first
            fired.append(signum)
            raise FleetInterrupted(signum)

    previous = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS}
    for sig, before in previous.items():
        if before is not signal.SIG_IGN:
            signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


def _end_group(*_args: object) -> None:
    """Kill this process and everything it started (it leads its own process group)."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)  # pragma: no cover - not a group leader


def die_with_parent() -> bool:
    """In a worker child: end this process group when the driver that started it dies.

    True when the kernel will tell (Linux); elsewhere the driver's own abort path and
    the end of the worker's input are what stop it.
    """
    signal.signal(signal.SIGTERM, _end_group)
    armed = False
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        armed = int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)) == 0
    parent = os.environ.get(PARENT_ENV, "")
    if parent.isdigit() and os.getppid() != int(parent):
        _end_group()  # the driver died before the kernel was asked: too late to be told
    return armed
