"""A fleet run's live progress (rich, on stderr): done, changed, refused, failed, rate, ETA."""

from __future__ import annotations

from collections import Counter
from types import TracebackType
from typing import IO

from patchsmith.fleet.result import FleetStatus, RepoResult

__all__ = ["LiveProgress"]

_FAILED = (FleetStatus.ERROR, FleetStatus.VERIFICATION_FAILED, FleetStatus.VERIFICATION_ERROR)


class LiveProgress:
    """A `FleetProgress` callback drawing a rich progress bar; use as a context manager."""

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._counts: Counter[FleetStatus] = Counter()
        self._progress = Progress(
            TextColumn("fleet"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[tally]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=False,
        )
        self._task = self._progress.add_task("fleet", total=None, tally="", rate="")
        self._first: int | None = None

    def __enter__(self) -> LiveProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def tally(self) -> str:
        c = self._counts
        failed = sum(c[s] for s in _FAILED)
        return (
            f"changed {c[FleetStatus.CHANGED]} · no-op {c[FleetStatus.NO_OP]} · "
            f"refused {c[FleetStatus.REFUSED]} · "
            + (f"skipped {c[FleetStatus.SKIPPED]} · " if c[FleetStatus.SKIPPED] else "")
            + f"failed {failed}"
        )

    def __call__(self, result: RepoResult | None, done: int, total: int) -> None:
        if result is None:
            self._first = done
            self._progress.reset(self._task, total=total, completed=done)
        else:
            self._counts[result.status] += 1
        task = self._progress.tasks[0]
        elapsed = task.elapsed or 0.0
        fresh = done - (self._first or 0)
        rate = f"{fresh / elapsed:.1f} repo/s" if elapsed > 0 and fresh else ""
        self._progress.update(self._task, completed=done, tally=self.tally(), rate=rate)
