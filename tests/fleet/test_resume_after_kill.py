"""A run killed with SIGKILL mid-way loses only what was in flight; a rerun finishes it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from patchsmith.fleet import FleetStatus

from .conftest import FLEET_SIZE

CLI = "import sys; from patchsmith.cli import main; sys.exit(main())"


def expected(key: str) -> FleetStatus:
    n = int(key.removeprefix("repo"))
    if n % 5 == 4:
        return FleetStatus.NO_OP
    return FleetStatus.REFUSED if n % 7 == 6 else FleetStatus.CHANGED


def finished(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM result").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def test_kill_then_resume(fleet50: Path, tmp_path: Path) -> None:
    listing = tmp_path / "repos.txt"
    listing.write_text("".join(f"{fleet50.parent / f'repo{n:04d}'}\n" for n in range(16)))
    argv = [sys.executable, "-c", CLI, "fleet", "run", "unittest-to-assert"]
    argv += ["--repos", str(listing), "--runs-dir", str(tmp_path / "runs"), "--run-id", "k"]
    argv += ["--workers", "1", "--json"]
    db = tmp_path / "runs" / "k" / "fleet.db"

    victim = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while finished(db) < 3 and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL, victim.stderr.read() if victim.stderr else ""
    kept = finished(db)
    assert 3 <= kept < 16

    resumed = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)

    report = json.loads(resumed.stdout)
    assert resumed.returncode == 1, resumed.stderr  # one repository is refused by its policy
    assert report["skipped"] == kept
    assert report["complete"] and report["total"] == 16
    keys = [r["key"] for r in report["results"]]
    assert keys == [str(fleet50.parent / f"repo{n:04d}") for n in range(16)]
    assert [FleetStatus(r["status"]) for r in report["results"]] == [
        expected(Path(k).name) for k in keys
    ]
    with sqlite3.connect(db) as connection:
        sessions = connection.execute("SELECT repos_done FROM session ORDER BY rowid").fetchall()
    # the killed session never closed; the resumed one ran exactly the repositories left
    assert sessions[-1] == (16 - kept,)
    assert FLEET_SIZE >= 16
