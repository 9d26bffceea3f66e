"""A fleet store edited by hand: `fleet report` and `fleet run` end in a clear error."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from patchsmith.cli import main
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet import FleetSummary, fleet_report, run_fleet

TAMPERING = {
    "not json": "UPDATE result SET result_json = '{not json' WHERE rowid = 1",
    "json but a list": "UPDATE result SET result_json = '[1, 2]' WHERE rowid = 1",
    "unknown status": (
        "UPDATE result SET result_json = json_set(result_json, '$.status', 'exploded') "
        "WHERE rowid = 1"
    ),
    "no key": "UPDATE result SET result_json = json_remove(result_json, '$.key') WHERE rowid = 1",
    "files not a list": (
        "UPDATE result SET result_json = json_set(result_json, '$.files', 7) WHERE rowid = 1"
    ),
    "an error without a code": (
        "UPDATE result SET result_json = json_set(result_json, '$.errors', json('[{\"x\": 1}]')) "
        "WHERE rowid = 1"
    ),
    "session start is text": "UPDATE session SET started = 'yesterday'",
    "deep nesting": (
        "UPDATE result SET result_json = json_set(result_json, '$.report', json('"
        + "[" * 1200
        + "]" * 1200
        + "')) WHERE rowid = 1"
    ),
    "result table of the wrong shape": "DROP TABLE result; CREATE TABLE result (key TEXT)",
    "run row of the wrong shape": "DROP TABLE run; CREATE TABLE run (a)",
}


def tamper(runs: Path, sql: str) -> None:
    with sqlite3.connect(runs / "done" / "fleet.db") as db:
        db.executescript(sql)


@pytest.mark.parametrize("sql", TAMPERING.values(), ids=TAMPERING.keys())
def test_the_report_of_a_tampered_store_is_a_clear_error(runs: Path, sql: str) -> None:
    tamper(runs, sql)

    answer = fleet_report("done", runs_dir=runs, html=runs / "report.html")

    assert isinstance(answer, PatchFailure), answer
    assert answer.code in (FailureCode.IO_ERROR,), answer
    assert "fleet store" in answer.message and answer.hint


@pytest.mark.parametrize("as_json", [False, True])
def test_the_cli_report_of_a_tampered_store_exits_2(
    runs: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    tamper(runs, TAMPERING["unknown status"])

    code = main(["fleet", "report", "done", "--runs-dir", str(runs), *(["--json"] * as_json)])

    assert code == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if as_json:
        assert json.loads(out)["errors"][0]["code"] == "IO_ERROR"
    else:
        assert "IO_ERROR" in err and "damaged" in err


def test_a_run_over_a_tampered_store_is_a_clear_error(runs: Path, small_fleet: Path) -> None:
    tamper(runs, TAMPERING["unknown status"])

    summary = run_fleet("unittest-to-assert", small_fleet, runs_dir=runs, run_id="done")

    assert isinstance(summary, FleetSummary)
    assert [e.code for e in summary.errors] == [FailureCode.IO_ERROR]


def test_a_store_that_is_not_a_database(runs: Path) -> None:
    (runs / "done" / "fleet.db").write_bytes(b"this is not SQLite" * 100)
    for suffix in ("-wal", "-shm"):
        (runs / "done" / f"fleet.db{suffix}").unlink(missing_ok=True)

    answer = fleet_report("done", runs_dir=runs)

    assert isinstance(answer, PatchFailure) and answer.code is FailureCode.IO_ERROR


def test_a_run_whose_run_table_was_replaced_is_a_clear_error(runs: Path, small_fleet: Path) -> None:
    tamper(runs, TAMPERING["run row of the wrong shape"])

    summary = run_fleet("unittest-to-assert", small_fleet, runs_dir=runs, run_id="done")

    assert [e.code for e in summary.errors] == [FailureCode.IO_ERROR]
    assert "damaged" in summary.errors[0].message
