"""Both executors over 50 generated repositories: the same results, repository by repository."""

from __future__ import annotations

from pathlib import Path

from patchsmith.fleet import FleetStatus, run_fleet

from .conftest import FLEET_SIZE


def test_local_and_dask_give_identical_results(fleet50: Path, tmp_path: Path) -> None:
    local = run_fleet("unittest-to-assert", fleet50, runs_dir=tmp_path, run_id="local", workers=2)
    dask = run_fleet(
        "unittest-to-assert",
        fleet50,
        runs_dir=tmp_path,
        run_id="dask",
        executor="dask",
        workers=2,
        batch=5,
        timeout=120,
    )

    assert local.ok and dask.ok, (local.errors, dask.errors)
    assert local.total == dask.total == FLEET_SIZE
    assert (local.executor, dask.executor) == ("local", "dask")
    assert [r.outcome() for r in local.results] == [r.outcome() for r in dask.results]
    # the generated fleet holds every kind of outcome a recipe can have
    assert local.counts == {
        "changed": 34,
        "no_op": 10,
        "refused": 6,
        "verification_failed": 0,
        "verification_error": 0,
        "skipped": 0,
        "error": 0,
        "pending": 0,
    }
    changed = [r for r in local.results if r.status is FleetStatus.CHANGED]
    assert all(r.diff.startswith("diff --git a/tests/test_core.py") for r in changed)
