"""patchsmith: apply the edits language models write to a real workspace, safely.

The public surface is what `__all__` names; everything else is internal.

    >>> import patchsmith
    >>> report = patchsmith.apply(model_output, "path/to/repo")   # doctest: +SKIP
    >>> report.status, [e.code for e in report.errors]            # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchsmith.adapters import Editor
    from patchsmith.attempt.api import apply
    from patchsmith.attempt.direct import FileView, read_file, write_file
    from patchsmith.attempt.propose import propose
    from patchsmith.codemod import Recipe, RecipeReport, run_recipe
    from patchsmith.commands.run import run_command
    from patchsmith.engine import apply_hunks, apply_hunks_strict, find_diffs
    from patchsmith.engine.model import EngineOptions, HunkOutcome, HunkResult, Mode
    from patchsmith.errors import (
        FailureCode,
        PartialApplyError,
        PatchFailure,
        PatchRefused,
        PatchsmithError,
    )
    from patchsmith.fleet import FleetSummary, fleet_report, run_fleet
    from patchsmith.formats import parse_edits
    from patchsmith.formats.script import Action, EditFormat, EditScript, FileEdit
    from patchsmith.formats.tools import (
        ToolDefinition,
        ToolFlavor,
        format_prompt,
        tool_definitions,
    )
    from patchsmith.model.origin import CallFlavor, CallOrigin
    from patchsmith.model.proposal import PatchProposal
    from patchsmith.model.report import (
        ApplyReport,
        ApplyStatus,
        ApplyWarning,
        FileReport,
        HunkPlacement,
        WarningCode,
    )
    from patchsmith.pipeline.budget import Budget
    from patchsmith.pipeline.freeze import FrozenCandidate, freeze
    from patchsmith.pipeline.judge import HookVerdict, Judgement, JudgeRequest, judge
    from patchsmith.pipeline.loop import RunResult, run_task
    from patchsmith.pipeline.revert import revert
    from patchsmith.pipeline.selector import ChangeFacts, select_strategy
    from patchsmith.pipeline.source import ProposalSource, Turn
    from patchsmith.pipeline.task import Task
    from patchsmith.policy import Policy

    # At run time `patchsmith.verify` is the verify package, made callable (it runs this
    # function); type checkers see the function, so `patchsmith.verify(root, ...)` checks.
    from patchsmith.verify.workflow import verify

__all__ = [
    "Action",
    "ApplyReport",
    "ApplyStatus",
    "ApplyWarning",
    "Budget",
    "CallFlavor",
    "CallOrigin",
    "ChangeFacts",
    "EditFormat",
    "EditScript",
    "Editor",
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
    "ProposalSource",
    "Recipe",
    "RecipeReport",
    "RunResult",
    "Task",
    "ToolDefinition",
    "ToolFlavor",
    "Turn",
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
    "run_task",
    "select_strategy",
    "tool_definitions",
    "verify",
    "write_file",
]
__version__ = "0.1.0"

# Every public name is loaded on first use (PEP 562): `import patchsmith` costs almost
# nothing, and each caller pays only for what it touches (the engine alone does not load
# the guards, pydantic or SQLite). See docs/decisions/0022.
_LAZY = {
    "Action": "patchsmith.formats.script",
    "ApplyReport": "patchsmith.model.report",
    "ApplyStatus": "patchsmith.model.report",
    "ApplyWarning": "patchsmith.model.report",
    "EditFormat": "patchsmith.formats.script",
    "EditScript": "patchsmith.formats.script",
    "Editor": "patchsmith.adapters",
    "CallFlavor": "patchsmith.model.origin",
    "CallOrigin": "patchsmith.model.origin",
    "EngineOptions": "patchsmith.engine.model",
    "FailureCode": "patchsmith.errors",
    "FileEdit": "patchsmith.formats.script",
    "FileReport": "patchsmith.model.report",
    "FileView": "patchsmith.attempt.direct",
    "HunkOutcome": "patchsmith.engine.model",
    "HunkPlacement": "patchsmith.model.report",
    "HunkResult": "patchsmith.engine.model",
    "Mode": "patchsmith.engine.model",
    "PartialApplyError": "patchsmith.errors",
    "PatchFailure": "patchsmith.errors",
    "PatchProposal": "patchsmith.model.proposal",
    "PatchRefused": "patchsmith.errors",
    "PatchsmithError": "patchsmith.errors",
    "Policy": "patchsmith.policy",
    "Recipe": "patchsmith.codemod",
    "RecipeReport": "patchsmith.codemod",
    "ToolDefinition": "patchsmith.formats.tools",
    "ToolFlavor": "patchsmith.formats.tools",
    "WarningCode": "patchsmith.model.report",
    "apply": "patchsmith.attempt.api",
    "apply_hunks": "patchsmith.engine",
    "apply_hunks_strict": "patchsmith.engine",
    "find_diffs": "patchsmith.engine",
    "format_prompt": "patchsmith.formats.tools",
    "parse_edits": "patchsmith.formats",
    "propose": "patchsmith.attempt.propose",
    "read_file": "patchsmith.attempt.direct",
    "run_command": "patchsmith.commands.run",
    "Budget": "patchsmith.pipeline.budget",
    "RunResult": "patchsmith.pipeline.loop",
    "run_task": "patchsmith.pipeline.loop",
    "ChangeFacts": "patchsmith.pipeline.selector",
    "select_strategy": "patchsmith.pipeline.selector",
    "ProposalSource": "patchsmith.pipeline.source",
    "Turn": "patchsmith.pipeline.source",
    "Task": "patchsmith.pipeline.task",
    "run_recipe": "patchsmith.codemod",
    "tool_definitions": "patchsmith.formats.tools",
    "verify": "patchsmith",
    "write_file": "patchsmith.attempt.direct",
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

    if name == "verify":  # the subpackage itself (callable); importing it binds it here
        value: object = importlib.import_module("patchsmith.verify")
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
