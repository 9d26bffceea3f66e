"""The pipeline: the strategy selector, the budgeted repair loop, and workflows over runs.

The selector (`selector`, and `survey`, which reads its facts from a repository) and the
repair loop (`task`, `budget`, `source`, `loop`) are exported here and load on first
use: `patchsmith.propose` consults the selector, and the loop itself calls `propose`, so
nothing here is imported eagerly. Workflows over whole
runs are one idea per module: `judge` (a deterministic rubric plus an optional hook),
`freeze` (a run's composed diff, and a commit on a new git branch), `revert` (undo one
attempt through the normal transaction), `rewind` and `recorded` (undoing recorded diffs
in memory, exactly); import those from their modules.

Layer (docs/architecture.md): a workflow, sibling of `attempt`, `verify`, `commands` and
`codemod`; may import them and `store` and everything below, never `fleet`, `mcp` or `cli`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchsmith.pipeline.budget import Budget
    from patchsmith.pipeline.loop import MilestoneResult, RunResult, RunStatus, run_task
    from patchsmith.pipeline.selector import (
        RULES,
        ChangeFacts,
        Rule,
        Selection,
        select_strategy,
    )
    from patchsmith.pipeline.source import (
        CommandSource,
        ProposalSource,
        Reply,
        ScriptedSource,
        SourceError,
        Turn,
        load_replies,
    )
    from patchsmith.pipeline.survey import Survey, select_in, survey
    from patchsmith.pipeline.task import Milestone, Task, load_task

__all__ = [
    "RULES",
    "Budget",
    "ChangeFacts",
    "CommandSource",
    "Milestone",
    "MilestoneResult",
    "ProposalSource",
    "Reply",
    "Rule",
    "RunResult",
    "RunStatus",
    "ScriptedSource",
    "Selection",
    "SourceError",
    "Survey",
    "Task",
    "Turn",
    "load_replies",
    "load_task",
    "run_task",
    "select_in",
    "select_strategy",
    "survey",
]

_HOME = {
    "Budget": "patchsmith.pipeline.budget",
    "MilestoneResult": "patchsmith.pipeline.loop",
    "RunResult": "patchsmith.pipeline.loop",
    "RunStatus": "patchsmith.pipeline.loop",
    "run_task": "patchsmith.pipeline.loop",
    "RULES": "patchsmith.pipeline.selector",
    "ChangeFacts": "patchsmith.pipeline.selector",
    "Rule": "patchsmith.pipeline.selector",
    "Selection": "patchsmith.pipeline.selector",
    "select_strategy": "patchsmith.pipeline.selector",
    "CommandSource": "patchsmith.pipeline.source",
    "ProposalSource": "patchsmith.pipeline.source",
    "Reply": "patchsmith.pipeline.source",
    "ScriptedSource": "patchsmith.pipeline.source",
    "SourceError": "patchsmith.pipeline.source",
    "Turn": "patchsmith.pipeline.source",
    "load_replies": "patchsmith.pipeline.source",
    "Survey": "patchsmith.pipeline.survey",
    "select_in": "patchsmith.pipeline.survey",
    "survey": "patchsmith.pipeline.survey",
    "Milestone": "patchsmith.pipeline.task",
    "Task": "patchsmith.pipeline.task",
    "load_task": "patchsmith.pipeline.task",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'patchsmith.pipeline' has no attribute {name!r}")
    value: object = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
