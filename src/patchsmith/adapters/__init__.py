"""Drop-in adapters: the tools agents already call, answered by patchsmith's transactions.

`Editor` takes the exact argument dicts of Anthropic's text-editor tool
(`str_replace_based_edit_tool`) and OpenHands' `str_replace_editor` and answers with the
text those tools return, every edit going through `apply` (guards, audit record) and every
`undo_edit` through `revert` (docs/agents.md).

Layer (docs/architecture.md): may import the workflows and everything below them; only
`cli` may import it, and it imports neither `fleet` nor `mcp`.
"""

from __future__ import annotations

from patchsmith.adapters.editor import DEFAULT_VIEW_CHARS, Editor, EditorResult

__all__ = ["DEFAULT_VIEW_CHARS", "Editor", "EditorResult"]
