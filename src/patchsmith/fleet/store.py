"""The fleet store: one SQLite file per run (`RUN_DIR/fleet.db`), one row per finished repository.

Each result is committed on its own as it arrives, so a run killed at any moment keeps
every repository that had finished; a rerun of the same run id reads which ones did and
skips them. The run's change and version are kept too, so a rerun with another change
under the same id is refused instead of mixing two changes' results.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.change import ChangeSpec
from patchsmith.fleet.repos import RepoSpec
from patchsmith.fleet.result import FleetStatus, RepoResult
from patchsmith.runtime.statedir import StateDirUnsafe, check_entry, ensure_subdir

__all__ = ["STORE_FILE", "FleetStore", "RunInfo"]

STORE_FILE = "fleet.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run (
    run_id TEXT PRIMARY KEY,
    change_kind TEXT NOT NULL,
    change_name TEXT NOT NULL,
    change_version TEXT NOT NULL,
    change_json TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS repo (
    position INTEGER NOT NULL,
    key TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    ref TEXT
);
CREATE TABLE IF NOT EXISTS result (
    key TEXT PRIMARY KEY REFERENCES repo(key),
    status TEXT NOT NULL,
    commit_id TEXT,
    seconds REAL NOT NULL,
    finished REAL NOT NULL,
    executor TEXT NOT NULL,
    result_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS publication (
    key TEXT NOT NULL REFERENCES repo(key),
    branch TEXT NOT NULL,
    commit_id TEXT,
    pushed_to TEXT,
    updated REAL NOT NULL,
    publication_json TEXT NOT NULL,
    PRIMARY KEY (key, branch)
);
CREATE TABLE IF NOT EXISTS session (
    started REAL NOT NULL,
    ended REAL,
    executor TEXT NOT NULL,
    workers INTEGER NOT NULL,
    repos_done INTEGER NOT NULL DEFAULT 0
);
"""


@dataclass(frozen=True)
class RunInfo:
    """A run's identity: its id, its change (kind, name, version) and when it began."""

    run_id: str
    change_kind: str
    change_name: str
    change_version: str
    created: float


def _conflict(message: str, hint: str) -> PatchFailure:
    return PatchFailure(FailureCode.FLEET_RUN_CONFLICT, message, hint=hint, rule="fleet_run")


class FleetStore:
    """A run's store. Open with `FleetStore.open(run_dir)`; close (or use `with`) when done."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(cls, run_dir: Path, *, create: bool = True) -> FleetStore | PatchFailure:
        """The store in `run_dir` (created when `create`), or FILE_NOT_FOUND / IO_ERROR.

        STATE_DIR_UNSAFE when the run folder, `fleet.db` or its WAL files is a link (or
        the wrong kind of file, or another user's): SQLite would follow it.
        """
        path = run_dir / STORE_FILE
        try:
            check_entry(run_dir, directory=True)
            for name in (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm"):
                check_entry(run_dir / name, directory=False)
        except StateDirUnsafe as exc:
            return PatchFailure(
                FailureCode.STATE_DIR_UNSAFE,
                f"refusing to use {exc.filename}: {exc.reason}",
                hint="a fleet run's folder and store are never opened through a link; "
                "remove the link",
                rule="fleet_run",
            )
        except OSError as exc:
            return PatchFailure(FailureCode.IO_ERROR, f"cannot open the fleet store {path}: {exc}")
        if not create and not path.is_file():
            return PatchFailure(
                FailureCode.FILE_NOT_FOUND,
                f"no fleet run in {os.fspath(run_dir)!r}",
                hint="name a run id under --runs-dir, a run folder, or its fleet.db",
            )
        try:
            if create:
                ensure_subdir(run_dir)
            db = sqlite3.connect(path, timeout=30, isolation_level=None)
            # a store edited by hand is data: its schema's SQL functions run nothing unsafe
            db.execute("PRAGMA trusted_schema=OFF")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            return PatchFailure(FailureCode.IO_ERROR, f"cannot open the fleet store {path}: {exc}")
        return cls(path, db)

    def __enter__(self) -> FleetStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # -- the run ----------------------------------------------------------------------------

    def info(self) -> RunInfo | None:
        row = self._db.execute(
            "SELECT run_id, change_kind, change_name, change_version, created FROM run"
        ).fetchone()
        return RunInfo(*row) if row else None

    def change(self) -> ChangeSpec | None:
        row = self._db.execute("SELECT change_json FROM run").fetchone()
        return ChangeSpec.from_json(json.loads(row[0])) if row else None

    def begin(self, run_id: str, change: ChangeSpec, repos: list[RepoSpec]) -> PatchFailure | None:
        """Record the run (first time) or check it is the same change (a resume).

        New repositories are appended to the run's list; FLEET_RUN_CONFLICT when the
        run id already names a run of another change.
        """
        info = self.info()
        if info is not None and info.change_version != change.version:
            return _conflict(
                f"run {run_id!r} was started with {info.change_kind} {info.change_name!r} "
                f"(version {info.change_version[:12]}), not this change",
                "resume it with the same change and policy, or pass another --run-id",
            )
        with self._transaction():
            if info is None:
                self._db.execute(
                    "INSERT INTO run VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        change.kind.value,
                        change.name,
                        change.version,
                        json.dumps(change.to_json()),
                        time.time(),
                    ),
                )
            (count,) = self._db.execute("SELECT COUNT(*) FROM repo").fetchone()
            for repo in repos:
                inserted = self._db.execute(
                    "INSERT OR IGNORE INTO repo VALUES (?, ?, ?, ?)",
                    (count, repo.key, repo.source, repo.ref),
                )
                count += inserted.rowcount
        return None

    def start_session(self, executor: str, workers: int) -> int:
        cursor = self._db.execute(
            "INSERT INTO session (started, executor, workers) VALUES (?, ?, ?)",
            (time.time(), executor, workers),
        )
        return int(cursor.lastrowid or 0)

    def end_session(self, session: int, done: int) -> None:
        self._db.execute(
            "UPDATE session SET ended = ?, repos_done = ? WHERE rowid = ?",
            (time.time(), done, session),
        )

    def sessions(self) -> list[tuple[float, float | None, str, int, int]]:
        rows = self._db.execute(
            "SELECT started, ended, executor, workers, repos_done FROM session ORDER BY rowid"
        ).fetchall()
        return [tuple(r) for r in rows]

    # -- results ----------------------------------------------------------------------------

    def record(self, result: RepoResult, executor: str) -> None:
        """Commit one repository's result (replacing an earlier one of the same repository)."""
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO result VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    result.key,
                    result.status.value,
                    result.commit,
                    result.seconds,
                    time.time(),
                    executor,
                    result.to_json_text(),
                ),
            )

    def finished(self, *, retry_errors: bool = False) -> set[str]:
        """The keys of repositories with a result (without `error` ones, if `retry_errors`)."""
        query = "SELECT key FROM result"
        if retry_errors:
            query += f" WHERE status != '{FleetStatus.ERROR.value}'"
        return {row[0] for row in self._db.execute(query)}

    def status_counts(self) -> dict[str, int]:
        """Finished repositories per status (only the statuses present)."""
        rows = self._db.execute("SELECT status, COUNT(*) FROM result GROUP BY status")
        return {str(status): int(count) for status, count in rows}

    def finished_times(self) -> dict[str, float]:
        """When each finished repository's result was committed (seconds since the epoch)."""
        return {str(k): float(t) for k, t in self._db.execute("SELECT key, finished FROM result")}

    def repos(self) -> list[RepoSpec]:
        rows = self._db.execute("SELECT key, source, ref FROM repo ORDER BY position").fetchall()
        return [RepoSpec(k, s, r) for k, s, r in rows]

    def results(self) -> list[RepoResult]:
        """Every result, in the order of the repositories file."""
        rows = self._db.execute(
            "SELECT result.result_json FROM result JOIN repo ON repo.key = result.key "
            "ORDER BY repo.position"
        )
        return [RepoResult.from_json(json.loads(row[0])) for row in rows]

    def executors(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, executor FROM result").fetchall())

    # -- publishing -------------------------------------------------------------------------

    def record_publication(self, key: str, branch: str, data: dict[str, object]) -> None:
        """Commit where publishing `key` on `branch` stands (replacing the earlier state)."""
        commit = data.get("commit")
        pushed = data.get("remote") if data.get("pushed") else None
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO publication VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    branch,
                    str(commit) if commit else None,
                    str(pushed) if pushed else None,
                    time.time(),
                    json.dumps(data, ensure_ascii=True),
                ),
            )

    def publications(self) -> list[dict[str, object]]:
        """Every recorded publication, oldest first (a repository may have one per branch)."""
        rows = self._db.execute("SELECT publication_json FROM publication ORDER BY updated, rowid")
        found = [json.loads(row[0]) for row in rows]
        return [item for item in found if isinstance(item, dict)]

    def _transaction(self) -> _Tx:
        return _Tx(self._db)


class _Tx:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type is not None else "COMMIT")
