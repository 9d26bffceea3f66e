"""Verification evidence: what a tool reported (`ToolFailure`) and what one run proved (`Evidence`).

Plain values shared by the verify workflow (which produces them), the store (which
keeps them with the attempt) and reports (which show them), so they sit in the
runtime layer and depend on nothing above it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum

__all__ = ["Evidence", "RunSide", "ToolFailure", "Verdict"]

_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class ToolFailure:
    """A failing test, a compiler error or a lint finding, as structured as its tool allows.

    `file` is relative to the directory the tool ran in when the tool said where;
    `line`/`col` are 1-based; `code` is the tool's rule or error code (`F401`,
    `return-value`, `E0308`, `TS2322`); `test_id` names a failing test. `excerpt` is
    filled in later from the source tree (numbered lines around `line`).
    """

    tool: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    code: str | None = None
    test_id: str | None = None
    severity: str = "error"
    excerpt: str | None = None

    def identity(self) -> tuple[str, str, str, str, str]:
        """What makes two runs' failures "the same" across an edit.

        Line and column numbers are left out (an edit above a failure moves it), and
        so are numbers inside the message (`-1 == 5` vs `-2 == 5` is the same failing
        assertion); a test is identified by its id alone.
        """
        if self.test_id:
            return (self.tool, "", "", self.test_id, "")
        return (
            self.tool,
            self.file or "",
            self.code or "",
            "",
            _DIGITS.sub("#", self.message.strip().splitlines()[0] if self.message.strip() else ""),
        )

    def to_json(self) -> dict[str, object]:
        """A JSON object with every field (absent ones as null)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> ToolFailure:
        """The inverse of `to_json` (used to read cached and stored runs)."""
        return cls(
            tool=str(data["tool"]),
            message=str(data["message"]),
            file=_opt_str(data.get("file")),
            line=_opt_int(data.get("line")),
            col=_opt_int(data.get("col")),
            code=_opt_str(data.get("code")),
            test_id=_opt_str(data.get("test_id")),
            severity=str(data.get("severity") or "error"),
            excerpt=_opt_str(data.get("excerpt")),
        )


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Verdict(StrEnum):
    """What a check established: only a tool that ran and proved it gives `passed`."""

    PASSED = "passed"
    """A tool ran to a real result and found nothing the change broke."""
    FAILED = "failed"
    """A tool ran to a real result and found something the change broke."""
    ERROR = "error"
    """Nothing was established: the tool is missing or could not start, its exit code is
    not a result (pytest 2-5, a toolchain absent), it timed out or crashed, its report could
    not be read, or the check is unknown. Never a pass."""


class RunSide(StrEnum):
    """Which tree a profile ran on."""

    BASE = "base"
    """The tree before the change (its result is cached per tree and profile)."""
    TARGETED = "targeted"
    """The changed tree, only the tests that import a changed module."""
    CHANGED = "changed"
    """The changed tree, the whole profile."""
    COMMAND = "command"
    """A command profile that generated changes (a lockfile, formatter output)."""


@dataclass(frozen=True)
class Evidence:
    """One profile run kept with an attempt: what ran, how it ended, what it found.

    `failures` are the run's parsed failures; `introduced` the ones the change
    brought (absent from the base run), `fixed` base failures gone after it.
    `stdout`/`stderr` are the bounded output (`output_sha256` covers all of it).
    A command-profile run (side `command`) also lists the paths it changed and, for a
    profile that runs twice, the paths whose two results differed (`nondeterministic`).

    `verdict` is what the run established (docs/verify.md, the verdict table); when a
    producer leaves it out it is derived from `passed`, `start_error` and `timed_out`
    (a run that did not start or timed out is always `error`), and `passed` always
    equals `verdict is PASSED`. `reason` says why (for `error`:
    what kept the tool from a result); `tool_version` is the tool's own `--version`
    line; `collected` the test files a pytest run collected (targeted runs pick from it).
    """

    profile: str
    side: RunSide
    argv: tuple[str, ...]
    exit_code: int | None
    duration_s: float
    passed: bool
    output_sha256: str
    failures: tuple[ToolFailure, ...] = ()
    introduced: tuple[ToolFailure, ...] = ()
    fixed: tuple[ToolFailure, ...] = ()
    timed_out: bool = False
    start_error: str | None = None
    cached: bool = False
    """True when this (base) run was read from the cache instead of run again."""
    stdout: str = ""
    stderr: str = ""
    changed_paths: tuple[str, ...] = ()
    nondeterministic: tuple[str, ...] = ()
    verdict: Verdict = field(default=None)  # type: ignore[assignment]  # derived when left out
    reason: str = ""
    tool_version: str | None = None
    collected: tuple[str, ...] = ()

    sandbox: str | None = None
    """How the run was isolated: `bwrap`, or `none` where no sandbox could be made
    (`None` in records older than the sandbox)."""

    def __post_init__(self) -> None:
        # Derived when left out; when `passed` and `verdict` disagree (a `replace` of one
        # of them), the one that claims less wins: never a pass that was not established.
        verdict = Verdict(self.verdict) if self.verdict is not None else None
        if self.start_error is not None or self.timed_out:
            verdict = Verdict.ERROR
        elif verdict is None or (verdict is Verdict.PASSED and not self.passed):
            verdict = Verdict.PASSED if self.passed else Verdict.FAILED
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "passed", verdict is Verdict.PASSED)

    def to_json(self, *, output: bool = True) -> dict[str, object]:
        """A JSON object; `output=False` leaves the bulky stdout/stderr out."""
        data: dict[str, object] = {
            "profile": self.profile,
            "side": self.side.value,
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 4),
            "passed": self.passed,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "tool_version": self.tool_version,
            "timed_out": self.timed_out,
            "start_error": self.start_error,
            "cached": self.cached,
            "output_sha256": self.output_sha256,
            "sandbox": self.sandbox,
            "failures": [f.to_json() for f in self.failures],
            "introduced": [f.to_json() for f in self.introduced],
            "fixed": [f.to_json() for f in self.fixed],
        }
        if self.collected:
            data["collected"] = list(self.collected)
        if self.side is RunSide.COMMAND:
            data["changed_paths"] = list(self.changed_paths)
            data["nondeterministic"] = list(self.nondeterministic)
        if output:
            data["stdout"] = self.stdout
            data["stderr"] = self.stderr
        return data

    def dumps(self) -> str:
        """The JSON text the store keeps."""
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def loads(cls, text: str) -> Evidence:
        """The inverse of `dumps` (a row stored before verdicts existed derives its verdict)."""
        data = json.loads(text)
        exit_code = data.get("exit_code")
        verdict = data.get("verdict")
        version = data.get("tool_version")
        return cls(
            profile=str(data["profile"]),
            side=RunSide(data["side"]),
            argv=tuple(str(a) for a in data["argv"]),
            exit_code=exit_code if isinstance(exit_code, int) else None,
            duration_s=float(data["duration_s"]),
            passed=bool(data["passed"]),
            output_sha256=str(data["output_sha256"]),
            failures=tuple(ToolFailure.from_json(f) for f in data.get("failures", [])),
            introduced=tuple(ToolFailure.from_json(f) for f in data.get("introduced", [])),
            fixed=tuple(ToolFailure.from_json(f) for f in data.get("fixed", [])),
            timed_out=bool(data.get("timed_out", False)),
            start_error=data.get("start_error"),
            cached=bool(data.get("cached", False)),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            changed_paths=tuple(str(p) for p in data.get("changed_paths", [])),
            nondeterministic=tuple(str(p) for p in data.get("nondeterministic", [])),
            verdict=Verdict(verdict) if verdict is not None else None,  # type: ignore[arg-type]
            reason=str(data.get("reason") or ""),
            tool_version=str(version) if version is not None else None,
            collected=tuple(str(p) for p in data.get("collected", [])),
            sandbox=_opt_str(data.get("sandbox")),
        )
