"""patchsmith: apply the edits language models write to a real workspace, safely.

The public surface is what `__all__` names; everything else is internal.

    >>> import patchsmith
    >>> report = patchsmith.apply(model_output, "path/to/repo")   # doctest: +SKIP
    >>> report.status, [e.code for e in report.errors]            # doctest: +SKIP
"""

from __future__ import annotations

from patchsmith.api import apply
from patchsmith.engine import apply_hunks, apply_hunks_strict, find_diffs
from patchsmith.engine.model import EngineOptions, HunkOutcome, HunkResult, Mode
from patchsmith.errors import (
    FailureCode,
    PartialApplyError,
    PatchFailure,
    PatchRefused,
    PatchsmithError,
)
from patchsmith.formats import parse_edits
from patchsmith.formats.script import Action, EditFormat, EditScript, FileEdit
from patchsmith.report import ApplyReport, ApplyStatus, FileReport

__all__ = [
    "Action",
    "ApplyReport",
    "ApplyStatus",
    "EditFormat",
    "EditScript",
    "EngineOptions",
    "FailureCode",
    "FileEdit",
    "FileReport",
    "HunkOutcome",
    "HunkResult",
    "Mode",
    "PartialApplyError",
    "PatchFailure",
    "PatchRefused",
    "PatchsmithError",
    "apply",
    "apply_hunks",
    "apply_hunks_strict",
    "find_diffs",
    "parse_edits",
]
__version__ = "0.1.0"
