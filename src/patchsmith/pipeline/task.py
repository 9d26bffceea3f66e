"""`Task`: what a repair loop run is asked to do, split into milestones.

A task is JSON (or YAML) data: an objective, the files it may touch, what is known
about the change's size and shape (the selector's facts), the verification profiles
that must pass, its risk, and optionally its milestones. Without milestones the task
is one milestone. Milestones run in order; each inherits what it does not set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import EditFormat
from patchsmith.model.proposal import Risk
from patchsmith.pipeline.selector import ChangeFacts

__all__ = ["Milestone", "Task", "facts_of", "load_task"]

_T = TypeVar("_T")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Milestone(_Model):
    """One step of a task: its own objective, files and facts (unset: the task's)."""

    id: str = Field(default="", max_length=64)
    """A short name (`m1`, `parser`); numbered `m<N>` when empty."""
    objective: str = Field(min_length=1)
    files: tuple[str, ...] | None = None
    changed_lines: int | None = Field(default=None, ge=0)
    occurrences: int | None = Field(default=None, ge=0)
    recipe: str | None = Field(default=None, min_length=1)
    structural_rule: StrictBool | None = None
    command: str | None = Field(default=None, min_length=1)
    verify: tuple[str, ...] | None = None


class Task(_Model):
    """A change to make with a repair loop (`patchsmith.run_task`, `patchsmith run`)."""

    objective: str = Field(min_length=1)
    """What the change is for; sent to the proposal source every turn."""
    files: tuple[str, ...] = ()
    """Gitignore-style patterns of the files the change may touch (its `expected_files`)."""
    forbidden_files: tuple[str, ...] = ()
    changed_lines: int | None = Field(default=None, ge=0)
    """Estimated added plus removed lines (the selector's size rules need it)."""
    occurrences: int = Field(default=1, ge=0)
    recipe: str | None = Field(default=None, min_length=1)
    structural_rule: StrictBool = False
    command: str | None = Field(default=None, min_length=1)
    verify: tuple[str, ...] | None = None
    """Verification profiles each proposal must pass; `None`: the profiles the workspace
    configures (`[verify.NAME]` in patchsmith.toml or pyproject.toml), none if it has none."""
    risk: Risk = Risk.LOW
    """Tightens the run's budget and each proposal's diff budget (docs/strategies.md)."""
    format: EditFormat = EditFormat.AUTO
    """The edit format replies are read as (and the source is told to write)."""
    context: str = ""
    """Anything else the source should be told every turn (conventions, constraints)."""
    milestones: tuple[Milestone, ...] = ()

    def plan(self) -> tuple[Milestone, ...]:
        """The milestones to run, in order, each with the task's values where it sets none."""
        steps = self.milestones or (Milestone(objective=self.objective),)
        planned = []
        for number, step in enumerate(steps, 1):
            planned.append(
                Milestone(
                    id=step.id or f"m{number}",
                    objective=step.objective,
                    files=step.files if step.files is not None else self.files,
                    changed_lines=_first(step.changed_lines, self.changed_lines),
                    occurrences=_first(step.occurrences, self.occurrences),
                    recipe=_first(step.recipe, self.recipe),
                    structural_rule=_first(step.structural_rule, self.structural_rule),
                    command=_first(step.command, self.command),
                    verify=step.verify if step.verify is not None else self.verify,
                )
            )
        return tuple(planned)


def _first(value: _T | None, default: _T) -> _T:
    return default if value is None else value


def facts_of(milestone: Milestone) -> ChangeFacts:
    """The selector's inputs for a planned milestone."""
    return ChangeFacts(
        files=tuple(milestone.files or ()),
        changed_lines=milestone.changed_lines,
        occurrences=1 if milestone.occurrences is None else milestone.occurrences,
        recipe=milestone.recipe,
        structural_rule=bool(milestone.structural_rule),
        command=milestone.command,
    )


def load_task(source: Task | Mapping[str, object] | str | os.PathLike[str]) -> Task | PatchFailure:
    """A task from a model, a dict, JSON/YAML text or a file path; INVALID_TASK when not one."""
    if isinstance(source, Task):
        return source
    data: object = source
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and not source.lstrip().startswith("{")
    ):
        try:
            data = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return _invalid(f"cannot read task file {str(source)!r}: {exc}")
    if isinstance(data, str):
        text = data
        try:
            data = json.loads(text)
        except ValueError:
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                return _invalid(f"a task is a JSON or YAML object: {exc}")
    if not isinstance(data, Mapping):
        return _invalid(f"a task must be an object, got {type(data).__name__}")
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(task)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        return _invalid(f"invalid task: {problems}")


def _invalid(message: str) -> PatchFailure:
    return PatchFailure(
        FailureCode.INVALID_TASK, message, hint="docs/agents.md describes a task's fields"
    )
