"""Values the engine takes and returns: hunks, per-hunk outcomes, results, options."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from patchsmith.engine.linespans import LineSpan
from patchsmith.errors import FailureCode, PartialApplyError, PatchFailure

__all__ = [
    "EngineOptions",
    "FileDiff",
    "Hunk",
    "HunkOutcome",
    "HunkResult",
    "Mode",
    "SkipReason",
    "Strategy",
]


class Mode(StrEnum):
    """`compat` reproduces llm-diff-patcher 0.2.1 exactly; `default` adds measured fixes."""

    DEFAULT = "default"
    COMPAT = "compat"


@dataclass(frozen=True)
class Hunk:
    """One hunk as the model wrote it.

    `lines` are the body lines, each keeping its line ending (the last may have
    none); the first character of a line is its operation (" ", "-", "+", or
    "\\" for a "No newline at end of file" marker). Numbers are `None` when the
    header had none (`@@`, `@@ @@`, envelope hunks).
    """

    lines: tuple[str, ...]
    old_start: int | None = None
    old_count: int | None = None
    new_start: int | None = None
    new_count: int | None = None
    section: str = ""
    """Text after the closing `@@` (often the enclosing function)."""
    anchors: tuple[str, ...] = ()
    """apply_patch `@@ <line>` anchors, outermost first."""
    at_eof: bool = False
    """apply_patch `*** End of File`: the hunk ends at the end of the file."""

    @property
    def text(self) -> str:
        return "".join(self.lines)


@dataclass(frozen=True)
class FileDiff:
    """The hunks for one file. A `None` path is `/dev/null` (create or delete)."""

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...]
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False
    has_header: bool = True
    """False for bare hunks with no `---`/`+++` (or envelope) header: the file is unknown."""
    start_line: int = 0
    """0-based line in the model text where this file's section starts."""
    end_line: int = 0
    """0-based line in the model text after this file's section."""


class Strategy(StrEnum):
    """How a hunk was located."""

    DIRECT = "direct"
    DIRECT_STRIPPED = "direct_stripped_blank_lines"
    RELATIVE_INDENT = "relative_indent"
    NEW_LINES_EXPLICIT = "new_lines_explicit"
    PARTIAL_CONTEXT = "partial_context"
    WHITESPACE_TOLERANT = "whitespace_tolerant"
    INDENT_TOLERANT = "indent_tolerant"
    PUNCTUATION_FOLDED = "punctuation_folded"
    FUZZY_CONTEXT = "fuzzy_context"
    STALE_CONTEXT = "stale_context"
    APPEND = "append"
    LINE_NUMBER = "line_number"


class SkipReason(StrEnum):
    """Why a hunk was not applied."""

    NO_MATCH = "no_match"
    AMBIGUOUS = "ambiguous"
    SHORT_AMBIGUOUS_CONTEXT = "short_ambiguous_context"
    NO_CHANGE = "no_change"
    ALREADY_APPLIED = "already_applied"
    EMPTY_HUNK = "empty_hunk"
    MALFORMED = "malformed"
    NOT_ATTEMPTED = "not_attempted"
    ANCHOR_NOT_FOUND = "anchor_not_found"


@dataclass(frozen=True)
class HunkOutcome:
    """What happened to one hunk: applied (where, how) or skipped (why)."""

    index: int
    applied: bool
    hunk_text: str
    strategy: Strategy | None = None
    line: int | None = None
    """1-based first line of the located region, in the text at that point."""
    reason: SkipReason | None = None
    detail: str = ""
    candidates: tuple[int, ...] = ()
    """1-based lines of the equally good places, when the hunk was ambiguous."""
    notes: tuple[str, ...] = ()
    """For an applied hunk: what a careful caller should double-check (an `@@` anchor
    that names a line only below the place the hunk landed)."""


@dataclass(frozen=True)
class HunkResult:
    """The text after applying what located, with one outcome per hunk.

    `ok` is true only when every hunk applied; a partial result is never `ok`.
    Call `unwrap()` to get the text or a `PartialApplyError`.
    """

    text: str
    applied: int
    total: int
    outcomes: tuple[HunkOutcome, ...] = field(default_factory=tuple)
    spans: tuple[LineSpan, ...] | None = field(default=None, compare=False)
    """The lines the applied hunks replaced (`source` lines -> `text` lines), or `None`
    when they are not known (a whole-text fallback rewrote the file). Not compared: two
    paths to the same text may record wider or narrower spans."""

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.applied == self.total

    @property
    def partial(self) -> bool:
        return 0 < self.applied < self.total

    def unwrap(self) -> str:
        """Return the new text, or raise `PartialApplyError` unless every hunk applied."""
        if self.ok:
            return self.text
        code = FailureCode.PARTIAL_APPLY if self.applied else FailureCode.PATCH_CONTEXT_MISMATCH
        failures = [
            PatchFailure(
                code=code,
                message=f"hunk {o.index + 1} not applied: "
                f"{o.reason.value if o.reason else 'unknown'}"
                + (f" ({o.detail})" if o.detail else ""),
                hunk=o.index,
            )
            for o in self.outcomes
            if not o.applied
        ] or [PatchFailure(code=FailureCode.MALFORMED_PATCH, message="the diff holds no hunk")]
        raise PartialApplyError(failures)


@dataclass(frozen=True)
class EngineOptions:
    """Switches between the reference algorithm and each measured improvement.

    `EngineOptions.compat()` turns every improvement off (llm-diff-patcher 0.2.1
    exactly); `EngineOptions.default()` turns every one on.
    """

    keep_line_endings: bool = True
    """Keep each line's ending; match LF hunks against CRLF files and write CRLF back."""
    honour_no_newline_marker: bool = True
    """Honour `\\ No newline at end of file` on both sides."""
    require_unique: bool = True
    """Refuse whenever the matched block occurs more than once, whatever its length."""
    whole_lines: bool = True
    """Match whole lines only; a shrunken-context match must be unique and in order."""
    strip_hunk_edges_only: bool = True
    """The blank-line preprocessor strips the hunk's edges, never the file."""
    indent_tolerant: bool = True
    """Relocate a consistently shifted (or tab/space-swapped) hunk, after every exact step."""
    relative_indent: bool = True
    """aider's relative-indentation preprocessor."""
    fold_punctuation: bool = True
    """Match typographic quotes, dashes and non-breaking spaces as their ASCII forms."""
    whitespace_tolerant: bool = True
    """Ignore trailing-whitespace differences when locating (the file's text is kept)."""
    fuzzy_context: bool = True
    """Tolerate one dropped, altered or elided context line when the location is unique."""
    line_number_tiebreak: bool = True
    """Use the hunk's line numbers to choose between equally good places (never to locate)."""
    stale_context: bool = True
    """Place a hunk whose context lines were edited in the file since the model read it
    (up to three), when its removed lines pin one place with a clear margin."""
    check_anchors: bool = True
    """Refuse a hunk whose `@@` anchor (or unified-diff section header) occurs nowhere in
    the file, and note an anchor found only below the place the hunk landed."""

    @classmethod
    def compat(cls) -> EngineOptions:
        return cls(
            keep_line_endings=False,
            honour_no_newline_marker=False,
            require_unique=False,
            whole_lines=False,
            strip_hunk_edges_only=False,
            indent_tolerant=False,
            relative_indent=False,
            fold_punctuation=False,
            whitespace_tolerant=False,
            fuzzy_context=False,
            line_number_tiebreak=False,
            stale_context=False,
            check_anchors=False,
        )

    @classmethod
    def default(cls) -> EngineOptions:
        return cls()

    @classmethod
    def strict(cls) -> EngineOptions:
        """Default mode with nothing tolerated beyond whitespace: no punctuation folding,
        no indentation shift, no partial or stale context (`--strict`)."""
        return cls(
            indent_tolerant=False,
            relative_indent=False,
            fold_punctuation=False,
            fuzzy_context=False,
            stale_context=False,
        )

    @property
    def is_compat(self) -> bool:
        return self == EngineOptions.compat()
