"""Runs: a repair loop run's own record (`run_tasks`, `run_turns`, `run_results`), written
and read back; the `runs` table of every run id seen is `runids`."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import astuple, dataclass, fields

from patchsmith.store.runids import note_run

__all__ = [
    "RunRecord",
    "RunTurnRecord",
    "insert_result",
    "insert_task",
    "insert_turn",
    "load",
    "note_run",
]


@dataclass(frozen=True, kw_only=True)
class RunTurnRecord:
    """One turn of a repair loop run: what the source sent and what became of it.

    `attempt_id` is the attempt the turn made, or for a duplicate (a proposal the run
    had already seen refused, answered from memory) the attempt that refused it first.
    """

    seq: int
    created_at: str
    milestone: str
    attempt_no: int
    attempt_id: str | None
    outcome: str
    fingerprint: str
    strategy: str | None
    selection_json: str
    feedback: str

    def to_json(self) -> dict[str, object]:
        """The JSON object `patchsmith run --json` and the store print."""
        return {
            "seq": self.seq,
            "created_at": self.created_at,
            "milestone": self.milestone,
            "attempt_no": self.attempt_no,
            "attempt_id": self.attempt_id,
            "outcome": self.outcome,
            "fingerprint": self.fingerprint,
            "strategy": self.strategy,
            "selection": json.loads(self.selection_json),
            "feedback": self.feedback,
        }


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """A repair loop run as recorded: task, budget, turns, and (once ended) its outcome."""

    run_id: str
    created_at: str
    task_json: str
    budget_json: str
    turns: tuple[RunTurnRecord, ...] = ()
    finished_at: str | None = None
    status: str | None = None
    result_json: str | None = None


_TURN_COLUMNS = tuple(f.name for f in fields(RunTurnRecord))
"""The `run_turns` columns after `run_id`, in the order of `RunTurnRecord`'s fields."""


def insert_task(
    conn: sqlite3.Connection, run_id: str, created_at: str, task_json: str, budget_json: str
) -> None:
    """Record the start of a repair loop run; `ValueError` if the run id is taken."""
    if conn.execute("SELECT 1 FROM run_tasks WHERE run_id = ?", (run_id,)).fetchone():
        raise ValueError(f"run {run_id} is already recorded")
    conn.execute(
        "INSERT INTO run_tasks (run_id, created_at, task_json, budget_json) VALUES (?, ?, ?, ?)",
        (run_id, created_at, task_json, budget_json),
    )
    note_run(conn, run_id, created_at)


def insert_turn(conn: sqlite3.Connection, run_id: str, turn: RunTurnRecord) -> None:
    """Record one turn of a run."""
    conn.execute(
        f"INSERT INTO run_turns (run_id, {', '.join(_TURN_COLUMNS)})"
        f" VALUES (?{', ?' * len(_TURN_COLUMNS)})",
        (run_id, *astuple(turn)),
    )


def insert_result(
    conn: sqlite3.Connection, run_id: str, finished_at: str, status: str, result_json: str
) -> None:
    """Record how a run ended (once)."""
    conn.execute(
        "INSERT INTO run_results (run_id, finished_at, status, result_json) VALUES (?, ?, ?, ?)",
        (run_id, finished_at, status, result_json),
    )


def load(conn: sqlite3.Connection, run_id: str) -> RunRecord | None:
    """The recorded run with this id, its turns in order; `None` if there is none."""
    row = conn.execute(
        "SELECT run_id, created_at, task_json, budget_json FROM run_tasks WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        return None
    turns = tuple(
        RunTurnRecord(**dict(zip(_TURN_COLUMNS, r, strict=True)))
        for r in conn.execute(
            f"SELECT {', '.join(_TURN_COLUMNS)} FROM run_turns WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )
    )
    end = conn.execute(
        "SELECT finished_at, status, result_json FROM run_results WHERE run_id = ?", (run_id,)
    ).fetchone()
    return RunRecord(
        run_id=row[0],
        created_at=row[1],
        task_json=row[2],
        budget_json=row[3],
        turns=turns,
        finished_at=None if end is None else end[0],
        status=None if end is None else end[1],
        result_json=None if end is None else end[2],
    )
