"""Where a change came from: a model's text reply, one editor tool call, or a proposal.

The same refusal needs different words for each: a text reply is resent whole, a tool
call is made again (or another tool is called, `create` for a missing file), a
proposal is resent with every operation. The entry points set it (`apply(origin=...)`,
`propose`, `write_file`, the editor adapters and the MCP tools); the report carries it
and its hints are worded by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["PROPOSAL", "TEXT_REPLY", "CallFlavor", "CallOrigin"]


class CallFlavor(StrEnum):
    """How the model sent the change."""

    TEXT = "text"
    """A text reply in any edit format (diff, envelope, blocks, whole files, JSON calls)."""
    TOOL_CALL = "tool_call"
    """One call of an editor tool (`str_replace`, `create`, `insert`, `write_file`...)."""
    PROPOSAL = "proposal"
    """A `PatchProposal`."""


@dataclass(frozen=True)
class CallOrigin:
    """The flavor of the call that made a change, and for a tool call the tool's name."""

    flavor: CallFlavor = CallFlavor.TEXT
    tool: str | None = None
    """The tool (or editor command) called: `str_replace`, `create`, `insert`..."""

    @classmethod
    def tool_call(cls, tool: str) -> CallOrigin:
        return cls(CallFlavor.TOOL_CALL, tool)

    @property
    def is_tool_call(self) -> bool:
        return self.flavor is CallFlavor.TOOL_CALL

    def to_json(self) -> dict[str, object]:
        return {"flavor": self.flavor.value, "tool": self.tool}


TEXT_REPLY = CallOrigin()
"""The default: a model's text reply."""
PROPOSAL = CallOrigin(CallFlavor.PROPOSAL)
"""A `PatchProposal`."""
