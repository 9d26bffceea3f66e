"""The `Store`: one open store, its transactions, and everything callers ask of it.

The database lives at `<root>/.patchsmith/patchsmith.db` (`layout`), next to a
`.gitignore` holding `*` so the directory never shows in `git status`. Every write is
one `BEGIN IMMEDIATE` transaction, so two processes may record at once (`connection`).
Records are only ever inserted, never updated. Each method is a transaction around the
module that owns its tables: `attempts`, `runs`, `judgements`, `queries`.

`sqlite3` and `OSError` failures become `PatchRefused` carrying an `IO_ERROR`
`PatchFailure` (`errors`); misuse (a closed store, a duplicate id) raises
`ValueError`/`RuntimeError`, and unknown errors pass through untouched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from patchsmith.store import attempts, judgements, queries
from patchsmith.store.connection import connect
from patchsmith.store.errors import mapped_errors
from patchsmith.store.kept import close_shared, is_kept_open, shared_connection, still_kept
from patchsmith.store.layout import DB_FILE_NAME, check_state_dir
from patchsmith.store.queries import MAX_LIST_LIMIT
from patchsmith.store.records import AttemptRecord

if TYPE_CHECKING:
    from patchsmith.store.runs import RunRecord, RunTurnRecord

__all__ = ["Store"]


class Store:
    """An open artifact store. Use `Store.open(state_dir)`; close it, or use it in `with`."""

    def __init__(self, conn: sqlite3.Connection, state_dir: Path, *, kept: bool = False) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.state_dir = state_dir
        self._kept = kept

    @classmethod
    def open(cls, state_dir: Path) -> Store:
        """Open (creating on first use) the store in `state_dir`, migrated to `SCHEMA_VERSION`."""
        if is_kept_open(state_dir):
            return cls.shared(state_dir)
        check_state_dir(state_dir)
        with mapped_errors(f"cannot open the store in {state_dir}"):
            conn = connect(state_dir / DB_FILE_NAME)
        return cls(conn, state_dir)

    @classmethod
    def shared(cls, state_dir: Path) -> Store:
        """The store in `state_dir` on a connection this thread keeps open between calls.

        For callers that use a store again and again (`apply` reads it, then records; a
        server or an agent loop records attempt after attempt): each use checks that the
        state directory is still a real directory of this user's and that the database file
        is still the one the connection has open (else it checks as `open` does and opens
        anew), instead of opening, configuring and migrating SQLite and checkpointing its
        log on close. Closing the returned store (or leaving its `with`)
        keeps the connection; `close_shared()` closes this thread's.
        """
        conn = still_kept(state_dir)
        if conn is None:
            check_state_dir(state_dir)
            conn = shared_connection(state_dir)
        return cls(conn, state_dir, kept=True)

    @classmethod
    def kept(cls, state_dir: Path) -> Store | None:
        """`shared` when this thread keeps a connection to the store in `state_dir` that
        may be used as it is (its database file exists, so nothing is made); else None."""
        conn = still_kept(state_dir)
        return None if conn is None else cls(conn, state_dir, kept=True)

    @staticmethod
    def close_shared(state_dir: Path | None = None) -> None:
        """Close the connection this thread keeps for `Store.shared` to the store in
        `state_dir`, or with no `state_dir` every one (a caller done with a workspace
        closes its connection now, rather than when a newer one pushes it out)."""
        close_shared(state_dir)

    def close(self) -> None:
        """Close the connection (a shared one stays open for the next use); harmless twice."""
        if self._conn is not None:
            if not self._kept:
                self._conn.close()
            self._conn = None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _transaction(self, action: str, *, write: bool) -> Iterator[sqlite3.Connection]:
        if self._conn is None:
            raise RuntimeError("the store is closed")
        conn = self._conn
        with mapped_errors(action):
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._transaction("cannot read the store", write=False)

    def record_attempt(self, rec: AttemptRecord) -> str:
        """Insert `rec` with its files, failures and decisions in one transaction; return its id.

        Raises `ValueError` if a record with the same id exists.
        """
        with self._transaction("cannot record the attempt", write=True) as conn:
            return attempts.insert(conn, rec)

    def find_ids(self, prefix: str, limit: int = 10) -> tuple[str, ...]:
        """Ids equal to or starting with `prefix` (also tried with `a-` prepended), oldest first."""
        if not prefix:
            return ()
        with self._reading() as conn:
            return queries.find_ids(conn, prefix, limit)

    def get(self, attempt_id: str) -> AttemptRecord | None:
        """The record with this id or unique id prefix; `None` if none or several match."""
        ids = self.find_ids(attempt_id, limit=2)
        if len(ids) != 1:
            return None
        with self._reading() as conn:
            return attempts.load(conn, ids[0])

    def list_attempts(self, limit: int = 50) -> list[AttemptRecord]:
        """Up to `limit` records, newest first."""
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIST_LIMIT}")
        with self._reading() as conn:
            return queries.newest(conn, limit)

    def find_applied(
        self, proposal_id: str, after_hashes: Mapping[str, str | None]
    ) -> AttemptRecord | None:
        """The newest applied attempt of `proposal_id` whose files ended with exactly these hashes.

        `after_hashes` maps each touched path to its sha256 after the change
        (`None` for a deleted file). A match means the proposal is already applied.
        """
        wanted = dict(after_hashes)
        with self._reading() as conn:
            return queries.newest_applied(
                conn, proposal_id, lambda rec: {f.path: f.after_sha256 for f in rec.files} == wanted
            )

    def find_still_applied(
        self, proposal_id: str, current_sha256: Callable[[str], str | None]
    ) -> AttemptRecord | None:
        """The newest applied attempt of `proposal_id` whose files are still as it left them.

        `current_sha256(path)` is the file's sha256 now (`None` when absent); every file
        the attempt wrote must hash to its recorded result, and a moved file's old path
        must still be gone. For callers that cannot name the files up front (a patch
        whose file path is inferred).
        """
        if self._conn is None:
            raise RuntimeError("the store is closed")
        # One statement reads consistently on its own: no transaction around the lookup,
        # which finds nothing for nearly every reply.
        with mapped_errors("cannot read the store"):
            found = queries.still_applied_id(self._conn, proposal_id, current_sha256)
        if found is None:
            return None
        with self._reading() as conn:
            return attempts.load(conn, found)

    def run_attempts(self, run_id: str, *, checks: bool = True) -> list[AttemptRecord]:
        """Every attempt recorded under `run_id`, oldest first; without `checks`, the dry
        runs (`--check`, checked or refused) are left out."""
        with self._reading() as conn:
            return queries.of_run(conn, run_id, checks=checks)

    def applied_since(self, created_at: str) -> list[AttemptRecord]:
        """Attempts that wrote files (applied, partial) at or after `created_at`, oldest first."""
        with self._reading() as conn:
            return queries.applied_since(conn, created_at)

    def record_judgement(
        self, subject: str, subject_kind: str, score: float, verdict: str, judgement_json: str
    ) -> int:
        """Insert one judgement of an attempt or a run; return its number."""
        with self._transaction("cannot record the judgement", write=True) as conn:
            return judgements.insert(conn, subject, subject_kind, score, verdict, judgement_json)

    def judgements(self, subject: str) -> list[tuple[int, str, str]]:
        """`(number, created_at, judgement_json)` of each judgement of `subject`, oldest first."""
        with self._reading() as conn:
            return judgements.select(conn, subject)

    def record_run_task(
        self, run_id: str, created_at: str, task_json: str, budget_json: str
    ) -> None:
        """Record the start of a repair loop run; `ValueError` if the run id is taken."""
        # Imported here: only a repair loop uses its records, and a CLI check starts faster
        # without them (docs/decisions/0047).
        from patchsmith.store import runs

        with self._transaction("cannot record the run", write=True) as conn:
            runs.insert_task(conn, run_id, created_at, task_json, budget_json)

    def record_run_turn(self, run_id: str, turn: RunTurnRecord) -> None:
        """Record one turn of a run started with `record_run_task`."""
        from patchsmith.store import runs

        with self._transaction("cannot record the run's turn", write=True) as conn:
            runs.insert_turn(conn, run_id, turn)

    def record_run_result(
        self, run_id: str, finished_at: str, status: str, result_json: str
    ) -> None:
        """Record how a run ended (once)."""
        from patchsmith.store import runs

        with self._transaction("cannot record the run's result", write=True) as conn:
            runs.insert_result(conn, run_id, finished_at, status, result_json)

    def get_run(self, run_id: str) -> RunRecord | None:
        """The recorded run with this id, its turns in order; `None` if there is none."""
        from patchsmith.store import runs

        with self._reading() as conn:
            return runs.load(conn, run_id)
