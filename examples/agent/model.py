"""A scripted stand-in for a language model, with a model's typical mistake.

It reads the turn's prompt on stdin and prints a reply on stdout, as any LLM
command-line tool would (`patchsmith run --source-cmd "python model.py"`). Its first
reply is written from memory of an older version of the file, so its context lines
are stale and patchsmith refuses it. Every later reply is rebuilt from the feedback
alone: the line range the refusal names and the numbered lines it shows.
"""

from __future__ import annotations

import re
import sys

FROM_MEMORY = """\
--- a/inventory.py
+++ b/inventory.py
@@
 def restock(stock, n):
     result = {}
     for key, value in stock.items():
-        result[key] = value + n
+        result[key] = min(value + n, 100)
     return result
"""

NUMBERED = re.compile(r"^\s*(\d+) \| ?(.*)$")


def reply(prompt: str) -> str:
    """The model's answer to one turn's prompt."""
    if "Feedback:" not in prompt:
        return FROM_MEMORY
    feedback = prompt.split("Feedback:", 1)[1]
    where = re.search(r"lines (\d+)-(\d+) of (\S+) \(", feedback)
    if where is None:
        return FROM_MEMORY  # nothing to learn from: the loop remembers and refuses it
    first, last, path = int(where.group(1)), int(where.group(2)), where.group(3)
    shown = {
        int(m.group(1)): m.group(2)
        for m in map(NUMBERED.match, feedback.splitlines())
        if m is not None
    }
    body = []
    for number in range(first, last + 1):
        line = shown[number]
        capped = re.sub(r"\] = (\w+) \+ (\w+)$", r"] = min(\1 + \2, 100)", line)
        body += [" " + line] if capped == line else ["-" + line, "+" + capped]
    return f"--- a/{path}\n+++ b/{path}\n@@\n" + "\n".join(body) + "\n"


if __name__ == "__main__":
    sys.stdout.write(reply(sys.stdin.read()))
