"""The trust store: which repositories the user allowed to run their own programs.

Verification profiles, command profiles and a repository's interpreter are programs the
repository chooses. Like direnv's `allow` and mise's `trust`, patchsmith runs them only in
a repository the user trusted (`patchsmith trust PATH`), and only while what decides
those programs is what the user saw: a trust entry holds the repository's resolved path
and a digest of its verification configuration (`configuration_digest`). A changed
configuration makes the repository untrusted again.

The store is `trust.json` in the user's config directory (`$PATCHSMITH_CONFIG_DIR`, else
`$XDG_CONFIG_HOME/patchsmith`, else `~/.config/patchsmith`), never in a repository. It is
written atomically, readable by its owner only. `$PATCHSMITH_TRUSTED_PATHS` (paths joined
by `os.pathsep`) trusts every repository at or below one of them: the user's own opt-in,
for CI machines and test suites.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

__all__ = [
    "CONFIG_ENV",
    "TRUSTED_PATHS_ENV",
    "TrustEntry",
    "TrustState",
    "config_dir",
    "configuration_digest",
    "revoke",
    "store_path",
    "trust",
    "trust_state",
    "trusted",
    "trusted_as",
]

CONFIG_ENV = "PATCHSMITH_CONFIG_DIR"
"""Environment variable naming patchsmith's per-user config directory."""

TRUSTED_PATHS_ENV = "PATCHSMITH_TRUSTED_PATHS"
"""Environment variable listing trusted path prefixes (absolute, joined by `os.pathsep`)."""

STORE_NAME = "trust.json"

_PROGRAMS = (
    ".venv/bin/python",
    ".venv/Scripts/python.exe",
    "venv/bin/python",
    "venv/Scripts/python.exe",
    ".venv/bin/ruff",
    "venv/bin/ruff",
    "node_modules/.bin/tsc",
)
"""Programs under a repository that the built-in profiles pick when they exist."""

_MARKERS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "tests",
    "ruff.toml",
    ".ruff.toml",
    "mypy.ini",
    "package.json",
    "tsconfig.json",
    "go.mod",
    "Cargo.toml",
)
"""Files whose presence makes detection pick a built-in profile (docs/verify.md)."""

_MAX_PROGRAM_BYTES = 256 * 1024 * 1024
"""A repository program larger than this is identified by its size and mtime instead."""


class TrustState(StrEnum):
    """Whether a repository may run its own programs, and why."""

    TRUSTED = "trusted"
    """The store trusts it, for this very configuration."""
    ENVIRONMENT = "environment"
    """It lies at or below a path of `$PATCHSMITH_TRUSTED_PATHS`."""
    CHANGED = "changed"
    """It was trusted, but its verification configuration changed since."""
    UNTRUSTED = "untrusted"
    """It was never trusted (or the trust was revoked)."""

    @property
    def allowed(self) -> bool:
        """Whether the repository's programs may run."""
        return self in (TrustState.TRUSTED, TrustState.ENVIRONMENT)


@dataclass(frozen=True)
class TrustEntry:
    """One trusted repository: its resolved path, its configuration's digest, and when."""

    path: str
    digest: str
    trusted_at: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "digest": self.digest, "trusted_at": self.trusted_at}


def config_dir() -> Path | None:
    """patchsmith's per-user config directory (perhaps not yet created); `None`: no home."""
    chosen = os.environ.get(CONFIG_ENV)
    if chosen and os.path.isabs(chosen):
        return Path(chosen)
    base = os.environ.get("XDG_CONFIG_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "patchsmith"
    try:
        return Path.home() / ".config" / "patchsmith"
    except RuntimeError:  # no home directory to speak of
        return None


def store_path() -> Path | None:
    """The trust store's file, `None` when there is no config directory."""
    folder = config_dir()
    return None if folder is None else folder / STORE_NAME


# -- what trust covers -----------------------------------------------------------------------


def configuration_digest(root: str | os.PathLike[str]) -> str:
    """A digest of everything in the repository at `root` that decides which programs run.

    Covered: the `[verify]` and `[commands]` tables of `patchsmith.toml` (else of
    `[tool.patchsmith]` in `pyproject.toml`, which file being part of it), which files that
    make detection pick a built-in profile exist, `package.json`'s `scripts` (`npm test`
    runs them), and the identity (content digest, or link target) of every program under the
    repository a profile names (`.venv/bin/python`, `node_modules/.bin/tsc`, a relative
    `argv[0]`). The code the programs then test is not covered: checking it is their job.
    """
    base = Path(root).resolve()
    facts: dict[str, object] = {"config": _config_tables(base)}
    facts["detected"] = _detected(base)
    facts["scripts"] = _package_scripts(base)
    programs = set(_PROGRAMS) | _named_programs(facts["config"])
    facts["programs"] = {rel: _identity(base / rel) for rel in sorted(programs)}
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _config_tables(root: Path) -> dict[str, object]:
    """The `[verify]`/`[commands]` tables, from the file the profile loaders read."""
    own = root / "patchsmith.toml"
    pyproject = root / "pyproject.toml"
    keys: tuple[str, ...]
    if own.is_file():
        path, keys = own, ()
    elif pyproject.is_file():
        path, keys = pyproject, ("tool", "patchsmith")
    else:
        return {"file": None}
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return {"file": path.name, "unreadable": str(exc)}
    try:
        data: object = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        # Nothing can load from it either; any edit to it still changes the digest.
        return {"file": path.name, "bytes": hashlib.sha256(raw).hexdigest()}
    for key in keys:
        data = data.get(key, {}) if isinstance(data, Mapping) else {}
    table = data if isinstance(data, Mapping) else {}
    return {"file": path.name, "verify": table.get("verify"), "commands": table.get("commands")}


def _detected(root: Path) -> dict[str, bool]:
    """Which of the files that make detection pick a built-in profile exist."""
    return {name: (root / name).exists() for name in _MARKERS}


def _package_scripts(root: Path) -> object:
    try:
        data: object = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data.get("scripts") if isinstance(data, Mapping) else None


def _named_programs(config: object) -> set[str]:
    """The relative `argv[0]` of every configured profile, resolved against its `cwd`."""
    found: set[str] = set()
    if not isinstance(config, Mapping):
        return found
    for table_name in ("verify", "commands"):
        table = config.get(table_name)
        if not isinstance(table, Mapping):
            continue
        for body in table.values():
            if not isinstance(body, Mapping):
                continue
            argv = body.get("argv")
            cwd = body.get("cwd", ".")
            if not isinstance(argv, list) or not argv or not isinstance(argv[0], str):
                continue
            program = argv[0]
            if "/" in program and not os.path.isabs(program):
                where = cwd if isinstance(cwd, str) else "."
                found.add(os.path.normpath(os.path.join(where, program)))
    return found


def _identity(path: Path) -> str | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            return "link:" + os.readlink(path)
        except OSError:
            return "link:?"
    if not stat.S_ISREG(info.st_mode):
        return "other"
    if info.st_size > _MAX_PROGRAM_BYTES:
        return f"large:{info.st_size}:{info.st_mtime_ns}"
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return "unreadable"
    return f"sha256:{digest.hexdigest()}:{stat.S_IMODE(info.st_mode) & 0o111:o}"


# -- the store -------------------------------------------------------------------------------


def trusted() -> list[TrustEntry]:
    """Every trusted repository in the store, by path."""
    return sorted(_read().values(), key=lambda e: e.path)


def trust(root: str | os.PathLike[str]) -> TrustEntry:
    """Trust the repository at `root` as its configuration is now. OSError when unwritable."""
    path = str(Path(root).resolve())
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    entry = TrustEntry(path, configuration_digest(path), now)
    with _locked() as folder:
        entries = _read()
        entries[path] = entry
        _write(folder, entries)
    return entry


def revoke(root: str | os.PathLike[str]) -> bool:
    """Forget the trust given to `root` (its path as given, or resolved); True when known."""
    given = os.path.abspath(os.fspath(root))
    candidates = {given, str(Path(given).resolve())}
    with _locked() as folder:
        entries = _read()
        gone = [p for p in candidates if p in entries]
        for p in gone:
            del entries[p]
        if gone:
            _write(folder, entries)
    return bool(gone)


def trust_state(root: str | os.PathLike[str]) -> TrustState:
    """Whether the repository at `root` may run its programs now (see `TrustState`)."""
    path = Path(root).resolve()
    if _under_trusted_prefix(path):
        return TrustState.ENVIRONMENT
    entry = _read().get(str(path))
    if entry is None:
        return TrustState.UNTRUSTED
    if entry.digest != configuration_digest(path):
        return TrustState.CHANGED
    return TrustState.TRUSTED


def trusted_as(root: str | os.PathLike[str], source: str | os.PathLike[str]) -> bool:
    """Whether `root` (a checkout of `source`) has the configuration the user trusted
    `source` with: a fresh clone of a trusted repository is as trusted as its source."""
    entry = _read().get(str(Path(source).resolve()))
    return entry is not None and entry.digest == configuration_digest(root)


def _under_trusted_prefix(path: Path) -> bool:
    for prefix in os.environ.get(TRUSTED_PATHS_ENV, "").split(os.pathsep):
        if not prefix or not os.path.isabs(prefix):
            continue  # a relative prefix would trust whatever the working directory is
        base = Path(prefix).resolve()
        if path == base or path.is_relative_to(base):
            return True
    return False


def _read() -> dict[str, TrustEntry]:
    """The store's entries; an absent or unreadable store trusts nothing."""
    where = store_path()
    if where is None:
        return {}
    try:
        with open(where, encoding="utf-8") as handle:
            data: object = json.load(handle)
    except (OSError, ValueError):
        return {}
    rows = data.get("repositories") if isinstance(data, Mapping) else None
    if not isinstance(rows, Mapping):
        return {}
    entries: dict[str, TrustEntry] = {}
    for path, row in rows.items():
        if not isinstance(row, Mapping):
            continue
        digest, when = row.get("digest"), row.get("trusted_at")
        if isinstance(path, str) and isinstance(digest, str):
            entries[path] = TrustEntry(path, digest, when if isinstance(when, str) else "")
    return entries


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    """The config directory, made (0700) and held under an exclusive lock for a rewrite."""
    folder = config_dir()
    if folder is None:
        raise OSError("no config directory: set PATCHSMITH_CONFIG_DIR or HOME")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(folder / ".trust.lock", flags, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: a lone writer is assumed
            yield folder
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder
    finally:
        os.close(fd)


def _write(folder: Path, entries: Mapping[str, TrustEntry]) -> None:
    document = {
        "version": 1,
        "repositories": {
            p: {"digest": e.digest, "trusted_at": e.trusted_at} for p, e in sorted(entries.items())
        },
    }
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".trust-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:  # mkstemp makes it 0600
            json.dump(document, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, folder / STORE_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
