"""The engine: pure functions that locate hunks by content and apply them.

No I/O happens here. `apply_hunks` is the entry point; `mode="compat"`
reproduces llm-diff-patcher 0.2.1 exactly, `mode="default"` adds the measured
improvements listed on `EngineOptions`.

Layer (docs/architecture.md): owns pure text algorithms; imports nothing of patchsmith but
`patchsmith.errors`, and no module that touches files, processes or the clock.
"""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.engine.blocks import EditBlock, block_from_hunk, block_from_search_replace
from patchsmith.engine.diffparse import DiffParse, DiffProblem, parse_diff
from patchsmith.engine.diffparse import find_diffs as _find_diffs_default
from patchsmith.engine.hunks import apply_block, apply_hunk_list
from patchsmith.engine.model import (
    EngineOptions,
    FileDiff,
    Hunk,
    HunkOutcome,
    HunkResult,
    Mode,
    SkipReason,
    Strategy,
)

# The compat pipeline (`engine.compat`, with diff-match-patch and the jsdiff port) is
# imported by the calls that use it: the default mode never does (docs/decisions/0022).

__all__ = [
    "DiffParse",
    "DiffProblem",
    "EditBlock",
    "EngineOptions",
    "FileDiff",
    "Hunk",
    "HunkOutcome",
    "HunkResult",
    "Mode",
    "SkipReason",
    "Strategy",
    "apply_block",
    "apply_hunks",
    "apply_hunks_strict",
    "block_from_hunk",
    "block_from_search_replace",
    "find_diffs",
    "parse_diff",
]


_DEFAULT_OPTIONS = EngineOptions.default()
"""Shared (options are frozen): per-options caches in `locate` then hit on every call."""


def _options(
    mode: Mode, indent_tolerant: bool | None, options: EngineOptions | None
) -> EngineOptions:
    if options is None:
        options = EngineOptions.compat() if mode is Mode.COMPAT else _DEFAULT_OPTIONS
    if indent_tolerant is not None and indent_tolerant != options.indent_tolerant:
        from dataclasses import replace

        options = replace(options, indent_tolerant=indent_tolerant)
    return options


def _render_hunks(hunks: Sequence[Hunk]) -> str:
    """Hunks as diff text, for the compat pipeline (which only reads text)."""
    parts = ["--- source\n+++ source\n"]
    for hunk in hunks:
        parts.append("@@ @@\n")
        parts.extend(line if line.endswith("\n") else line + "\n" for line in hunk.lines)
    return "".join(parts)


def apply_hunks(
    source: str,
    diff: str | Sequence[Hunk],
    *,
    mode: Mode | str = Mode.DEFAULT,
    indent_tolerant: bool | None = None,
    options: EngineOptions | None = None,
) -> HunkResult:
    """Apply every hunk in `diff` (model text or parsed hunks) to `source`.

    Never raises for any input. The result says per hunk where and how it
    applied, or why not; `result.ok` is false unless every hunk applied, and
    `result.unwrap()` raises `PartialApplyError` in that case.
    """
    if mode is not Mode.DEFAULT:  # skip the enum lookup in the common case
        mode = Mode(mode)
    if mode is Mode.COMPAT and options is None and indent_tolerant is None:
        from patchsmith.engine.compat import apply_hunks_compat

        text = diff if isinstance(diff, str) else _render_hunks(diff)
        return apply_hunks_compat(source, text)
    resolved = _options(mode, indent_tolerant, options)
    if isinstance(diff, str):
        hunks: list[Hunk] = [h for f in _find_diffs_default(diff) for h in f.hunks]
    else:
        hunks = list(diff)
    return apply_hunk_list(source, hunks, resolved)


def apply_hunks_strict(
    source: str,
    diff: str | Sequence[Hunk],
    *,
    mode: Mode | str = Mode.DEFAULT,
    indent_tolerant: bool | None = None,
    options: EngineOptions | None = None,
) -> str:
    """Like `apply_hunks`, but return the new text or raise `PartialApplyError`."""
    return apply_hunks(
        source, diff, mode=mode, indent_tolerant=indent_tolerant, options=options
    ).unwrap()


def find_diffs(text: str, *, mode: Mode | str = Mode.DEFAULT) -> list[FileDiff]:
    """Split model output into per-file hunks. Never raises."""
    if Mode(mode) is Mode.COMPAT:
        from patchsmith.engine.compat import find_diffs_compat

        return find_diffs_compat(text)
    return _find_diffs_default(text)
