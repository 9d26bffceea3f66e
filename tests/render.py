"""Render a change of one file as clean text in each edit format (for round-trip tests).

Each renderer takes `(path, old_text, new_text)`; `old_text` is `None` for a created file and
`new_text` `None` for a deleted one, where the format can say so.
"""

from __future__ import annotations

import difflib
import json

__all__ = [
    "render_apply_patch",
    "render_search_replace",
    "render_str_replace",
    "render_udiff",
    "render_whole_file",
    "text_lines",
]

_NO_NEWLINE = "\\ No newline at end of file\n"


def text_lines(text: str) -> list[str]:
    """Lines split on "\\n" only, each keeping it (the last may have none)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _body(lines: list[str], op: str) -> str:
    out = []
    for line in lines:
        out.append(op + line)
        if not line.endswith("\n"):
            out.append("\n" + _NO_NEWLINE)
    return "".join(out)


def render_udiff(path: str, old: str | None, new: str | None, *, context: int = 3) -> str:
    """A git-style diff (`diff --git`, `a/`/`b/`, `/dev/null`, no-newline markers)."""
    old_lines = text_lines(old or "")
    new_lines = text_lines(new or "")
    head = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    if new is None:
        head.append("deleted file mode 100644\n")
    head.append("--- /dev/null\n" if old is None else f"--- a/{path}\n")
    head.append("+++ /dev/null\n" if new is None else f"+++ b/{path}\n")
    body: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        body.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                body.append(_body(old_lines[a1:a2], " "))
                continue
            body.append(_body(old_lines[a1:a2], "-"))
            body.append(_body(new_lines[b1:b2], "+"))
    return "".join(head + body)


def _range(start: int, stop: int) -> str:
    count = stop - start
    first = start + 1 if count else start
    return f"{first},{count}"


def render_apply_patch(path: str, old: str | None, new: str | None) -> str:
    """An apply_patch envelope: Add, Delete, or Update with one `@@` per changed region."""
    out = ["*** Begin Patch\n"]
    if old is None:
        out.append(f"*** Add File: {path}\n")
        out.extend("+" + line.rstrip("\n") + "\n" for line in text_lines(new or ""))
    elif new is None:
        out.append(f"*** Delete File: {path}\n")
    else:
        out.append(f"*** Update File: {path}\n")
        old_lines = [line.rstrip("\n") for line in text_lines(old)]
        new_lines = [line.rstrip("\n") for line in text_lines(new)]
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for group in matcher.get_grouped_opcodes(3):
            out.append("@@\n")
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    out.extend(f" {line}\n" for line in old_lines[a1:a2])
                    continue
                out.extend(f"-{line}\n" for line in old_lines[a1:a2])
                out.extend(f"+{line}\n" for line in new_lines[b1:b2])
    out.append("*** End Patch\n")
    return "".join(out)


def render_search_replace(path: str, old: str, new: str) -> str:
    """One aider block: the path, a fence, SEARCH `old`, REPLACE `new`."""
    search = old if not old or old.endswith("\n") else old + "\n"
    replace = new if not new or new.endswith("\n") else new + "\n"
    return f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def render_whole_file(path: str, new: str) -> str:
    """The path, then a fence longer than any backtick run at a line start in `new`."""
    longest = max((len(line) - len(line.lstrip("`")) for line in text_lines(new)), default=0)
    fence = "`" * max(3, longest + 1)
    body = new if not new or new.endswith("\n") else new + "\n"
    return f"{path}\n{fence}\n{body}{fence}\n"


def render_str_replace(path: str, old: str | None, new: str) -> str:
    """A str_replace tool call as JSON (`create` when `old` is `None`)."""
    if old is None:
        call = {"command": "create", "path": path, "file_text": new}
    else:
        call = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
    return json.dumps(call, ensure_ascii=False, indent=2) + "\n"
