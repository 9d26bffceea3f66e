"""Fixtures for fleet tests: generated repositories, made once per session where read-only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from patchsmith.fleet import run_fleet

from .forge import CHANGED, make_forge_fleet
from .sample import make_fleet, make_repo

FLEET_SIZE = 50


@pytest.fixture(scope="session", name="fleet50")
def _fleet50(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """50 generated repositories and their `repos.txt` (never written to: clones are shared)."""
    return make_fleet(tmp_path_factory.mktemp("fleet50"), FLEET_SIZE)


@pytest.fixture(scope="session", name="small_fleet")
def _small_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven generated repositories (changed, no-op and refused ones) and their `repos.txt`."""
    return make_fleet(tmp_path_factory.mktemp("fleet7"), 7)


@pytest.fixture(scope="session", name="finished_runs")
def _finished_runs(tmp_path_factory: pytest.TempPathFactory, small_fleet: Path) -> Path:
    """A runs folder holding run `done`: unittest-to-assert over the small fleet, finished."""
    runs = tmp_path_factory.mktemp("runs")
    summary = run_fleet("unittest-to-assert", small_fleet, runs_dir=runs, run_id="done", workers=2)
    assert summary.ok, summary.errors
    return runs


@pytest.fixture(name="runs")
def _runs(finished_runs: Path, tmp_path: Path) -> Path:
    """A private copy of the finished runs folder."""
    copy = tmp_path / "runs"
    shutil.copytree(finished_runs, copy)
    return copy


@pytest.fixture(name="python_repo")
def _python_repo(tmp_path: Path) -> Path:
    """One Python repository whose tests the recipe changes."""
    return make_repo(tmp_path / "repo", 0)


@pytest.fixture(scope="session", name="forge_fleet")
def _forge_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 generated repositories, each with a bare `forge` remote (its `repos.txt`)."""
    return make_forge_fleet(tmp_path_factory.mktemp("forge"), 20)


@pytest.fixture(scope="session", name="forge_done")
def _forge_done(tmp_path_factory: pytest.TempPathFactory, forge_fleet: Path) -> Path:
    """A runs folder holding run `mig`: unittest-to-assert over the forge fleet, finished."""
    runs = tmp_path_factory.mktemp("forge-runs")
    summary = run_fleet("unittest-to-assert", forge_fleet, runs_dir=runs, run_id="mig", workers=2)
    assert summary.ok and summary.counts["changed"] == len(CHANGED), summary.counts
    return runs
