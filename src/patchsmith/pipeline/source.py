"""Where a repair loop's proposals come from: the `ProposalSource` protocol and two sources.

A source is any callable that takes a `Turn` (the task, the milestone, the strategy
the selector chose, and every repair message of this milestone so far) and returns
the model's reply: text in any edit format, a `PatchProposal`, or a proposal as a
dict. An LLM client is one; `ScriptedSource` replays a list of replies (or calls a
function per turn); `CommandSource` runs a command per turn with the prompt on stdin
and takes its stdout as the reply, so any LLM command-line tool can drive a run.
A source that cannot answer raises `SourceError`; the run then stops.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from patchsmith.errors import PatchFailure, PatchsmithError
from patchsmith.model.proposal import PatchProposal
from patchsmith.pipeline.selector import Selection
from patchsmith.pipeline.task import Milestone, Task

__all__ = [
    "CommandSource",
    "ProposalSource",
    "Reply",
    "ScriptedSource",
    "SourceError",
    "Turn",
    "load_replies",
]

Reply = str | PatchProposal | Mapping[str, object]
"""What a source returns: model text, a proposal, or a proposal as a dict."""


class SourceError(PatchsmithError):
    """The proposal source could not give a reply (no more scripted replies, a failed command)."""


@dataclass(frozen=True)
class Turn:
    """What a source is asked, once per attempt."""

    run_id: str
    task: Task
    milestone: Milestone
    milestone_index: int
    """0-based position of the milestone in the plan."""
    attempt_no: int
    """1-based number of this attempt in the run (all milestones)."""
    selection: Selection
    feedback: tuple[str, ...] = ()
    """The repair messages of this milestone so far, oldest first (empty on its first turn)."""
    milestones: int = 1
    """How many milestones the plan has."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Current text of the milestone's named files that exist (plain paths only)."""
    failures: tuple[PatchFailure, ...] = ()
    """The failures behind the last repair message (`feedback[-1]`), as values: code, file,
    edit, hint, `candidates`, `lookalikes`, the excerpt and the file's sha256, so an adapter
    reads them without parsing the text. Empty on a milestone's first turn."""

    def prompt(self) -> str:
        """The turn as one plain-text message: objective, files, strategy, last feedback."""
        m = self.milestone
        lines = [
            f"Task: {self.task.objective}",
            f"Milestone {self.milestone_index + 1} of {self.milestones} ({m.id}): {m.objective}",
            f"Strategy: {self.selection.strategy.value} ({self.selection.reason})",
        ]
        if self.task.format.value != "auto":
            lines.append(f"Edit format: {self.task.format.value}")
        if m.files:
            lines.append("Files you may change: " + ", ".join(m.files))
        if self.task.context:
            lines.append(self.task.context)
        for path, text in self.files.items():
            lines.append(f"\n--- {path} (current content) ---\n{text}")
        if self.feedback:
            lines.append(
                f"\nYour previous reply was not accepted (attempt {self.attempt_no - 1}). "
                "Feedback:\n" + self.feedback[-1]
            )
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, object]:
        """The turn as JSON (what `CommandSource` sends with `turn_format="json"`)."""
        return {
            "run_id": self.run_id,
            "task": self.task.model_dump(mode="json"),
            "milestone": self.milestone.model_dump(mode="json"),
            "milestone_index": self.milestone_index,
            "milestones": self.milestones,
            "attempt_no": self.attempt_no,
            "selection": self.selection.to_json(),
            "feedback": list(self.feedback),
            "failures": [f.to_json() for f in self.failures],
            "files": dict(self.files),
            "prompt": self.prompt(),
        }


@runtime_checkable
class ProposalSource(Protocol):
    """Anything that answers a `Turn` with a reply (an LLM client, a script, a person)."""

    def __call__(self, turn: Turn, /) -> Reply: ...


class ScriptedSource:
    """Replies from a list, in order, or from a function of the turn (a scripted model).

    Items of `replies` may be replies or functions `Turn -> Reply`, so a script can
    answer from the feedback it receives. Raises `SourceError` when the list runs out.
    """

    def __init__(self, replies: Sequence[Reply | Callable[[Turn], Reply]]) -> None:
        self._replies = list(replies)
        self.turns: list[Turn] = []
        """Every turn asked, in order (what the scripted model saw)."""

    def __call__(self, turn: Turn) -> Reply:
        index = len(self.turns)
        self.turns.append(turn)
        if index >= len(self._replies):
            raise SourceError(f"the script has no reply for attempt {turn.attempt_no}")
        item = self._replies[index]
        return item(turn) if callable(item) else item


def load_replies(path: str | os.PathLike[str]) -> ScriptedSource:
    """A `ScriptedSource` from a file: a JSON array of replies, or JSON Lines (one per line).

    Each reply is a JSON string (model text) or an object (a proposal). Raises
    `SourceError` when the file cannot be read or holds anything else.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"cannot read replies from {os.fspath(path)!r}: {exc}") from None
    items: list[object]
    try:
        loaded: object = json.loads(text)
        items = loaded if isinstance(loaded, list) else [loaded]
    except ValueError:
        try:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise SourceError(
                f"{os.fspath(path)!r} is neither a JSON array nor JSON Lines: {exc}"
            ) from None
    replies: list[Reply] = []
    for number, item in enumerate(items, 1):
        if isinstance(item, str | dict):
            replies.append(item)
        else:
            raise SourceError(
                f"reply {number} of {os.fspath(path)!r} is a {type(item).__name__}; "
                "a reply is a string (model text) or an object (a proposal)"
            )
    return ScriptedSource(replies)


class CommandSource:
    """Runs `argv` once per turn: the turn's prompt (or JSON) on stdin, the reply on stdout.

    No shell is involved. It runs in `cwd` (default: the current directory). The
    environment is inherited, plus `PATCHSMITH_RUN_ID`, `PATCHSMITH_ATTEMPT`,
    `PATCHSMITH_MILESTONE` and whatever `env` adds (the CLI adds `PATCHSMITH_ROOT`,
    the workspace's absolute path). A stdout holding a JSON object
    with `operations` is read as a proposal, anything else as model text. A command
    that fails, times out or prints nothing raises `SourceError`.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        turn_format: str = "text",
        timeout_seconds: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not argv:
            raise ValueError("argv must name a command")
        if turn_format not in ("text", "json"):
            raise ValueError("turn_format is 'text' or 'json'")
        self.argv = tuple(argv)
        self.cwd = cwd
        self.turn_format = turn_format
        self.timeout_seconds = timeout_seconds
        self.env = dict(env or {})

    def __call__(self, turn: Turn) -> Reply:
        stdin = turn.prompt() if self.turn_format == "text" else json.dumps(turn.to_json())
        env = {
            **os.environ,
            **self.env,
            "PATCHSMITH_RUN_ID": turn.run_id,
            "PATCHSMITH_ATTEMPT": str(turn.attempt_no),
            "PATCHSMITH_MILESTONE": turn.milestone.id,
        }
        try:
            done = subprocess.run(
                self.argv,
                input=stdin,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                cwd=self.cwd,
                env=env,
                timeout=self.timeout_seconds,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceError(f"the source command {self.argv[0]!r} failed: {exc}") from None
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-3:]
            raise SourceError(
                f"the source command exited with {done.returncode}"
                + (": " + " / ".join(tail) if tail else "")
            )
        reply = done.stdout
        if not reply.strip():
            raise SourceError("the source command printed no reply")
        return _maybe_proposal(reply)


def _maybe_proposal(text: str) -> Reply:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text
    try:
        data: object = json.loads(stripped)
    except ValueError:
        return text
    if isinstance(data, dict) and ("operations" in data):
        return data
    return text
