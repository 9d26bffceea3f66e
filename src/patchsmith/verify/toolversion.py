"""The version of the tool a profile runs (`pytest --version`, `tsc -v`, `go version`, ...).

Asked once per program (and interpreter, for `python -m X`) per process: the answer is
kept with every run's evidence, so a result carries the version of the tool that made
it. Only well-known tools are asked; a repository's own script is never run with a
`--version` it may not understand.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath

from patchsmith.runtime.process import ESSENTIAL_ENV, run_process
from patchsmith.runtime.sandbox import SandboxSpec
from patchsmith.verify.parsers.base import python_module

__all__ = ["tool_version", "version_argv"]

VERSION_TIMEOUT_S = 30.0

_FLAG = {"go": "version", "javac": "-version", "java": "-version", "tsc": "-v"}
"""Tools whose version is not asked with `--version`."""

_KNOWN = frozenset(
    {
        "pytest",
        "py.test",
        "ruff",
        "mypy",
        "pyright",
        "black",
        "flake8",
        "pylint",
        "tsc",
        "node",
        "npm",
        "eslint",
        "jest",
        "vitest",
        "go",
        "cargo",
        "rustc",
        "javac",
        "java",
        "mvn",
        "gradle",
        "gcc",
        "clang",
        "make",
        "cmake",
    }
)
"""Programs whose version flag is known to print a version and do nothing else."""

_cache: dict[tuple[str, ...], str | None] = {}
_lock = threading.Lock()


def version_argv(argv: Sequence[str], cwd: Path) -> tuple[str, ...] | None:
    """The command that prints the version of the tool `argv` runs, or `None` (unknown tool).

    A relative program path (`.venv/bin/python`) is resolved against `cwd`, so the key
    names the interpreter itself.
    """
    if not argv:
        return None
    program = _resolve(argv[0], cwd)
    name = PurePath(argv[0]).name.removesuffix(".exe")
    if name.startswith(("python", "pypy")):
        module = python_module(argv)
        if module is None or module.split(".")[0] not in _KNOWN | {"compileall", "unittest"}:
            return None
        if module.split(".")[0] in ("compileall", "unittest"):
            return (program, "--version")  # the interpreter's version is the tool's
        return (program, "-m", module, "--version")
    if name == "npx":
        rest = [a for a in argv[1:] if not a.startswith("-")]
        flags = tuple(a for a in argv[1:] if a in ("--no-install", "--no"))
        if not rest or rest[0] not in _KNOWN:
            return None
        return (program, *flags, rest[0], _FLAG.get(rest[0], "--version"))
    if name not in _KNOWN:
        return None
    return (program, _FLAG.get(name, "--version"))


def tool_version(
    argv: Sequence[str],
    cwd: Path,
    *,
    env_allow: Sequence[str] = ESSENTIAL_ENV,
    env_set: Mapping[str, str] | None = None,
) -> str | None:
    """The first line the tool prints for its version, or `None` (unknown tool, no answer)."""
    command = version_argv(argv, cwd)
    if command is None:
        return None
    with _lock:
        if command in _cache:
            return _cache[command]
    where = (cwd if cwd.is_dir() else Path.cwd()).resolve()
    result = run_process(
        command,
        cwd=where,
        timeout_s=VERSION_TIMEOUT_S,
        env_allow=env_allow,
        env_set=env_set,
        # the program may be the repository's (its `.venv/bin/python`): sandboxed like
        # the profile run itself, nothing writable, no network; `where` is bound because
        # the sandbox's /tmp is its own
        sandbox=SandboxSpec(writable=(), read_only=((where, where),)),
    )
    version = None
    if result.ok:
        lines = [line.strip() for line in (result.stdout + "\n" + result.stderr).splitlines()]
        version = next((line[:200] for line in lines if line), None)
    with _lock:
        _cache[command] = version
    return version


def _resolve(program: str, cwd: Path) -> str:
    if "/" in program or "\\" in program:
        path = Path(program)
        path = path if path.is_absolute() else cwd / path
        # the folder resolved (a linked `.venv`), not the program: a venv's python is a link
        return str(path.parent.resolve() / path.name)
    return shutil.which(program) or program
