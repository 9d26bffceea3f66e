"""The store layer: the audit record of every attempt, run and verification, in SQLite.

It owns the database file under `.patchsmith/`, its schema and migrations, and the
records read back from it. One module per concern:

- `store`: the `Store` class (open, close, transactions, every public method);
- `records`: an attempt's values (`AttemptRecord`, `FileRecord`, `GuardDecision`, …);
- `attempts`: the `attempts` table and the rows it owns (files, failures, decisions),
  with `rows` for their shared shape and `evidence` for verification runs;
- `runids`: the `runs` table, every run id seen;
- `runs`: a repair loop run's task, turns and result (imported on first use: a check
  records no run, and starts faster without these records, docs/decisions/0047);
- `judgements`: the `judgements` table; `queries`: finding attempts; `ids`: attempt ids;
- `schema`: the tables as migrations; `connection`: opening and configuring SQLite;
  `origin`: whether a database is one this machine made (docs/decisions/0031) and
  moving one aside; `layout`: where the files are; `kept`: connections kept open
  between uses; `errors`: storage errors as `IO_ERROR` refusals.

It may import the layers below it (`guards`, `policy`, `runtime`, `model`, `formats`,
`engine`, `errors`), never a workflow or anything above (docs/architecture.md).
"""

from typing import TYPE_CHECKING

from patchsmith.store.ids import UNIQUE_ID_PREFIX, new_attempt_id
from patchsmith.store.kept import keep_open
from patchsmith.store.layout import DB_FILE_NAME, STATE_DIR_NAME
from patchsmith.store.queries import MAX_LIST_LIMIT
from patchsmith.store.records import (
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    GuardDecision,
)
from patchsmith.store.schema import SCHEMA_VERSION
from patchsmith.store.store import Store

if TYPE_CHECKING:
    from patchsmith.store.runs import RunRecord, RunTurnRecord

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


def __getattr__(name: str) -> object:
    """The repair loop's run records, imported on first use (see `runs` above)."""
    if name in ("RunRecord", "RunTurnRecord"):
        from patchsmith.store import runs

        return getattr(runs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
