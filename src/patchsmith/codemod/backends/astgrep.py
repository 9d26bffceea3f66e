"""The ast-grep backend: rules run by the `ast-grep` CLI from the `ast-grep-cli` wheel.

`ast-grep scan --json=stream` reports every match with its byte range and, for a rule
with `fix`, the replacement text and the range it replaces, without touching a file:
that is the dry run. patchsmith applies the replacements itself, in memory, and hands
the new texts to a transaction. (The Python binding, `ast-grep-py`, cannot apply a
`fix` that uses captures, which is why the CLI is used.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import yaml

from patchsmith.codemod.edits import Edit
from patchsmith.codemod.recipe import AstGrepRule, Language
from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "AST_GREP_LANGUAGES",
    "AstGrepMatch",
    "ast_grep_binary",
    "pattern_rule",
    "rule_document",
    "scan",
]

AST_GREP_LANGUAGES: dict[Language, str] = {
    Language.PYTHON: "python",
    Language.JAVA: "java",
    Language.JAVASCRIPT: "javascript",
    Language.TYPESCRIPT: "typescript",
    Language.TSX: "tsx",
    Language.GO: "go",
    Language.RUST: "rust",
    Language.YAML: "yaml",
    Language.JSON: "json",
}
"""The recipe languages ast-grep parses (it has no TOML grammar)."""

SCAN_TIMEOUT_SECONDS = 600.0
FILES_PER_CALL = 10_000
"""Paths per ast-grep call: far below any argv limit, large enough to keep its threads busy."""

# Every ignore source off: the recipe's scope, not the repository's ignore files, says
# which files are read (the caller already chose them).
_NO_IGNORE = [
    f"--no-ignore={kind}" for kind in ("hidden", "dot", "exclude", "global", "parent", "vcs")
]


@dataclass(frozen=True)
class AstGrepMatch:
    """One match: where it is, what it matched, and the edit its `fix` makes (if any)."""

    path: str
    rule_id: str
    start: int
    """Byte offset of the match in the file."""
    end: int
    line: int
    """1-based line of the match."""
    text: str
    edit: Edit | None
    """The rule's replacement; `None` when the rule has no `fix`."""


def ast_grep_binary() -> str | None:
    """The `ast-grep` executable: beside this interpreter (the wheel's), else on PATH."""
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "bin"):
        for name in ("ast-grep", "ast-grep.exe"):
            candidate = folder / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which("ast-grep")


def rule_document(rule: AstGrepRule, language: Language) -> dict[str, object]:
    """The ast-grep rule YAML object for `rule` in `language`."""
    doc: dict[str, object] = {
        "id": rule.id,
        "language": AST_GREP_LANGUAGES[rule.language or language],
        "rule": rule.rule,
    }
    for key in ("fix", "constraints", "utils", "transform"):
        value = getattr(rule, key)
        if value is not None:
            doc[key] = value
    return doc


def pattern_rule(rule_id: str, pattern: str, language: Language) -> dict[str, object]:
    """A fix-less rule matching `pattern` (for pattern_present and no_reference)."""
    return {"id": rule_id, "language": AST_GREP_LANGUAGES[language], "rule": {"pattern": pattern}}


def scan(
    rules: Sequence[dict[str, object]], cwd: Path, files: Sequence[str]
) -> list[AstGrepMatch] | PatchFailure:
    """Every match of `rules` in `files` (paths relative to `cwd`), in file order.

    CODEMOD_BACKEND_ERROR when ast-grep is missing, rejects a rule, or fails.
    """
    if not files:
        return []
    binary = ast_grep_binary()
    if binary is None:
        return _failure(
            "the ast-grep executable was not found",
            "install patchsmith with its dependencies (the ast-grep-cli wheel provides it)",
        )
    # libyaml's emitter when present: the pure-Python one costs more than the scan itself
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    inline = "---\n".join(yaml.dump(rule, Dumper=dumper, sort_keys=False) for rule in rules)
    found: list[AstGrepMatch] = []
    for chunk in _chunks(files, FILES_PER_CALL):
        argv = [binary, "scan", "--inline-rules", inline, "--json=stream", *_NO_IGNORE]
        argv += ["--", *chunk]
        try:
            # The report goes to a file, not a pipe: ast-grep writes it a line at a time,
            # and reading a pipe wakes this process for every few lines.
            with tempfile.TemporaryFile() as report:
                done = subprocess.run(
                    argv,
                    cwd=cwd,
                    stdout=report,
                    stderr=subprocess.PIPE,
                    timeout=SCAN_TIMEOUT_SECONDS,
                    check=False,
                )
                report.seek(0)
                stdout = report.read()
        except (OSError, subprocess.TimeoutExpired) as exc:
            return _failure(f"ast-grep could not run: {exc}", "check the ast-grep installation")
        if done.returncode != 0:
            detail = _reason(done.stderr.decode("utf-8", "replace"))
            return _failure(
                f"ast-grep rejected the rules or failed (exit {done.returncode}): {detail}",
                "check the rule against ast-grep's rule reference; `ast-grep scan "
                "--inline-rules` shows the same message",
            )
        parsed = _parse_stream(stdout)
        if isinstance(parsed, PatchFailure):
            return parsed
        found.extend(parsed)
    return found


def _reason(stderr: str) -> str:
    """ast-grep's chain of causes (its `╰▻` lines), else its first lines, bounded."""
    causes = [
        line.strip()[2:].strip() for line in stderr.splitlines() if line.strip().startswith("╰▻")
    ]
    lines = causes or [line for line in stderr.splitlines() if line.strip()][:5]
    return "; ".join(dict.fromkeys(lines))[:1000]


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _Offsets(msgspec.Struct):
    start: int
    end: int


class _Position(msgspec.Struct):
    line: int


class _Range(msgspec.Struct, rename={"byte_offset": "byteOffset"}):
    byte_offset: _Offsets
    start: _Position


class _Reported(msgspec.Struct, rename="camel"):
    """One line of `--json=stream`, reduced to the fields read here (the rest, such as
    each capture's ranges, is skipped by the decoder without being built)."""

    file: str
    range: _Range
    text: str = ""
    rule_id: str = ""
    replacement: str | None = None
    replacement_offsets: _Offsets | None = None


# A typed decoder rather than `json.loads`: building a dict for every match and every
# capture cost more than the scan's own parsing on a large tree, and the types check the
# shape of ast-grep's output in the same pass.
_STREAM = msgspec.json.Decoder(_Reported)


def _parse_stream(stdout: bytes) -> list[AstGrepMatch] | PatchFailure:
    try:
        reported = _STREAM.decode_lines(stdout)
    except msgspec.DecodeError as exc:
        return _failure(
            f"unexpected ast-grep output: {exc}", "check the ast-grep-cli version (>= 0.30)"
        )
    matches: list[AstGrepMatch] = []
    for item in reported:
        span = item.range.byte_offset
        edit = None
        if item.replacement is not None:
            where = item.replacement_offsets or span
            edit = Edit(where.start, where.end, item.replacement.encode("utf-8"))
        matches.append(
            AstGrepMatch(
                path=Path(item.file).as_posix(),
                rule_id=item.rule_id,
                start=span.start,
                end=span.end,
                line=item.range.start.line + 1,
                text=item.text,
                edit=edit,
            )
        )
    return matches


def _failure(message: str, hint: str) -> PatchFailure:
    return PatchFailure(FailureCode.CODEMOD_BACKEND_ERROR, message, hint=hint, rule="ast-grep")
