"""Fleet runs: one recipe or proposal over many repositories, locally or on Dask.

    >>> from patchsmith.fleet import run_fleet, fleet_report
    >>> summary = run_fleet("unittest-to-assert", "repos.txt")         # doctest: +SKIP
    >>> summary.counts                                                 # doctest: +SKIP
    >>> fleet_report(summary.run_id, html="report.html")               # doctest: +SKIP

`run_fleet` checks each repository out clean, runs the change through the normal
transaction, guards and verification, and commits each result to the run's SQLite
store as it lands, so a rerun resumes. Executors: a local process pool (default) or
Dask distributed (`pip install patchsmith[fleet]`). See docs/fleet.md.

Layer (docs/architecture.md): may import the workflows and everything below them; only `cli`
imports it, and it never imports `mcp`.
"""

from __future__ import annotations

import os
from pathlib import Path

from patchsmith.errors import PatchFailure
from patchsmith.fleet.change import ChangeKind, ChangeSpec, resolve_change
from patchsmith.fleet.executors import ExecutorKind
from patchsmith.fleet.html import render_html
from patchsmith.fleet.publish import PublishStatus, PublishSummary, publish_run
from patchsmith.fleet.repos import RepoSpec, parse_repos, read_repos_file
from patchsmith.fleet.result import FleetStatus, RepoResult
from patchsmith.fleet.run import (
    DEFAULT_RUNS_DIR,
    STORE_DAMAGE,
    FleetProgress,
    checked_summary,
    damaged_store,
    open_run,
    resume_fleet,
    run_fleet,
)
from patchsmith.fleet.summary import FleetSummary
from patchsmith.fleet.unit import WorkUnit, run_batch, run_unit

__all__ = [
    "DEFAULT_RUNS_DIR",
    "ChangeKind",
    "ChangeSpec",
    "ExecutorKind",
    "FleetProgress",
    "FleetStatus",
    "FleetSummary",
    "PublishStatus",
    "PublishSummary",
    "RepoResult",
    "RepoSpec",
    "WorkUnit",
    "fleet_report",
    "parse_repos",
    "publish_run",
    "read_repos_file",
    "render_html",
    "resolve_change",
    "resume_fleet",
    "run_batch",
    "run_fleet",
    "run_unit",
]


def fleet_report(
    run: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = DEFAULT_RUNS_DIR,
    html: str | os.PathLike[str] | None = None,
) -> FleetSummary | PatchFailure:
    """The summary of `run` (a run id under `runs_dir`, a run folder or its `fleet.db`).

    With `html`, also writes the run's static HTML report there. FILE_NOT_FOUND when
    there is no such run; STATE_DIR_UNSAFE when the run folder or its store is a link;
    IO_ERROR when the store is damaged or tampered with, or the page cannot be written.
    """
    from patchsmith.errors import FailureCode

    opened = open_run(run, runs_dir=runs_dir)
    if isinstance(opened, PatchFailure):
        return opened
    store, folder = opened
    with store:
        summary = checked_summary(store, folder)
        try:
            published = store.publications()
        except STORE_DAMAGE as exc:
            return damaged_store(store.path, exc)
    if isinstance(summary, PatchFailure):
        return summary
    if html is not None:
        try:
            page = render_html(summary, _change_links(published, folder, Path(html)))
        except STORE_DAMAGE as exc:
            return damaged_store(store.path, exc)
        try:
            Path(html).write_text(page, encoding="utf-8")
        except OSError as exc:
            return PatchFailure(
                FailureCode.IO_ERROR, f"cannot write {os.fspath(html)!r}: {exc}", file=str(html)
            )
    return summary


def _change_links(published: list[dict[str, object]], folder: Path, page: Path) -> dict[str, str]:
    """Each published repository's change description, as a link relative to `page`."""
    links: dict[str, str] = {}
    for item in published:  # oldest first: a later branch's description wins
        description = item.get("description")
        if item.get("status") == "published" and isinstance(description, str):
            target = (folder / description).absolute()
            links[str(item["key"])] = os.path.relpath(target, page.absolute().parent)
    return links
