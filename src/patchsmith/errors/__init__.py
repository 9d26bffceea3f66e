"""Failure codes, the `PatchFailure` value, and the small exception tree.

Exceptions (raised only at the API edge)::

    PatchsmithError
    └── PatchRefused          carries the PatchFailure values that caused the refusal
        └── PartialApplyError only some hunks located (engine convenience wrapper)

Programmer misuse (a bad argument, a committed transaction reused) raises
`ValueError`/`RuntimeError` instead, outside this tree, so `except PatchsmithError`
never hides a caller's bug.

The bottom layer (docs/architecture.md): the failure vocabulary every layer, the engine
included, answers in. It imports nothing of patchsmith. `LookAlike` lives in
`errors.lookalike`, imported on first use: only a refused edit has look-alikes, and a
check starts faster without it (docs/decisions/0047).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchsmith.errors.lookalike import LookAlike

__all__ = [
    "FailureCode",
    "LookAlike",
    "PartialApplyError",
    "PatchFailure",
    "PatchRefused",
    "PatchsmithError",
    "invalid_arguments",
    "refused",
]


class FailureCode(StrEnum):
    """Why a change was refused. Every code is documented in docs/errors.md."""

    # parsing
    MALFORMED_PATCH = "MALFORMED_PATCH"
    TRUNCATED_OUTPUT = "TRUNCATED_OUTPUT"
    # locating
    PATCH_CONTEXT_MISMATCH = "PATCH_CONTEXT_MISMATCH"
    AMBIGUOUS_MATCH = "AMBIGUOUS_MATCH"
    PARTIAL_APPLY = "PARTIAL_APPLY"
    NO_CHANGE = "NO_CHANGE"
    ALREADY_APPLIED = "ALREADY_APPLIED"
    ANCHOR_NOT_FOUND = "ANCHOR_NOT_FOUND"
    # files and paths
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    FILE_ALREADY_EXISTS = "FILE_ALREADY_EXISTS"
    PATH_MISMATCH = "PATH_MISMATCH"
    PATH_OUTSIDE_WORKSPACE = "PATH_OUTSIDE_WORKSPACE"
    SYMLINK_ESCAPE = "SYMLINK_ESCAPE"
    BINARY_FILE = "BINARY_FILE"
    ENCODING_ERROR = "ENCODING_ERROR"
    CONFLICTING_EDITS = "CONFLICTING_EDITS"
    IO_ERROR = "IO_ERROR"
    # runtime: proposals, preconditions, guards
    STALE_FILE = "STALE_FILE"
    PRECONDITION_FAILED = "PRECONDITION_FAILED"
    POSTCONDITION_FAILED = "POSTCONDITION_FAILED"
    NOT_SUPPORTED_YET = "NOT_SUPPORTED_YET"
    INVALID_PROPOSAL = "INVALID_PROPOSAL"
    INVALID_POLICY = "INVALID_POLICY"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    OUT_OF_SCOPE = "OUT_OF_SCOPE"
    FORBIDDEN_PATH = "FORBIDDEN_PATH"
    PROTECTED_PATH = "PROTECTED_PATH"
    GENERATED_FILE = "GENERATED_FILE"
    LOCKFILE_CHANGED = "LOCKFILE_CHANGED"
    BINARY_CONTENT = "BINARY_CONTENT"
    SECRET_ADDED = "SECRET_ADDED"
    EMPTY_WRITE = "EMPTY_WRITE"
    DIFF_BUDGET_EXCEEDED = "DIFF_BUDGET_EXCEEDED"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    SYNTAX_ERROR = "SYNTAX_ERROR"
    PLACEHOLDER_WRITTEN = "PLACEHOLDER_WRITTEN"
    LARGE_REMOVAL = "LARGE_REMOVAL"
    REVIEW_DRIFT = "REVIEW_DRIFT"
    DEPENDENCY_CHANGED = "DEPENDENCY_CHANGED"
    LICENCE_HEADER_MISSING = "LICENCE_HEADER_MISSING"
    OWNERSHIP_VIOLATION = "OWNERSHIP_VIOLATION"
    # command-generated changes
    COMMAND_NOT_ALLOWED = "COMMAND_NOT_ALLOWED"
    COMMAND_FAILED = "COMMAND_FAILED"
    COMMAND_OUT_OF_BOUNDS = "COMMAND_OUT_OF_BOUNDS"
    SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE"
    RECORD_NOT_FOUND = "RECORD_NOT_FOUND"
    # workspace state and file metadata
    STATE_DIR_UNSAFE = "STATE_DIR_UNSAFE"
    JOURNAL_QUARANTINED = "JOURNAL_QUARANTINED"
    INTERRUPTED_COMMIT = "INTERRUPTED_COMMIT"
    HARDLINKED_FILE = "HARDLINKED_FILE"
    READ_ONLY_FILE = "READ_ONLY_FILE"
    # codemods
    INVALID_RECIPE = "INVALID_RECIPE"
    RECIPE_NOT_FOUND = "RECIPE_NOT_FOUND"
    NOT_IDEMPOTENT = "NOT_IDEMPOTENT"
    CODEMOD_BACKEND_ERROR = "CODEMOD_BACKEND_ERROR"
    # verification: profiles, evidence, strategies
    UNKNOWN_PROFILE = "UNKNOWN_PROFILE"
    UNKNOWN_REVISION = "UNKNOWN_REVISION"
    VERIFICATION_FAILED = "VERIFICATION_FAILED"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    VERIFICATION_ERROR = "VERIFICATION_ERROR"
    POSTCONDITION_UNVERIFIED = "POSTCONDITION_UNVERIFIED"
    STRATEGY_MISMATCH = "STRATEGY_MISMATCH"
    UNTRUSTED_REPOSITORY = "UNTRUSTED_REPOSITORY"
    # the repair loop
    INVALID_TASK = "INVALID_TASK"
    SOURCE_FAILED = "SOURCE_FAILED"
    # fleet runs: one change over many repositories
    REPOSITORY_UNAVAILABLE = "REPOSITORY_UNAVAILABLE"
    TIMED_OUT = "TIMED_OUT"
    WORKER_FAILED = "WORKER_FAILED"
    FLEET_RUN_CONFLICT = "FLEET_RUN_CONFLICT"


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class PatchFailure:
    """One structured reason for a refusal, small enough for a model to repair from.

    `excerpt` is the closest real region of the file, with line numbers, bounded
    to about 30 lines; `current_sha256` is the file's hash as it is now, so a
    retry can be made against exactly that version.
    """

    code: FailureCode
    message: str
    file: str | None = None
    hunk: int | None = None
    hint: str | None = None
    excerpt: str | None = None
    current_sha256: str | None = None
    rule: str | None = None
    similarity: float | None = None
    """How alike the excerpt's region is to the edit's old lines, 0 to 1 (a failed edit
    only): 1.0 means every old line is there verbatim, near 0 that none resembles any."""
    candidates: tuple[int, ...] = ()
    """1-based first lines of every place an ambiguous edit matched."""
    lookalikes: tuple[LookAlike, ...] = ()
    """Every similar region a refused edit may have meant, when there are two or more
    (docs/decisions/0029-one-rule-for-rival-candidates.md)."""

    def to_json(self) -> dict[str, object]:
        """The JSON object used in `--json` output and MCP results.

        `similarity`, `candidates` and `lookalikes` appear only when set (a failed edit).
        """
        data = asdict(self)
        data["code"] = self.code.value
        if self.similarity is None:
            del data["similarity"]
        if self.candidates:
            data["candidates"] = list(self.candidates)
        else:
            del data["candidates"]
        if self.lookalikes:
            data["lookalikes"] = [x.to_json() for x in self.lookalikes]
        else:
            del data["lookalikes"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, object]) -> PatchFailure:
        """The inverse of `to_json` (unknown keys ignored)."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return None if value is None else str(value)

        hunk = data.get("hunk")
        similarity = data.get("similarity")
        candidates = data.get("candidates")
        lookalikes = data.get("lookalikes")
        from patchsmith.errors.lookalike import LookAlike

        return cls(
            FailureCode(str(data["code"])),
            str(data.get("message", "")),
            file=text("file"),
            hunk=_int(hunk) if isinstance(hunk, int) else None,
            hint=text("hint"),
            excerpt=text("excerpt"),
            current_sha256=text("current_sha256"),
            rule=text("rule"),
            similarity=float(similarity) if isinstance(similarity, int | float) else None,
            candidates=tuple(_int(c) for c in candidates) if isinstance(candidates, list) else (),
            lookalikes=tuple(LookAlike.from_json(x) for x in lookalikes if isinstance(x, dict))
            if isinstance(lookalikes, list)
            else (),
        )


class PatchsmithError(Exception):
    """Base of every exception patchsmith raises for a refused change."""


class PatchRefused(PatchsmithError):
    """The change was refused; nothing was written. `failures` says why."""

    def __init__(self, failures: list[PatchFailure] | tuple[PatchFailure, ...]) -> None:
        self.failures = tuple(failures)
        summary = "; ".join(f"{f.code.value}: {f.message}" for f in self.failures[:3])
        super().__init__(summary or "patch refused")


def refused(*failures: PatchFailure) -> PatchRefused:
    """The exception a tool raises inside itself to answer with `failures` at its edge."""
    return PatchRefused(failures)


def invalid_arguments(
    message: str, hint: str | None = None, file: str | None = None
) -> PatchRefused:
    """`refused` with one `invalid_arguments` failure: the call's arguments were wrong."""
    return refused(PatchFailure(FailureCode.INVALID_ARGUMENTS, message, file=file, hint=hint))


class PartialApplyError(PatchRefused):
    """Only some hunks located; raised by the engine's strict wrapper `apply_hunks_strict`."""


def __getattr__(name: str) -> object:
    """`LookAlike`, from `errors.lookalike` on first use."""
    if name == "LookAlike":
        from patchsmith.errors.lookalike import LookAlike

        return LookAlike
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
