"""The store layer: the audit record of every attempt, run and verification, in SQLite.

It owns the database file under `.patchsmith/`, its schema and migrations, and the
records read back from it (`store.py` holds the `Store`; docs/decisions/0031 says when a
database is moved aside). It may import the layers below it (`guards`, `policy`,
`runtime`, `model`, `formats`, `engine`, `errors`), never a workflow or anything above
(docs/architecture.md).
"""

from patchsmith.store.store import (
    DB_FILE_NAME,
    MAX_LIST_LIMIT,
    SCHEMA_VERSION,
    STATE_DIR_NAME,
    UNIQUE_ID_PREFIX,
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    GuardDecision,
    RunRecord,
    RunTurnRecord,
    Store,
    keep_open,
    new_attempt_id,
)

__all__ = [
    "DB_FILE_NAME",
    "MAX_LIST_LIMIT",
    "SCHEMA_VERSION",
    "STATE_DIR_NAME",
    "UNIQUE_ID_PREFIX",
    "AttemptKind",
    "AttemptRecord",
    "AttemptStatus",
    "FileRecord",
    "GuardDecision",
    "RunRecord",
    "RunTurnRecord",
    "Store",
    "keep_open",
    "new_attempt_id",
]
