"""`run_fleet`: the store, resuming, run-level refusals, the report."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet import (
    ChangeSpec,
    FleetStatus,
    FleetSummary,
    RepoSpec,
    fleet_report,
    resolve_change,
    run_fleet,
)
from patchsmith.fleet.executors import DaskExecutor
from patchsmith.fleet.run import _RunLock, default_run_id, open_run
from patchsmith.fleet.store import FleetStore
from patchsmith.fleet.unit import CHECKOUT_MARKER

COUNTS = {
    "changed": 5,
    "no_op": 1,
    "refused": 1,
    "verification_failed": 0,
    "verification_error": 0,
    "skipped": 0,
    "error": 0,
    "pending": 0,
}


def done(runs: Path) -> FleetSummary:
    summary = fleet_report("done", runs_dir=runs)
    assert isinstance(summary, FleetSummary)
    return summary


def test_a_finished_run(runs: Path) -> None:
    summary = done(runs)

    assert summary.complete and summary.ok
    assert summary.counts == COUNTS
    assert [r.key for r in summary.results] == [f"repo{n:04d}" for n in range(7)]
    assert summary.executor == "local" and summary.workers == 2


def test_a_rerun_skips_every_finished_repository(runs: Path, small_fleet: Path) -> None:
    seen: list[tuple[str | None, int, int]] = []
    leftover = runs / "done" / "work" / "repo-0123456789abcdef-killed"
    (leftover / "checkout").mkdir(parents=True)
    (leftover / CHECKOUT_MARKER).write_bytes(b"")

    again = run_fleet(
        "unittest-to-assert",
        small_fleet,
        runs_dir=runs,
        run_id="done",
        progress=lambda r, d, t: seen.append((r and r.key, d, t)),
    )

    assert again.skipped == 7 and again.complete
    assert seen == [(None, 7, 7)]  # nothing ran
    assert not leftover.exists()  # what a killed run left in work/ is swept
    assert [r.outcome() for r in again.results] == [r.outcome() for r in done(runs).results]


def test_default_run_id(small_fleet: Path) -> None:
    """The same change over the same repositories gets the same id; another change another."""
    one = resolve_change("unittest-to-assert")
    two = resolve_change("logging-warn-to-warning")
    assert isinstance(one, ChangeSpec) and isinstance(two, ChangeSpec)
    repos = [RepoSpec("a", "/a"), RepoSpec("b", "/b")]

    assert default_run_id(one, repos) == default_run_id(one, list(repos))
    assert default_run_id(one, repos).startswith("unittest-to-assert-")
    assert default_run_id(one, repos) != default_run_id(two, repos)
    assert default_run_id(one, repos) != default_run_id(one, repos[:1])


def test_retry_errors_and_appended_repositories(small_fleet: Path, tmp_path: Path) -> None:
    listing = small_fleet.parent / "partial.txt"
    listing.write_text("repo0004\ngone\n")
    first = run_fleet("unittest-to-assert", listing, runs_dir=tmp_path, run_id="r1", workers=1)
    assert [r.status for r in first.results] == [FleetStatus.NO_OP, FleetStatus.ERROR]

    listing.write_text("repo0004\ngone\nrepo0000\n")
    grown = run_fleet(
        "unittest-to-assert", listing, runs_dir=tmp_path, run_id="r1", retry_errors=True
    )

    assert grown.skipped == 1  # repo0004; `gone` was retried, repo0000 is new
    assert grown.total == 3 and grown.complete
    assert grown.results[2].status is FleetStatus.CHANGED
    store = FleetStore.open(tmp_path / "r1", create=False)
    assert isinstance(store, FleetStore)
    with store:
        assert len(store.sessions()) == 2
        assert store.executors() == {"repo0004": "local", "gone": "local", "repo0000": "local"}


def test_bad_entries_are_results_not_tracebacks(tmp_path: Path, small_fleet: Path) -> None:
    summary = run_fleet(
        "unittest-to-assert",
        ["nowhere", f"{small_fleet.parent / 'repo0000'}@no-such-ref", "repo@", "-rf"],
        runs_dir=tmp_path,
        workers=2,
    )

    assert summary.complete and summary.total == 4
    assert {r.status for r in summary.results} == {FleetStatus.ERROR}
    assert {e.code for r in summary.results for e in r.errors} == {
        FailureCode.REPOSITORY_UNAVAILABLE
    }


def test_another_change_under_the_same_id_is_refused(runs: Path, small_fleet: Path) -> None:
    other = run_fleet("logging-warn-to-warning", small_fleet, runs_dir=runs, run_id="done")

    assert [e.code for e in other.errors] == [FailureCode.FLEET_RUN_CONFLICT]
    assert other.results == ()
    assert done(runs).counts == COUNTS


def test_a_run_in_progress_is_refused(runs: Path, small_fleet: Path) -> None:
    lock = _RunLock(runs / "done")
    assert lock.acquire()
    try:
        busy = run_fleet("unittest-to-assert", small_fleet, runs_dir=runs, run_id="done")
    finally:
        lock.release()

    assert busy.errors[0].code is FailureCode.FLEET_RUN_CONFLICT
    assert "in progress" in busy.errors[0].message


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"run_id": "../escape"}, FailureCode.FLEET_RUN_CONFLICT),
        ({"executor": "cloud"}, FailureCode.FLEET_RUN_CONFLICT),
        ({"batch": 0}, FailureCode.FLEET_RUN_CONFLICT),
        ({"timeout": 0}, FailureCode.FLEET_RUN_CONFLICT),
        ({"kind": "recipe", "change": "no-such-recipe"}, FailureCode.RECIPE_NOT_FOUND),
        ({"repos": "missing.txt"}, FailureCode.FILE_NOT_FOUND),
    ],
)
def test_run_level_refusals(
    small_fleet: Path, tmp_path: Path, options: dict[str, object], code: FailureCode
) -> None:
    change = options.pop("change", "unittest-to-assert")
    repos = options.pop("repos", small_fleet)
    if repos == "missing.txt":
        repos = tmp_path / "missing.txt"

    summary = run_fleet(change, repos, runs_dir=tmp_path, **options)  # type: ignore[arg-type]

    assert [e.code for e in summary.errors] == [code]
    assert summary.total == 0 and not summary.ok
    assert not list(tmp_path.glob("*/fleet.db"))


def test_dask_missing_is_a_structured_error(
    small_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    real = importlib.import_module

    def no_distributed(name: str, *args: object) -> object:
        if name == "distributed":
            raise ImportError(name)
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr("patchsmith.fleet.executors.importlib.import_module", no_distributed)

    summary = run_fleet("unittest-to-assert", small_fleet, runs_dir=tmp_path, executor="dask")

    assert summary.errors[0].code is FailureCode.NOT_SUPPORTED_YET
    assert "patchsmith[fleet]" in (summary.errors[0].hint or "")
    assert summary.counts["pending"] == 7


def test_unreachable_scheduler() -> None:
    started = DaskExecutor.start(workers=1, scheduler="tcp://127.0.0.1:9", connect_timeout=1)

    assert isinstance(started, PatchFailure)
    assert started.code is FailureCode.IO_ERROR


def test_report_and_open_run(runs: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"

    by_id = fleet_report("done", runs_dir=runs, html=page)
    by_folder = fleet_report(runs / "done")
    by_file = fleet_report(runs / "done" / "fleet.db")

    for summary in (by_id, by_folder, by_file):
        assert isinstance(summary, FleetSummary)
        assert summary.counts == COUNTS
    assert page.read_text().startswith("<!DOCTYPE html>")
    missing = open_run("nope", runs_dir=runs)
    assert isinstance(missing, PatchFailure) and missing.code is FailureCode.FILE_NOT_FOUND
    unwritable = fleet_report("done", runs_dir=runs, html=tmp_path / "no" / "dir" / "x.html")
    assert isinstance(unwritable, PatchFailure) and unwritable.code is FailureCode.IO_ERROR


def test_summary_text_and_json(runs: Path) -> None:
    summary = done(runs)

    text = summary.to_text()
    data = summary.to_json(diffs=False)

    assert "changed                         5" in text
    assert "DIFF_BUDGET_EXCEEDED" in text
    assert "repo0006" in text and "repo0006" not in summary.to_text(repos=False)
    assert data["counts"] == summary.counts
    assert all("diff" not in r for r in data["results"])  # type: ignore[attr-defined]
    assert "diff" in summary.to_json()["results"][0]  # type: ignore[index]


def test_store_is_plain_sqlite(runs: Path) -> None:
    with sqlite3.connect(runs / "done" / "fleet.db") as db:
        rows = db.execute("SELECT status, COUNT(*) FROM result GROUP BY status").fetchall()

    assert dict(rows) == {k: v for k, v in COUNTS.items() if v}


def test_an_aborted_run_keeps_what_landed(small_fleet: Path, tmp_path: Path) -> None:
    """Ctrl-C (here: a progress callback that raises) stops the workers; results stay."""

    def stop(result: object, _done: int, _total: int) -> None:
        if result is not None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_fleet(
            "unittest-to-assert",
            small_fleet,
            runs_dir=tmp_path,
            run_id="stopped",
            workers=2,
            progress=stop,
        )

    summary = fleet_report("stopped", runs_dir=tmp_path)
    assert isinstance(summary, FleetSummary)
    assert len(summary.results) == 1 and summary.counts["pending"] == 6
