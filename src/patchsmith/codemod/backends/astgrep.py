"""The ast-grep backend: rules run by the `ast-grep` CLI from the `ast-grep-cli` wheel.

`ast-grep scan --json=stream` reports every match with its byte range and, for a rule
with `fix`, the replacement text and the range it replaces, without touching a file:
that is the dry run. patchsmith applies the replacements itself, in memory, and hands
the new texts to a transaction. (The Python binding, `ast-grep-py`, cannot apply a
`fix` that uses captures, which is why the CLI is used.)

ast-grep looks for an `sgconfig.yml` in its working folder and every parent, and one
there can remap languages or add rules: a repository (or anyone who can write to the
shared scratch folder) would decide what matches. So every scan runs with an explicit,
empty configuration of its own, from a private folder outside any repository, on
absolute paths. Files ast-grep skips (over its size limit) are named by its `--inspect`
trace and reported as skipped, never as unchanged (docs/decisions/0031).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
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


_CONFIG = "ruleDirs: []\n"
"""The whole configuration ast-grep gets: no rule folders, no language globs, no custom
languages (the rules come inline)."""

_SKIP_MARK = "sg: entity|file|"


def _skipped(stderr: str, names: Mapping[str, str]) -> dict[str, str]:
    """The files ast-grep's `--inspect entity` trace says it skipped, with its reason."""
    found: dict[str, str] = {}
    for line in stderr.splitlines():
        if not line.startswith(_SKIP_MARK):
            continue
        where, sep, detail = line[len(_SKIP_MARK) :].rpartition(": skipped=")
        if sep and where in names:
            reason = detail.strip()
            if reason == "fileTooLarge":
                reason = "over ast-grep's file size limit (fileTooLarge)"
            found[names[where]] = f"not scanned by ast-grep: {reason}; not changed"
    return found


def scan(
    rules: Sequence[dict[str, object]],
    cwd: Path,
    files: Sequence[str],
    skipped: dict[str, str] | None = None,
) -> list[AstGrepMatch] | PatchFailure:
    """Every match of `rules` in `files` (paths relative to `cwd`), in file order.

    The files ast-grep skipped are added to `skipped` (path to reason). CODEMOD_BACKEND_ERROR
    when ast-grep is missing, rejects a rule, or fails.
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
    base = os.path.abspath(cwd)
    for chunk in _chunks(files, FILES_PER_CALL):
        names = {os.path.join(base, f): f for f in chunk}
        try:
            # A private folder: its own configuration, and no sgconfig.yml above it that
            # anyone else could have written (the folder is new and ours alone).
            with tempfile.TemporaryDirectory(prefix="patchsmith-sg-") as private:
                config = os.path.join(private, "sgconfig.yml")
                with open(config, "x", encoding="utf-8") as out:
                    out.write(_CONFIG)
                argv = [binary, "scan", "--config", config, "--inline-rules", inline]
                argv += ["--json=stream", "--inspect", "entity", *_NO_IGNORE, "--", *names]
                # The report and the trace go to files, not pipes: ast-grep writes them a
                # line at a time (a trace line per file), and reading a pipe wakes this
                # process for every few lines (10,000 files: 0.25 s more).
                with tempfile.TemporaryFile() as report, tempfile.TemporaryFile() as trace:
                    done = subprocess.run(
                        argv,
                        cwd=private,
                        stdout=report,
                        stderr=trace,
                        timeout=SCAN_TIMEOUT_SECONDS,
                        check=False,
                    )
                    report.seek(0)
                    stdout = report.read()
                    trace.seek(0)
                    stderr = trace.read().decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired) as exc:
            return _failure(f"ast-grep could not run: {exc}", "check the ast-grep installation")
        if done.returncode != 0:
            return _failure(
                f"ast-grep rejected the rules or failed (exit {done.returncode}): "
                f"{_reason(stderr)}",
                "check the rule against ast-grep's rule reference; `ast-grep scan "
                "--inline-rules` shows the same message",
            )
        if skipped is not None:
            skipped.update(_skipped(stderr, names))
        parsed = _parse_stream(stdout, names)
        if isinstance(parsed, PatchFailure):
            return parsed
        found.extend(parsed)
    return found


def _reason(stderr: str) -> str:
    """ast-grep's chain of causes (its `╰▻` lines), else its first lines, bounded."""
    mine = [line for line in stderr.splitlines() if not line.startswith("sg: ")]  # no trace
    causes = [line.strip()[2:].strip() for line in mine if line.strip().startswith("╰▻")]
    lines = causes or [line for line in mine if line.strip()][:5]
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


def _parse_stream(stdout: bytes, names: Mapping[str, str]) -> list[AstGrepMatch] | PatchFailure:
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
                path=names.get(item.file, Path(item.file).as_posix()),
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
