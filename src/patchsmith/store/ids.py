"""Attempt ids: random from the first character, their first characters unique in a store."""

from __future__ import annotations

import os
import sqlite3

__all__ = ["ID_PREFIX", "UNIQUE_ID_PREFIX", "fresh_id", "new_attempt_id"]

ID_PREFIX = "a-"
"""Every attempt id starts with this."""

UNIQUE_ID_PREFIX = 8
"""`a-` and the next six characters name one attempt of a store, always."""

_ID_TRIES = 64
_LAST_CODE_POINT = "\U0010ffff"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_attempt_id() -> str:
    """A random id: `a-` + 18 Crockford base-32 characters (90 bits).

    Random from the first character, so ids made a millisecond apart differ where a
    person starts typing; `Store.record_attempt` also keeps the first
    `UNIQUE_ID_PREFIX` characters unique within a store.
    """
    # 90 random bits as `secrets.randbits(90)` draws them, without importing `random`
    return ID_PREFIX + _base32(int.from_bytes(os.urandom(12)) >> 6, 18)


def _base32(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, digit = divmod(value, 32)
        chars.append(_CROCKFORD[digit])
    return "".join(reversed(chars))


def fresh_id(conn: sqlite3.Connection) -> str:
    """A new id whose first `UNIQUE_ID_PREFIX` characters no recorded id shares.

    Checked inside the writing transaction, so two processes cannot both take one.
    """
    for _ in range(_ID_TRIES):
        candidate = new_attempt_id()
        prefix = candidate[:UNIQUE_ID_PREFIX]
        # A range on the primary key (one index probe, not a scan of every id): every
        # text starting with `prefix` sorts between it and `prefix` + the last code point.
        clash = conn.execute(
            "SELECT 1 FROM attempts WHERE id >= ? AND id < ? LIMIT 1",
            (prefix, prefix + _LAST_CODE_POINT),
        ).fetchone()
        if clash is None:
            return candidate
    # 30 random bits per prefix: only a store of about a billion attempts gets here.
    raise sqlite3.OperationalError("no free attempt id prefix")
