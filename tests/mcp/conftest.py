"""A tiny repository for the MCP tools: one module, and a verify profile that checks it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.workspace_snapshot import make_tree

PY = json.dumps(sys.executable)

APP = (
    b"def greet(name):\n"
    b'    return "Hello, " + name\n'
    b"\n"
    b"\n"
    b"def farewell(name):\n"
    b'    return "Bye, " + name\n'
)

# The profile passes once greet("x") says "Hello, x!": the fix the scenarios make.
POLICY = f"""
[verify.greeting]
argv = [{PY}, "-c", "import app; assert app.greet('x') == 'Hello, x!', app.greet('x')"]
kind = "test"
timeout_seconds = 60
""".encode()

SLOPPY_PATCH = """I fixed the greeting; here is the patch:

```diff
--- a/app.py
+++ b/app.py
@@ -40,3 +40,3 @@ def greet(name):
 def greet(name):
-    return "Hello, " + name
+    return f"Hello, {name}!"
```

It uses an f-string now.
"""
"""Prose around a fenced diff whose line numbers are wrong: it applies by content."""

STALE_PATCH = """```diff
--- a/app.py
+++ b/app.py
@@ -5,2 +5,2 @@
 def farewell(name):
-    return "Goodbye, " + name
+    return f"Goodbye, {name}."
```
"""
"""Context that is not in the file (the model remembered "Goodbye"): refused with an excerpt."""


@pytest.fixture(name="repo")
def _repo(tmp_path: Path) -> Path:
    """app.py and a patchsmith.toml with the `greeting` verify profile."""
    return make_tree(tmp_path / "repo", {"app.py": APP, "patchsmith.toml": POLICY})


def excerpt_line(excerpt: str, starts_with: str) -> str:
    """The text of the excerpt line (`  12 | text`) whose text starts with `starts_with`."""
    for line in excerpt.splitlines():
        _, bar, text = line.partition(" | ")
        if bar and text.lstrip().startswith(starts_with):
            return text
    raise AssertionError(f"no line starting {starts_with!r} in excerpt:\n{excerpt}")


def numbered(result: Any) -> list[str]:
    """The numbered lines a view or read shows (its text without the header and note)."""
    text = result.text if hasattr(result, "text") else result.content[0].text
    return [line for line in text.splitlines()[1:] if not line.startswith("[")]
