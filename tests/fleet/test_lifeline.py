"""`stop_on_signals` and `die_with_parent`, one behaviour at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from patchsmith.fleet.lifeline import PARENT_ENV, FleetInterrupted, stop_on_signals


def test_sigterm_becomes_fleet_interrupted_once_and_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(FleetInterrupted) as caught, stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # a second one during clean-up: ignored
    assert caught.value.signum == signal.SIGTERM
    assert str(caught.value) == "SIGTERM"
    assert isinstance(caught.value, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_ignored_signal_stays_ignored() -> None:
    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)


def test_outside_the_main_thread_nothing_changes() -> None:
    seen: list[object] = []

    def body() -> None:
        with stop_on_signals():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [signal.getsignal(signal.SIGINT)]


CHILD = (
    "import sys; from patchsmith.fleet.lifeline import die_with_parent; "
    "print(die_with_parent(), flush=True)"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_with_its_driver_alive_is_armed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**os.environ, PARENT_ENV: str(os.getpid())},
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
    assert (done.returncode, done.stdout) == (0, "True\n")


def test_a_worker_whose_driver_is_already_gone_ends_at_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**os.environ, PARENT_ENV: "999999999"},  # not its parent: orphaned already
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
    assert done.returncode == -signal.SIGKILL
    assert done.stdout == ""


class FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, ...]] = []

    def prctl(self, *args: int) -> int:
        self.calls.append(args)
        return 0


def test_die_with_parent_asks_the_kernel_for_sigterm(monkeypatch: pytest.MonkeyPatch) -> None:
    from patchsmith.fleet import lifeline

    libc = FakeLibc()
    handlers: dict[int, object] = {}
    ended: list[bool] = []
    monkeypatch.setattr(lifeline.ctypes, "CDLL", lambda *_a, **_k: libc)
    monkeypatch.setattr(lifeline.signal, "signal", lambda s, h: handlers.__setitem__(s, h))
    monkeypatch.setattr(lifeline, "_end_group", lambda *_a: ended.append(True))
    monkeypatch.setattr(lifeline.sys, "platform", "linux")
    monkeypatch.setenv(PARENT_ENV, str(os.getppid()))

    assert lifeline.die_with_parent() is True
    assert libc.calls == [(1, int(signal.SIGTERM), 0, 0, 0)]  # PR_SET_PDEATHSIG
    assert handlers[signal.SIGTERM] is lifeline._end_group
    assert ended == []

    monkeypatch.setenv(PARENT_ENV, str(os.getppid() + 1))  # the driver already gone
    lifeline.die_with_parent()
    assert ended == [True]

    monkeypatch.setattr(lifeline.sys, "platform", "darwin")
    libc.calls.clear()
    assert lifeline.die_with_parent() is False
    assert libc.calls == []
