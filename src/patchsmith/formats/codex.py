"""The apply_patch envelope inside the Codex CLI's call shapes, taken out of them.

Codex sends an envelope as a shell call's argv (`{"command": ["apply_patch", "*** Begin
Patch..."]}`), as a shell script with a heredoc (`apply_patch <<'EOF'` ... `EOF`, alone
or as `["bash", "-lc", "apply_patch <<'EOF' ..."]`), or as a function call's `input`
(`{"name": "apply_patch", "arguments": "{\"input\": \"*** Begin Patch...\"}"}`).
`unwrap` returns the envelope inside any of these, so the envelope reader reads it as if
it had been sent bare. The `workdir` of a shell call is not followed: paths are read
against the workspace root, as every other format's are.
"""

from __future__ import annotations

import json
import re

__all__ = ["unwrap"]

# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_ENVELOPE = r"(?im)^[ \t]*\*\*\*[ \t]*Begin[ \t]+Patch"
_PROGRAMS = frozenset({"apply_patch", "applypatch"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
# `[cd DIR &&] apply_patch <<['"]TAG['"]` NEWLINE body NEWLINE TAG
_HEREDOC = re.compile(
    r"\A\s*(?:cd[ \t]+\S+[ \t]*&&[ \t]*)?(?:apply_patch|applypatch)[ \t]*<<-?[ \t]*"
    r"(?P<quote>['\"]?)(?P<tag>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)[ \t]*\r?\n"
    r"(?P<body>.*?\r?\n)[ \t]*(?P=tag)[ \t]*(?:\r?\n\s*)?\Z",
    re.DOTALL,
)
_KEYS = ("command", "cmd", "input", "patch", "arguments", "args", "parameters", "function")
_MAX_DEPTH = 6


def unwrap(text: str) -> str | None:
    """The envelope `text` carries in one of Codex's call shapes, or None when it is not one.

    Only a whole reply of that shape is unwrapped (JSON, or a heredoc script with
    nothing after its end tag), and only when what is inside is an envelope.
    """
    stripped = text.strip()
    if not stripped:
        return None
    if stripped[0] in "{[":
        try:
            value: object = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        return _from_value(value, 0)
    return _from_script(stripped)


def _from_value(value: object, depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, str):
        if value.lstrip()[:1] in ("{", "["):
            return unwrap(value)
        if re.match(_ENVELOPE, value.lstrip("\r\n")):
            return value
        return _from_script(value)
    if isinstance(value, list):
        return _from_argv(value, depth)
    if isinstance(value, dict):
        for key in _KEYS:
            if key in value:
                found = _from_value(value[key], depth + 1)
                if found is not None:
                    return found
    return None


def _from_argv(argv: list[object], depth: int) -> str | None:
    """`["apply_patch", PATCH]` or `["bash", "-lc", SCRIPT]` (any shell, `-c` or `-lc`)."""
    if not argv or not all(isinstance(arg, str) for arg in argv):
        return None
    words = [str(arg) for arg in argv]
    program = words[0].rsplit("/", 1)[-1]
    if program in _PROGRAMS and len(words) == 2 and re.match(_ENVELOPE, words[1].lstrip("\r\n")):
        return words[1]
    if program in _SHELLS and len(words) == 3 and words[1] in ("-c", "-lc"):
        return _from_script(words[2])
    return None


def _from_script(script: str) -> str | None:
    """The body of an `apply_patch <<'EOF'` heredoc, when it is an envelope."""
    found = _HEREDOC.match(script)
    if found is None:
        return None
    body = found.group("body")
    return body if re.search(_ENVELOPE, body) else None
