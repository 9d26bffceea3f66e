"""What every parser gets (the tool's output, its report file, where it ran), and what an
exit code means: each parser module keeps its tool's exit-code table (`ExitTable`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from patchsmith.model.evidence import ToolFailure, Verdict

__all__ = [
    "NOT_STARTED_SIGNS",
    "ExitMeaning",
    "ExitTable",
    "ParserInput",
    "exit_verdict",
    "missing_tool",
    "python_module",
    "relative_path",
]


@dataclass(frozen=True)
class ParserInput:
    """The raw material of one run: both streams and the report file the tool wrote (if any)."""

    stdout: str
    stderr: str
    report: str | None = None
    """Text of the report file the profile asked for (`{report}` in argv), e.g. JUnit XML."""
    root: str = ""
    """Absolute directory the tool ran in: absolute paths under it are made relative."""
    argv: tuple[str, ...] = ()
    """The command that ran (`python -m X` without X is a tool missing, not a failure)."""
    report_expected: bool = False
    """The profile asked for a report file (`{report}`): without one there is no result."""


def relative_path(path: str, root: str) -> str:
    """`path` relative to `root` when it lies under it; otherwise as the tool gave it."""
    cleaned = path.strip()
    if cleaned.startswith("./"):
        cleaned = cleaned[2:]
    if root and cleaned.startswith("/"):
        base = PurePosixPath(root)
        candidate = PurePosixPath(cleaned)
        if candidate.is_relative_to(base):
            return candidate.relative_to(base).as_posix()
    return cleaned


@dataclass(frozen=True)
class ExitMeaning:
    """What one exit code of a tool means: a verdict, and words for it."""

    verdict: Verdict
    meaning: str


ExitTable = Mapping[int, ExitMeaning]
"""A tool's exit codes; a code not in its table is `error` (not a result we know)."""

NOT_STARTED_SIGNS: tuple[str, ...] = (
    "command not found",
    "could not determine executable to run",
    "npx canceled due to missing packages",
)
"""Output that says the tool itself is missing, whatever its exit code (a shell or npx
that cannot find it). `python -m X` without X is recognised from the argv."""


def exit_verdict(
    table: ExitTable,
    exit_code: int,
    data: ParserInput,
    failures: Sequence[ToolFailure],
    *,
    tool: str,
    signs: Sequence[str] = (),
    need_parsed: bool = True,
) -> tuple[Verdict, str]:
    """The verdict of a run that started and ended by itself with `exit_code`.

    `signs` are tool-specific phrases that mean "could not run" (a toolchain or
    dependency missing) on top of `NOT_STARTED_SIGNS`. A failing code with nothing
    parsed is `error` too: the tool said "failed" but not what, so nothing can be
    compared with the base. Tools whose failures are often not parsable (`generic`,
    `exit-code`) pass `need_parsed=False`: their bare failure is `failed`, and the
    comparison with the base decides (docs/verify.md).
    """
    if exit_code != 0:
        missing = missing_tool(data, signs)
        if missing is not None:
            return Verdict.ERROR, f"{tool} could not run: {missing}"
    meaning = table.get(exit_code)
    if meaning is None:
        return Verdict.ERROR, f"{tool} exit {exit_code}: not an exit code it documents as a result"
    if meaning.verdict is Verdict.FAILED and not failures and need_parsed:
        return Verdict.ERROR, f"{tool} exit {exit_code} ({meaning.meaning}) but nothing parsable"
    return meaning.verdict, f"{tool} exit {exit_code}: {meaning.meaning}"


def missing_tool(data: ParserInput, signs: Sequence[str] = ()) -> str | None:
    """The output line saying the tool (or what it needs to start) is missing, else `None`."""
    text = data.stdout + "\n" + data.stderr
    module = python_module(data.argv)
    found = [*NOT_STARTED_SIGNS, *signs]
    if module is not None:
        found += [f"No module named {module}", f"No module named '{module}'"]
    for sign in found:
        if sign in text:
            return _line_with(text, sign)
    return None


def python_module(argv: Sequence[str]) -> str | None:
    """`X` of `python [options] -m X ...`, else `None`."""
    for index, arg in enumerate(argv[1:-1], start=1):
        if arg == "-m":
            return argv[index + 1]
        if not arg.startswith("-"):
            return None
    return None


def _line_with(text: str, sign: str) -> str:
    for line in text.splitlines():
        if sign in line:
            return line.strip()[:300]
    return sign
