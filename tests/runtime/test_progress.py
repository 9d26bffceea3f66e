"""runtime/progress.py: steps reported to a watcher, and a cancel that stops a running program."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from patchsmith.runtime.process import run_process
from patchsmith.runtime.progress import cancelled, report, watched

SLEEPER = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose: it runs nothing
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


class TestReport:
    def test_steps_reach_the_watcher_only_inside_the_block(self) -> None:
        steps: list[str] = []
        report("before")
        with watched(steps.append):
            report("one")
            report("two")
        report("after")

        assert ["one", "two"] == steps

    def test_cancelled_reads_the_event(self) -> None:
        event = threading.Event()
        assert not cancelled()
        with watched(cancel=event):
            assert not cancelled()
            event.set()
            assert cancelled()
        assert not cancelled()


class TestCancel:
    def test_a_running_program_is_stopped(self, tmp_path: Path) -> None:
        """Setting the event kills the program (which would sleep 10 minutes) and says so."""
        event = threading.Event()
        pid_file = tmp_path / "pid"

        def cancel_once_started() -> None:
            while not pid_file.exists() or not pid_file.read_text():
                time.sleep(0.02)
            event.set()

        helper = threading.Thread(target=cancel_once_started)
        helper.start()
        with watched(cancel=event):
            result = run_process(
                [sys.executable, "-c", SLEEPER, str(pid_file)], cwd=tmp_path, timeout_s=900
            )
        helper.join()

        assert result.exit_code is None
        assert not result.ok
        assert not result.timed_out
        assert "cancelled" in (result.start_error or "")
        assert not _alive(int(pid_file.read_text()))

    def test_nothing_starts_once_cancelled(self, tmp_path: Path) -> None:
        event = threading.Event()
        event.set()
        marker = tmp_path / "ran"

        with watched(cancel=event):
            result = run_process(
                [sys.executable, "-c", f"open({str(marker)!r}, 'w')"], cwd=tmp_path, timeout_s=60
            )

        assert not result.ok
        assert "cancelled" in (result.start_error or "")
        assert not marker.exists()

    def test_an_uncancelled_run_finishes_as_before(self, tmp_path: Path) -> None:
        with watched(cancel=threading.Event()):
            result = run_process([sys.executable, "-c", "print('hi')"], cwd=tmp_path, timeout_s=60)

        assert result.ok
        assert "hi" in result.stdout

    def test_a_timeout_is_still_a_timeout(self, tmp_path: Path) -> None:
        with watched(cancel=threading.Event()):
            result = run_process(
                [sys.executable, "-c", "import time; time.sleep(60)"], cwd=tmp_path, timeout_s=0.3
            )

        assert result.timed_out
        assert result.start_error is None
