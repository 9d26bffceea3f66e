"""The policy-file guard: an edit never rewrites the rules it is judged by."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import Content, content_bytes

__all__ = ["PolicyFileGuard", "patchsmith_table"]

OWN_POLICY_FILE = "patchsmith.toml"
PYPROJECT_FILE = "pyproject.toml"

_UNREADABLE = "(not valid TOML)"
"""Stands for a pyproject.toml that does not parse: one broken file equals another, as
long as neither could hold the table (`_may_name_table`)."""

_ESCAPE = re.compile(rb"\\[uUx]")

_MAX_HOPS = 40
"""Links followed from a policy file to its target (the kernel's own limit)."""
"""A TOML escape that could spell `patchsmith` in a quoted key without the word."""


def _name(path: str) -> str:
    # Case-folded: on a case-insensitive file system `PatchSmith.toml` is the policy file.
    return PurePosixPath(path).name.casefold()


def patchsmith_table(content: bytes | None) -> object:
    """The `[tool.patchsmith]` table of a pyproject.toml's bytes (`None` when absent)."""
    if content is None:
        return None
    import tomllib  # only a touched pyproject.toml is read (docs/decisions/0022)

    try:
        data = tomllib.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return _UNREADABLE
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, Mapping):
        return _UNREADABLE
    return tool.get("patchsmith")


def _may_name_table(content: bytes | None) -> bool:
    """True when a pyproject.toml that is not TOML could still hold a [tool.patchsmith]
    table, once its TOML is fixed: it names `patchsmith`, or holds an escape that could."""
    data = content or b""
    return b"patchsmith" in data.lower() or _ESCAPE.search(data) is not None


def _table_changes(before: bytes | None, after: bytes | None) -> bool:
    """True when a pyproject.toml's [tool.patchsmith] table may differ before and after.

    Two texts that are not TOML have no table to compare; an edit between them is a
    policy edit unless neither names one (else a broken file's table could be rewritten
    unseen, and take effect once someone fixes the TOML).
    """
    old, new = patchsmith_table(before), patchsmith_table(after)
    if old is _UNREADABLE and new is _UNREADABLE:
        return before != after and (_may_name_table(before) or _may_name_table(after))
    return old != new


def _sides(change: FileChange) -> Iterator[tuple[str, Content | None, Content | None]]:
    """Each touched path with its content before and after (a move empties the old path);
    as stored, so that only a policy file's is ever encoded whole."""
    if change.old_path is not None and change.old_path != change.path:
        yield change.old_path, change.old_content, None
        yield change.path, None, change.new_content
    else:
        yield change.path, change.old_content, change.new_content


def _linked_policy_paths(root: Path) -> dict[str, str]:
    """Workspace paths that the root's policy files are symlinks to, each with the policy
    file name whose rules it holds (`patchsmith.toml` or `pyproject.toml`).

    Every hop of a chain of links counts, and the final target; a target outside the
    workspace is left out (no patch reaches it).
    """
    real_root: str | None = None  # resolved only when a policy file is a link
    found: dict[str, str] = {}
    for name in (OWN_POLICY_FILE, PYPROJECT_FILE):
        here = os.path.join(root, name)
        for _ in range(_MAX_HOPS):
            try:
                link = os.readlink(here)
            except OSError:
                break  # not a link (or gone): `here` is the file the policy is read from
            if real_root is None:
                real_root = os.path.realpath(root)
            # The hop's own folder may itself be reached through links: resolve it, not it.
            here = os.path.join(os.path.realpath(os.path.dirname(here)), link)
            here = os.path.normpath(here)
            rel = os.path.relpath(here, real_root)
            if rel != ".." and not rel.startswith(".." + os.sep):
                found.setdefault(Path(rel).as_posix(), name)
    return found


class PolicyFileGuard(Guard):
    """Refuse a change to the workspace's policy.

    What: creating, changing, moving or deleting a `patchsmith.toml` (any depth), and
    any change to a `pyproject.toml` that alters its parsed `[tool.patchsmith]` table,
    is refused; the rest of a pyproject.toml may be edited freely. When the root's
    `patchsmith.toml` or `pyproject.toml` is a symlink, its target (and every link on
    the way) is protected the same way.
    Why: the policy is what every later edit is checked against; an edit that could
    set `forbidden = []` would let the next one write what was forbidden. Switch the
    guard off (`policy_files = false`, `--allow-policy-edit`, `allow_policy_edit=True`)
    to change the policy through patchsmith on purpose.
    Example: a diff that empties `forbidden` in `patchsmith.toml` is PROTECTED_PATH;
    a diff that bumps `version` in `pyproject.toml` passes.
    """

    NAME = "policy_files"
    CODE = FailureCode.PROTECTED_PATH
    MESSAGE = "the change edits the workspace's policy"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per touched policy file whose rules would change."""
        hint = (
            "leave the policy to the workspace's owner; to change it through patchsmith "
            "on purpose, pass --allow-policy-edit (Python: allow_policy_edit=True)"
        )
        failures = []
        linked = _linked_policy_paths(ctx.root) if ctx.root is not None else {}
        for change in changes:
            for path, before, after in _sides(change):
                name = _name(path)
                if path in linked:
                    # The policy is read through a symlink: its target holds the rules.
                    name = linked[path]
                if name == OWN_POLICY_FILE:
                    failures.append(self.failure(path, f"{path} holds the policy", hint=hint))
                elif name == PYPROJECT_FILE and _table_changes(
                    content_bytes(before), content_bytes(after)
                ):
                    failures.append(
                        self.failure(
                            path, f"{path} would change its [tool.patchsmith] table", hint=hint
                        )
                    )
        return failures
