"""A run folder is never used through a link, and the resume sweep deletes only its own folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchsmith.cli import main
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet import FleetSummary, fleet_report, run_fleet
from patchsmith.fleet.unit import CHECKOUT_MARKER, folder_prefix

from .sample import make_fleet


@pytest.fixture(name="fleet")
def _fleet(tmp_path: Path) -> Path:
    return make_fleet(tmp_path / "fleet", 2)


def precious(root: Path) -> Path:
    """A folder someone cares about: a project and photos, and a planted sweep marker."""
    (root / "important_project").mkdir(parents=True)
    (root / "important_project" / "main.py").write_text("print('keep me')\n")
    (root / "photos").mkdir()
    (root / "photos" / "holiday.jpg").write_bytes(b"\xff\xd8jpeg")
    # looks exactly like a checkout folder a worker left behind, marker included
    planted = root / (folder_prefix("elsewhere") + "x")
    planted.mkdir()
    (planted / CHECKOUT_MARKER).write_bytes(b"")
    return root


def listing(root: Path) -> list[str]:
    return sorted(os.fspath(p.relative_to(root)) for p in root.rglob("*"))


def refused(summary: FleetSummary) -> PatchFailure:
    assert summary.results == ()
    (failure,) = summary.errors
    assert failure.code is FailureCode.STATE_DIR_UNSAFE, failure
    return failure


def test_a_linked_work_folder_is_refused_and_nothing_is_deleted(
    fleet: Path, tmp_path: Path
) -> None:
    target = precious(tmp_path / "home")
    before = listing(target)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    (run_dir / "work").symlink_to(target)

    runs = tmp_path / "runs"
    failure = refused(run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r"))

    assert "work" in failure.message and "symlink" in failure.message
    assert listing(target) == before


def test_a_linked_work_folder_on_resume_is_refused(fleet: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r", retry_errors=True)
    assert first.complete, first.errors
    target = precious(tmp_path / "home")
    before = listing(target)
    os.rmdir(runs / "r" / "work")
    (runs / "r" / "work").symlink_to(target)

    refused(run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r", retry_errors=True))

    assert listing(target) == before


def test_the_cli_refuses_a_linked_work_folder(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = precious(tmp_path / "home")
    before = listing(target)
    (tmp_path / "runs" / "r").mkdir(parents=True)
    (tmp_path / "runs" / "r" / "work").symlink_to(target)

    runs = str(tmp_path / "runs")
    argv = ["fleet", "run", "unittest-to-assert", "--repos", str(fleet)]
    code = main([*argv, "--runs-dir", runs, "--run-id", "r"])

    assert code == 2
    err = capsys.readouterr().err
    assert "STATE_DIR_UNSAFE" in err and "symlink" in err and "Traceback" not in err
    assert listing(target) == before


@pytest.mark.parametrize("name", ["r", "r/.lock", "r/fleet.db", "r/fleet.db-wal"])
def test_a_linked_run_folder_lock_or_store_is_refused(
    fleet: Path, tmp_path: Path, name: str
) -> None:
    runs = tmp_path / "runs"
    (runs / "r").mkdir(parents=True, exist_ok=True)
    link = runs / name
    if name == "r":
        os.rmdir(link)
    target = tmp_path / "elsewhere" / "target"  # dangling: nothing may be created there
    target.parent.mkdir()
    link.symlink_to(target)

    refused(run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r"))

    assert not os.path.lexists(target)
    assert os.listdir(target.parent) == []


def test_the_report_refuses_a_linked_store(fleet: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r").complete
    real = tmp_path / "copy.db"
    (runs / "r" / "fleet.db").rename(real)
    (runs / "r" / "fleet.db").symlink_to(real)

    answer = fleet_report("r", runs_dir=runs)

    assert isinstance(answer, PatchFailure)
    assert answer.code is FailureCode.STATE_DIR_UNSAFE


def test_the_sweep_removes_only_marked_folders_and_follows_no_link(
    fleet: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    assert run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r").complete
    work = runs / "r" / "work"
    target = precious(tmp_path / "home")
    before = listing(target)
    killed = work / "repo-0123456789abcdef-killed"  # what a killed worker left
    (killed / "checkout").mkdir(parents=True)
    (killed / CHECKOUT_MARKER).write_bytes(b"")
    (killed / "checkout" / "link").symlink_to(target)
    unmarked = work / "repo-fedcba9876543210-mine"
    unmarked.mkdir()
    (unmarked / "notes.txt").write_text("not made by a worker\n")
    linked = work / "repo-aaaaaaaaaaaaaaaa-link"
    linked.symlink_to(target)

    again = run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="r")

    assert again.complete and again.errors == ()
    assert not killed.exists()
    assert (unmarked / "notes.txt").is_file()
    assert linked.is_symlink()
    assert listing(target) == before


def test_the_sweep_and_the_lock_never_go_through_a_link(tmp_path: Path) -> None:
    from patchsmith.fleet.run import _RunLock, _sweep
    from patchsmith.runtime.statedir import StateDirUnsafe

    target = precious(tmp_path / "home")
    before = listing(target)
    (tmp_path / "work").symlink_to(target)
    (tmp_path / ".lock").symlink_to(tmp_path / "lock-target")

    with pytest.raises(StateDirUnsafe):
        _sweep(tmp_path / "work", set())
    with pytest.raises(StateDirUnsafe):
        _RunLock(tmp_path).acquire()
    _sweep(tmp_path / "absent", set())  # nothing to sweep

    assert listing(target) == before
    assert not (tmp_path / "lock-target").exists()


def test_a_runs_folder_that_is_a_file_is_an_io_error(fleet: Path, tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("not a folder\n")

    summary = run_fleet("unittest-to-assert", fleet, runs_dir=tmp_path / "runs", run_id="r")

    assert [e.code for e in summary.errors] == [FailureCode.IO_ERROR]


def test_a_worker_makes_no_checkout_through_a_linked_work_folder(
    fleet: Path, tmp_path: Path
) -> None:
    from patchsmith.fleet import RepoSpec, WorkUnit, resolve_change, run_unit
    from patchsmith.fleet.result import FleetStatus

    spec = resolve_change("unittest-to-assert")
    assert not isinstance(spec, PatchFailure)
    key = str(fleet.parent / "repo0000")
    target = precious(tmp_path / "home")
    before = listing(target)
    (tmp_path / "work").symlink_to(target)
    (tmp_path / "file").write_text("not a folder\n")

    linked = run_unit(WorkUnit(RepoSpec(key, key, None), spec, str(tmp_path / "work")))
    blocked = run_unit(WorkUnit(RepoSpec(key, key, None), spec, str(tmp_path / "file" / "w")))

    assert linked.status is FleetStatus.ERROR
    assert [e.code for e in linked.errors] == [FailureCode.STATE_DIR_UNSAFE]
    assert blocked.status is FleetStatus.ERROR
    assert [e.code for e in blocked.errors] == [FailureCode.IO_ERROR]
    assert listing(target) == before


def test_a_worker_marks_the_checkout_folders_it_makes(fleet: Path, tmp_path: Path) -> None:
    from patchsmith.fleet import RepoSpec, WorkUnit, resolve_change, run_unit

    spec = resolve_change("unittest-to-assert")
    assert not isinstance(spec, PatchFailure)
    key = str(fleet.parent / "repo0000")

    run_unit(WorkUnit(RepoSpec(key, key, None), spec, str(tmp_path / "work"), keep_checkout=True))

    (kept,) = (tmp_path / "work").iterdir()
    assert kept.name.startswith(folder_prefix(key))
    assert (kept / CHECKOUT_MARKER).is_file()
