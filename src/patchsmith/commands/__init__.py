"""Command-generated changes: allow-listed command profiles run on a scratch copy.

Lockfiles, generated code and formatter output change only this way: a profile
(argv template with validated parameters) runs on a copy of the workspace, what it
changed is checked against the expected and forbidden paths, and then staged as
command-generated into the same transaction as the rest of the proposal.

Layer (docs/architecture.md): a workflow, sibling of `attempt`, `verify`, `codemod` and
`pipeline`; may import them and `store` and everything below, never `fleet`, `mcp` or `cli`.
"""

from __future__ import annotations

from patchsmith.commands.profiles import (
    BUILTIN_PROFILES,
    CommandParam,
    CommandProfile,
    ParamKind,
    ParamValue,
    load_profiles,
    render_argv,
)
from patchsmith.commands.runner import CommandRun, GeneratedFile, run_profile, summarise_output
from patchsmith.commands.stage import StagedCommands, stage_commands

__all__ = [
    "BUILTIN_PROFILES",
    "CommandParam",
    "CommandProfile",
    "CommandRun",
    "GeneratedFile",
    "ParamKind",
    "ParamValue",
    "StagedCommands",
    "load_profiles",
    "render_argv",
    "run_profile",
    "stage_commands",
    "summarise_output",
]
