"""Generated-file guard: generated code is changed by its generator, not by hand."""

from __future__ import annotations

import re
from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext, touched_paths
from patchsmith.policy import matches
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import head_lines, text_of

__all__ = ["GENERATED_PATHS", "GeneratedFileGuard", "generated_marker", "is_generated_path"]

GENERATED_PATHS = (
    "*_pb2.py",
    "*_pb2.pyi",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.cc",
    "*.pb.h",
    "*.pb.swift",
    "*.g.dart",
    "*.freezed.dart",
    "*.designer.cs",
    "*.min.js",
    "*.min.css",
    "__generated__/",
)
"""Path conventions that mean "written by a tool" in the ecosystems that use them."""

# Each of GENERATED_PATHS is `*` and a literal suffix, or a directory name, and matches
# a path only through one of its components (a file, or a directory above it): a path
# none of whose components ends with such a suffix or is such a name cannot match, and
# is told apart without loading the gitignore matcher (the test checks the shapes).
_SUFFIXES = tuple(p[1:] for p in GENERATED_PATHS if p.startswith("*"))
_NAMES = frozenset(p.rstrip("/") for p in GENERATED_PATHS if not p.startswith("*"))


def is_generated_path(path: str) -> bool:
    """True when `path` follows one of the GENERATED_PATHS conventions."""
    parts = path.split("/")
    if not any(part.endswith(_SUFFIXES) or part in _NAMES for part in parts):
        return False
    return matches(GENERATED_PATHS, path)


MARKER_LINES = 10
"""Generators put their marker in a file's header; a marker deeper down is prose."""

_MARKERS = (
    re.compile(r"^// Code generated .* DO NOT EDIT\.$"),
    re.compile(r"@generated\b"),
    re.compile(r"\bDO NOT EDIT\b"),
)


def generated_marker(text: str) -> str | None:
    """The generated-code marker in the first lines of `text`, or `None`."""
    head = head_lines(text, MARKER_LINES)
    # every marker holds one of these words: most headers are told apart without a regex
    joined = "\n".join(head)
    if "@generated" not in joined and "DO NOT EDIT" not in joined:
        return None
    for line in head:
        for marker in _MARKERS:
            found = marker.search(line.rstrip("\r"))
            if found:
                return found.group(0)
    return None


class GeneratedFileGuard(Guard):
    """Refuse a hand edit to a generated file.

    What: a change made outside a command profile may not touch a file whose
    current text has `@generated`, `DO NOT EDIT` or Go's `// Code generated ...
    DO NOT EDIT.` in its first ten lines, nor a path following a generated-file
    convention (`*_pb2.py`, `*.pb.go`, `*.min.js`, `__generated__/`...).
    Why: the next run of the generator silently discards a hand edit; the fix
    belongs in the generator's input.
    Example: editing `api/service.pb.go` is GENERATED_FILE; editing
    `api/service.go` next to it is not.
    """

    NAME = "generated_file"
    CODE = FailureCode.GENERATED_FILE
    MESSAGE = "generated file edited by hand"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per hand-made change to a marked or conventionally generated file."""
        failures: list[PatchFailure] = []
        for change in changes:
            if change.generated_by_command:
                continue
            old = text_of(change.old_content, change.old_text)
            marker = generated_marker(old) if old is not None else None
            if marker is not None:
                failures.append(
                    self.failure(
                        change.path,
                        f"{change.old_path or change.path} is marked {marker!r}",
                        hint="change the generator's input and regenerate",
                    )
                )
                continue
            for path in touched_paths(change):
                if is_generated_path(path):
                    failures.append(
                        self.failure(
                            path,
                            f"{path} follows a generated-file naming convention",
                            hint="change the generator's input and regenerate",
                        )
                    )
                    break
        return failures
