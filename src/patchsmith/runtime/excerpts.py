"""Excerpts a refusal may carry: numbered file lines with secrets masked, and near paths."""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable, Sequence

__all__ = ["masked_excerpt", "nearest_paths"]

_MAX_NEAR = 3


def masked_excerpt(
    path: str, contents: Sequence[str], region: tuple[int, int], *, margin: int = 3
) -> str:
    """The numbered excerpt of `region`, with what the secret guard would flag masked.

    An excerpt goes back to a model (and into logs and the audit store); a credential
    already in the file must not travel with it.
    """
    # Deferred: the secret scanner loads detect-secrets, and `import patchsmith` stays cheap;
    # the excerpt maker is needed only once something is refused (docs/decisions/0022).
    from patchsmith.engine.excerpt import numbered_excerpt
    from patchsmith.guards.secrets import mask_secret_lines

    excerpt, first, last = numbered_excerpt(contents, *region, margin=margin)
    shown = [(n, contents[n - 1]) for n in range(first, last + 1)]
    masked = mask_secret_lines(path, shown)
    if not masked:
        return excerpt
    copy = list(contents)
    for number, text in masked.items():
        copy[number - 1] = text
    return numbered_excerpt(copy, *region, margin=margin)[0]


def nearest_paths(existing: Iterable[str], wanted: str, limit: int = _MAX_NEAR) -> list[str]:
    """Up to `limit` existing paths most like `wanted`: same file name first, then spelling."""
    paths = list(existing)
    name = posixpath.basename(wanted)
    same_name = sorted(
        (p for p in paths if posixpath.basename(p) == name),
        key=lambda p: -difflib.SequenceMatcher(None, p, wanted).ratio(),
    )
    close = difflib.get_close_matches(wanted, paths, n=limit, cutoff=0.6)
    out: list[str] = []
    for path in [*same_name, *close]:
        if path not in out and path != wanted:
            out.append(path)
    return out[:limit]
