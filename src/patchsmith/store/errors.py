"""Storage errors as refusals: the one seam where `sqlite3` and `OSError` failures become values.

A failure of the disk or the database becomes `PatchRefused` carrying an `IO_ERROR`
`PatchFailure`; misuse (a closed store, a duplicate id, SQL patchsmith got wrong)
passes through untouched, as a bug to see rather than a condition to report.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from typing import TypeVar

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused

__all__ = ["io_failure", "mapped_errors", "stored_enum"]


def io_failure(message: str) -> PatchRefused:
    """A refusal carrying one `IO_ERROR` failure with `message`."""
    return PatchRefused([PatchFailure(code=FailureCode.IO_ERROR, message=message)])


@contextmanager
def mapped_errors(action: str) -> Iterator[None]:
    """Turn storage errors into an `IO_ERROR` refusal; let misuse and unknown errors through."""
    try:
        yield
    except (sqlite3.InterfaceError, sqlite3.ProgrammingError, sqlite3.IntegrityError):
        # These mean patchsmith used SQLite wrongly: a bug to see, not a condition to report.
        raise
    except sqlite3.Error as exc:
        raise io_failure(f"{action}: {exc}") from exc
    except OSError as exc:
        raise io_failure(f"{action}: {exc.strerror or exc}") from exc


_E = TypeVar("_E", bound=Enum)


def stored_enum(cls: type[_E], value: object) -> _E:
    """`value` read back as a member of `cls`; an `IO_ERROR` refusal if this patchsmith
    does not know it (a store a newer version wrote)."""
    try:
        return cls(value)
    except ValueError:
        raise io_failure(
            f"the store holds an unknown {cls.__name__} {value!r}; upgrade patchsmith"
        ) from None
