"""patchsmith: apply the edits language models write to a real workspace, safely.

The public surface is what `__all__` names; everything else is internal.

    >>> import patchsmith
    >>> report = patchsmith.apply(model_output, "path/to/repo")   # doctest: +SKIP
    >>> report.status, [e.code for e in report.errors]            # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# A callable package: `patchsmith.verify(root, profiles)` runs verification, and
# `patchsmith.verify.VerifyReport` & co. are its types (loaded on first use).
from patchsmith import verify
from patchsmith.api import apply
from patchsmith.direct import FileView, read_file, write_file
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
from patchsmith.report import (
    ApplyReport,
    ApplyStatus,
    ApplyWarning,
    FileReport,
    HunkPlacement,
    WarningCode,
)

if TYPE_CHECKING:
    from patchsmith.codemod import Recipe, RecipeReport, run_recipe
    from patchsmith.commands.run import run_command
    from patchsmith.fleet import FleetSummary, fleet_report, run_fleet
    from patchsmith.formats.tools import (
        ToolDefinition,
        ToolFlavor,
        format_prompt,
        tool_definitions,
    )
    from patchsmith.pipeline.freeze import FrozenCandidate, freeze
    from patchsmith.pipeline.judge import HookVerdict, Judgement, JudgeRequest, judge
    from patchsmith.pipeline.revert import revert
    from patchsmith.policy import Policy
    from patchsmith.proposal import PatchProposal
    from patchsmith.propose import propose

__all__ = [
    "Action",
    "ApplyReport",
    "ApplyStatus",
    "ApplyWarning",
    "EditFormat",
    "EditScript",
    "EngineOptions",
    "FailureCode",
    "FileEdit",
    "FileReport",
    "FileView",
    "FleetSummary",
    "FrozenCandidate",
    "HookVerdict",
    "HunkOutcome",
    "HunkPlacement",
    "HunkResult",
    "JudgeRequest",
    "Judgement",
    "Mode",
    "PartialApplyError",
    "PatchFailure",
    "PatchProposal",
    "PatchRefused",
    "PatchsmithError",
    "Policy",
    "Recipe",
    "RecipeReport",
    "ToolDefinition",
    "ToolFlavor",
    "WarningCode",
    "apply",
    "apply_hunks",
    "apply_hunks_strict",
    "find_diffs",
    "fleet_report",
    "format_prompt",
    "freeze",
    "judge",
    "parse_edits",
    "propose",
    "read_file",
    "revert",
    "run_command",
    "run_fleet",
    "run_recipe",
    "tool_definitions",
    "verify",
    "write_file",
]
__version__ = "0.1.0"

# Loaded on first use: these pull in pydantic, the guards and the SQLite store, which
# `import patchsmith` must not pay for.
_LAZY = {
    "PatchProposal": "patchsmith.proposal",
    "Policy": "patchsmith.policy",
    "propose": "patchsmith.propose",
    "Recipe": "patchsmith.codemod",
    "RecipeReport": "patchsmith.codemod",
    "run_recipe": "patchsmith.codemod",
    "ToolDefinition": "patchsmith.formats.tools",
    "ToolFlavor": "patchsmith.formats.tools",
    "format_prompt": "patchsmith.formats.tools",
    "tool_definitions": "patchsmith.formats.tools",
    "run_command": "patchsmith.commands.run",
    "FrozenCandidate": "patchsmith.pipeline.freeze",
    "freeze": "patchsmith.pipeline.freeze",
    "HookVerdict": "patchsmith.pipeline.judge",
    "JudgeRequest": "patchsmith.pipeline.judge",
    "Judgement": "patchsmith.pipeline.judge",
    "judge": "patchsmith.pipeline.judge",
    "revert": "patchsmith.pipeline.revert",
    "FleetSummary": "patchsmith.fleet",
    "fleet_report": "patchsmith.fleet",
    "run_fleet": "patchsmith.fleet",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'patchsmith' has no attribute {name!r}")
    import importlib

    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
