"""llm-diff-patcher 0.2.1 run live under node: install it once, then ask one driver process.

Shared by the differential oracle (`tests/oracle/`) and the benchmarks (`bench/`). The package is
installed with npm into a cache outside the repository (`$PATCHSMITH_ORACLE_CACHE`, else
`~/.cache/patchsmith/oracle`) and reused from there; `driver.js` beside this module runs the
4-step pipeline of `../shared/parity/README.md` on each request.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

__all__ = [
    "PACKAGE",
    "VERSION",
    "NodeReference",
    "OracleUnavailable",
    "ReferenceResult",
    "ReferenceRun",
    "ReferenceTiming",
    "install_reference",
    "oracle_cache_dir",
]

PACKAGE = "llm-diff-patcher"
VERSION = "0.2.1"
DRIVER = Path(__file__).with_name("driver.js")
INSTALL_TIMEOUT_S = 300


class OracleUnavailable(RuntimeError):
    """node, npm or the reference package cannot be had on this machine; the reason says which."""


@dataclass(frozen=True)
class ReferenceResult:
    """What the reference pipeline returned: `ok` is false when it found no hunk."""

    ok: bool
    out: str


@dataclass(frozen=True)
class ReferenceTiming:
    """A reference result with one wall time per repetition, measured inside node."""

    result: ReferenceResult
    ns: tuple[int, ...]


@dataclass(frozen=True)
class ReferenceRun:
    """One timed pipeline run with its hunk counts: `applied < hunks` means some were skipped."""

    result: ReferenceResult
    hunks: int
    applied: int
    ns: int


def oracle_cache_dir() -> Path:
    """The npm prefix the reference is installed under."""
    configured = os.environ.get("PATCHSMITH_ORACLE_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "patchsmith" / "oracle"


def _installed_version(package_dir: Path) -> str | None:
    try:
        manifest = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = manifest.get("version") if isinstance(manifest, dict) else None
    return version if isinstance(version, str) else None


def install_reference(cache: Path | None = None) -> Path:
    """Return the directory of llm-diff-patcher 0.2.1, installing it with npm when missing.

    Raises `OracleUnavailable` when node or npm is absent or the install fails (offline).
    """
    if shutil.which("node") is None:
        raise OracleUnavailable("node is not on PATH")
    prefix = cache if cache is not None else oracle_cache_dir()
    package_dir = prefix / "node_modules" / PACKAGE
    if _installed_version(package_dir) == VERSION:
        return package_dir
    npm = shutil.which("npm")
    if npm is None:
        raise OracleUnavailable(f"npm is not on PATH (needed once to install {PACKAGE}@{VERSION})")
    try:
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                f"{PACKAGE}@{VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise OracleUnavailable(f"npm install {PACKAGE}@{VERSION} failed: {error}") from error
    if done.returncode != 0 or _installed_version(package_dir) != VERSION:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise OracleUnavailable(
            f"npm install {PACKAGE}@{VERSION} into {prefix} failed (offline?): " + " | ".join(tail)
        )
    return package_dir


class NodeReference:
    """One long-lived node process answering requests in order; use it as a context manager."""

    def __init__(self, package_dir: Path, driver: Path = DRIVER) -> None:
        node = shutil.which("node")
        if node is None:
            raise OracleUnavailable("node is not on PATH")
        self._process = subprocess.Popen(
            [node, str(driver), str(package_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            # JS strings may hold lone surrogates; JSON escapes keep them intact both ways.
            errors="surrogatepass",
        )

    @classmethod
    def start(cls, cache: Path | None = None) -> NodeReference:
        """Install the reference if needed and start its driver."""
        return cls(install_reference(cache))

    def _ask(self, request: dict[str, object]) -> dict[str, object]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        try:
            # ensure_ascii keeps the pipe 7-bit whatever the text holds.
            stdin.write(json.dumps(request, ensure_ascii=True) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise OracleUnavailable(f"the node driver exited: {self._stderr_tail()}")
        answer = json.loads(line)
        if not isinstance(answer, dict):
            raise OracleUnavailable(f"the node driver sent {line[:200]!r}")
        if "error" in answer:
            raise RuntimeError(f"the reference threw: {answer['error']}")
        return answer

    def _stderr_tail(self) -> str:
        self._process.wait(timeout=10)
        stderr = self._process.stderr.read() if self._process.stderr else ""
        return stderr.strip()[-500:]

    @staticmethod
    def _result(answer: dict[str, object]) -> ReferenceResult:
        ok, out = answer.get("ok"), answer.get("out")
        if not isinstance(ok, bool) or not isinstance(out, str):
            raise OracleUnavailable(f"the node driver sent a malformed answer: {answer!r:.200}")
        return ReferenceResult(ok=ok, out=out)

    def apply(self, source: str, diff: str) -> ReferenceResult:
        """Run the reference pipeline once on `source` and the model text `diff`."""
        return self._result(self._ask({"source": source, "diff": diff}))

    def time(self, source: str, diff: str, repeat: int) -> ReferenceTiming:
        """Run the pipeline `repeat` times in node and return its result and per-run times."""
        answer = self._ask({"source": source, "diff": diff, "repeat": repeat})
        ns = answer.get("ns")
        if not isinstance(ns, list) or len(ns) != repeat:
            raise OracleUnavailable("the node driver sent no timings")
        return ReferenceTiming(result=self._result(answer), ns=tuple(int(n) for n in ns))

    def run(self, source: str, diff: str) -> ReferenceRun:
        """Run the pipeline once, timed inside node, and say how many hunks located."""
        answer = self._ask({"source": source, "diff": diff, "repeat": 1})
        hunks, applied, ns = answer.get("hunks"), answer.get("applied"), answer.get("ns")
        if not isinstance(hunks, int) or not isinstance(applied, int) or not isinstance(ns, list):
            raise OracleUnavailable("the node driver sent no hunk counts")
        return ReferenceRun(self._result(answer), hunks, applied, int(ns[0]))

    def close(self) -> None:
        """Stop the driver: closing its stdin ends it."""
        if self._process.stdin is not None:
            # The driver may have exited already; wait() below collects it either way.
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> NodeReference:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
