"""`patchsmith log`: list the recorded attempts, newest first.

Also holds what the three store-reading commands (`log`, `show`, `replay`)
share: their common options, opening the store, and printing failures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchsmith.cli._output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, print_failures, write_json
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.store import (
    DB_FILE_NAME,
    MAX_LIST_LIMIT,
    STATE_DIR_NAME,
    UNIQUE_ID_PREFIX,
    AttemptRecord,
    Store,
)

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "AmbiguousAttemptId",
    "add_store_options",
    "exit_code_for",
    "fail",
    "fail_refusal",
    "load_attempt",
    "open_store",
    "register",
    "run",
    "write_json",
]


AMBIGUOUS_LIMIT = 20
"""At most this many matches of an ambiguous id prefix are listed."""


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """Add `-C DIR` and `--json`, shared by every store-reading command."""
    parser.add_argument(
        "-C",
        dest="root",
        metavar="DIR",
        default=".",
        help="the workspace root (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def fail(command: str, failures: tuple[PatchFailure, ...], *, as_json: bool, exit_code: int) -> int:
    """Report `failures` (JSON on stdout, or text on stderr) and return `exit_code`."""
    if as_json:
        write_json({"status": "error", "errors": [f.to_json() for f in failures]})
    else:
        print_failures(command, failures, excerpts=False)
    return exit_code


def exit_code_for(refusal: PatchRefused) -> int:
    """2 when the refusal is about the command line (a bad DIR, an unknown id), else 1."""
    usage = {FailureCode.FILE_NOT_FOUND, FailureCode.RECORD_NOT_FOUND}
    return EXIT_USAGE if any(f.code in usage for f in refusal.failures) else EXIT_REFUSED


def open_store(root: Path) -> Store | None:
    """The store under `root`, or `None` when nothing was ever recorded there.

    Raises `PatchRefused` (FILE_NOT_FOUND) when `root` is not a directory, and
    (IO_ERROR) when the store cannot be opened.
    """
    if not root.is_dir():
        raise PatchRefused(
            [
                PatchFailure(
                    code=FailureCode.FILE_NOT_FOUND,
                    message=f"{root} is not a directory",
                    hint="pass the workspace root with -C DIR",
                )
            ]
        )
    state_dir = root / STATE_DIR_NAME
    if not (state_dir / DB_FILE_NAME).is_file():
        return None
    return Store.open(state_dir)


def load_attempt(root: Path, attempt_id: str) -> AttemptRecord:
    """The attempt recorded under `root` with this id or unique id prefix.

    Raises `PatchRefused` with RECORD_NOT_FOUND when there is no store, no such
    attempt, or the prefix matches several.
    """
    store = open_store(root)
    if store is None:
        raise _not_found(f"nothing is recorded under {root}", "record an attempt first")
    with store:
        matches = store.find_ids(attempt_id, limit=AMBIGUOUS_LIMIT)
        if len(matches) == 1:
            record = store.get(matches[0])
            if record is not None:
                return record
        candidates = tuple(r for m in matches if (r := store.get(m)) is not None)
    if candidates:
        shown = ", ".join(r.id for r in candidates)
        more = " (and maybe more)" if len(matches) == AMBIGUOUS_LIMIT else ""
        raise AmbiguousAttemptId(
            _not_found(
                f"id prefix {attempt_id!r} matches several attempts: {shown}{more}",
                f"give more characters: the first {UNIQUE_ID_PREFIX} of an id are unique",
            ).failures,
            candidates,
        )
    raise _not_found(f"no attempt with id {attempt_id!r}", "list the ids with `patchsmith log`")


class AmbiguousAttemptId(PatchRefused):
    """An id prefix that names several attempts; `matches` holds them, oldest first."""

    def __init__(
        self, failures: tuple[PatchFailure, ...], matches: tuple[AttemptRecord, ...]
    ) -> None:
        super().__init__(failures)
        self.matches = matches


def fail_refusal(command: str, refusal: PatchRefused, *, as_json: bool) -> int:
    """Report a refusal of a store-reading command; an ambiguous id lists its matches."""
    matches = refusal.matches if isinstance(refusal, AmbiguousAttemptId) else ()
    code = exit_code_for(refusal)
    if as_json:
        document: dict[str, object] = {
            "status": "error",
            "errors": [f.to_json() for f in refusal.failures],
        }
        if matches:
            document["matches"] = [m.summary_json() for m in matches]
        write_json(document)
        return code
    print_failures(command, refusal.failures, excerpts=False)
    for match in matches:
        sys.stderr.write(
            f"  {match.id}  {match.created_at}  {match.kind.value:<7} {match.status.value:<15} "
            f"{match.proposal_id}\n"
        )
    return code


def _not_found(message: str, hint: str) -> PatchRefused:
    return PatchRefused(
        [PatchFailure(code=FailureCode.RECORD_NOT_FOUND, message=message, hint=hint)]
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `log` subcommand."""
    parser = subparsers.add_parser(
        "log",
        help="list recorded attempts, newest first",
        description="List the attempts recorded under DIR/.patchsmith, newest first.",
    )
    add_store_options(parser)
    parser.add_argument(
        "-n",
        "--limit",
        type=_positive_int,
        default=50,
        metavar="N",
        help="show at most N attempts (default: 50)",
    )
    parser.set_defaults(func=run)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if not 1 <= value <= MAX_LIST_LIMIT:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_LIST_LIMIT}")
    return value


def run(args: argparse.Namespace) -> int:
    """List the attempts; 0 on success, 1 when the store cannot be read, 2 for a bad DIR."""
    as_json: bool = args.json
    try:
        store = open_store(Path(args.root))
        if store is None:
            attempts: list[AttemptRecord] = []
        else:
            with store:
                attempts = store.list_attempts(args.limit)
    except PatchRefused as refusal:
        return fail("log", refusal.failures, as_json=as_json, exit_code=exit_code_for(refusal))
    if as_json:
        write_json({"status": "ok", "attempts": [a.summary_json() for a in attempts], "errors": []})
    elif not attempts:
        sys.stdout.write("no attempts recorded\n")
    else:
        for attempt in attempts:
            sys.stdout.write(_line(attempt) + "\n")
    return EXIT_OK


def _line(attempt: AttemptRecord) -> str:
    count = len(attempt.files)
    files = f"{count} file" + ("" if count == 1 else "s")
    return (
        f"{attempt.id}  {attempt.created_at}  {attempt.kind.value:<7}  "
        f"{attempt.status.value:<15}  {files:<8}  "
        f"proposal {attempt.proposal_id} #{attempt.attempt_no} (run {attempt.run_id})"
    )
