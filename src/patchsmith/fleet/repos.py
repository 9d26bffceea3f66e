"""The repositories file: one repository a line, a local path or a git URL, optionally `@ref`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure

__all__ = ["RepoSpec", "parse_repos", "read_repos_file"]

_URL_SCHEMES = ("file://", "http://", "https://", "ssh://", "git://")


@dataclass(frozen=True, order=True)
class RepoSpec:
    """One repository of a fleet run, as its line named it.

    `key` is the line itself (comments and spaces stripped): the run's name for the
    repository, unique within a run. `source` is what git clones (an absolute path for
    a local repository, else the URL as written); `ref` is a branch, tag or commit, or
    `None` for the repository's default branch.
    """

    key: str
    source: str
    ref: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "source": self.source, "ref": self.ref}


def _split_ref(entry: str) -> tuple[str, str | None]:
    """`where@ref` → (where, ref); the `@` of `git@host:path` or `user@host` is not a ref."""
    at = entry.rfind("@")
    if at <= 0:
        return entry, None
    where, ref = entry[:at], entry[at + 1 :]
    if not ref or ":" in ref:
        return entry, None  # `git@github.com:org/repo.git`: the user of an scp-like URL
    scheme = where.find("://")
    if scheme >= 0 and "/" not in where[scheme + 3 :]:
        return entry, None  # `https://user@host/repo`: the user of a URL
    return where, ref


def _is_url(where: str) -> bool:
    if where.startswith(_URL_SCHEMES):
        return True
    # scp-like `user@host:path` (a colon before any slash), as git reads it
    colon, slash = where.find(":"), where.find("/")
    return colon > 1 and (slash < 0 or colon < slash)


def parse_repos(text: str, *, base: Path) -> list[RepoSpec]:
    """Parse a repositories file's text; relative paths are read from `base`.

    Blank lines and `#` comments are skipped; a repeated line counts once. Nothing is
    checked here: a line that names no reachable repository becomes that repository's
    REPOSITORY_UNAVAILABLE result when the run reaches it, like any other failure.
    """
    specs: list[RepoSpec] = []
    seen: set[str] = set()
    for raw in text.splitlines():
        line = "" if raw.lstrip().startswith("#") else raw.split(" #", 1)[0].strip()
        if not line or line in seen:
            continue
        seen.add(line)
        where, ref = _split_ref(line)
        if _is_url(where):
            source = where
        else:
            path = Path(os.path.expanduser(where))
            source = os.fspath(path if path.is_absolute() else (base / path).absolute())
        specs.append(RepoSpec(line, source, ref))
    return specs


def read_repos_file(path: str | os.PathLike[str]) -> list[RepoSpec] | PatchFailure:
    """Read and parse a repositories file (FILE_NOT_FOUND when it cannot be read)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return PatchFailure(
            FailureCode.FILE_NOT_FOUND,
            f"cannot read the repositories file {os.fspath(path)!r}: {exc}",
            hint="pass --repos FILE: one local path or git URL a line, optionally @REF",
        )
    return parse_repos(text, base=file.parent.absolute())
