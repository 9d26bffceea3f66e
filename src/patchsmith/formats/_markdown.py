"""Markdown around edits: code fences, and the path lines models write before them."""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Fence", "fence_close", "fence_open", "info_path", "path_from_line"]

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})([^`\n]*)$")
# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_LABEL = r"(?i)^(?:#+\s*|(?:file(?:name)?|path)\s*:\s*)"
_WRAPPERS = ("**", "__", "`", "'", '"', "*", "_")
# well-known files whose names have neither a dot nor a slash
_BARE_NAMES = frozenset(
    {
        "Makefile",
        "GNUmakefile",
        "Dockerfile",
        "Containerfile",
        "Rakefile",
        "Gemfile",
        "Procfile",
        "Jenkinsfile",
        "Vagrantfile",
        "Justfile",
        "justfile",
        "LICENSE",
        "NOTICE",
        "README",
        "CODEOWNERS",
        "AUTHORS",
        "CHANGELOG",
    }
)


class Fence(NamedTuple):
    """An opening code fence: its character, its length and its info string."""

    char: str
    length: int
    info: str


def fence_open(line: str) -> Fence | None:
    """The fence `line` opens (or closes), if it is one."""
    match = _FENCE.match(line.rstrip("\r\n"))
    if match is None:
        return None
    marks, info = match.groups()
    return Fence(marks[0], len(marks), info.strip())


def fence_close(lines: list[str], start: int, fence: Fence) -> int:
    """Index of the line closing the fence opened at `start` (`len(lines)` if none).

    A same-length fence with an info string inside opens a nested block, which its bare
    fence closes: models put fenced examples inside fenced files.
    """
    depth = 0
    for index in range(start + 1, len(lines)):
        inner = fence_open(lines[index])
        if inner is None or inner.char != fence.char or inner.length < fence.length:
            continue
        if inner.info:
            if inner.length == fence.length:
                depth += 1
        elif depth:
            depth -= 1
        else:
            return index
    return len(lines)


def path_from_line(line: str) -> str | None:
    """The file path a line names on its own (decorations stripped), or `None` for prose."""
    text = line.strip()
    text = re.sub(_LABEL, "", text, count=1).strip()
    if text.endswith(":"):
        text = text[:-1].rstrip()
    changed = True
    while changed and len(text) > 1:
        changed = False
        for wrapper in _WRAPPERS:
            if text.startswith(wrapper) and text.endswith(wrapper) and len(text) > 2 * len(wrapper):
                text = text[len(wrapper) : -len(wrapper)].strip()
                changed = True
    if text.endswith(":"):
        text = text[:-1].rstrip()
    return text if _looks_like_path(text) else None


def info_path(info: str) -> str | None:
    """A path in a fence's info string: ```` ```python src/x.py ```` or ```` ```src/x.py ````."""
    for token in reversed(info.replace(":", " ").split()):
        if ("." in token or "/" in token) and _looks_like_path(token):
            return token
    return None


def _looks_like_path(text: str) -> bool:
    if not text or len(text) > 300 or any(c.isspace() for c in text):
        return False
    if "://" in text or text.endswith(".") or text[0] in "<>=`|!@$%^&*()[]{};,":
        return False
    if not any(c.isalnum() for c in text):
        return False
    return "." in text or "/" in text or text in _BARE_NAMES
