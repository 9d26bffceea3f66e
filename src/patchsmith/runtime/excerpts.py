"""Excerpts a refusal may carry: numbered file lines with secrets masked, and near paths."""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable, Sequence

__all__ = ["masked_excerpt", "masked_json", "masked_text", "nearest_paths"]

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
    from patchsmith.runtime.secrets import mask_secret_lines

    excerpt, first, last = numbered_excerpt(contents, *region, margin=margin)
    shown = [(n, contents[n - 1]) for n in range(first, last + 1)]
    masked = mask_secret_lines(path, shown)
    if not masked:
        return excerpt
    copy = list(contents)
    for number, text in masked.items():
        copy[number - 1] = text
    return numbered_excerpt(copy, *region, margin=margin)[0]


def masked_text(text: str, paths: Sequence[str] = ("",), values: Iterable[str] = ()) -> str:
    """`text` with each of `values` masked wherever it appears (verbatim or JSON-escaped),
    then every line the secret guard would flag masked as an excerpt's are (read as a
    file at each of `paths`), and the body of a private key block dropped.

    For what is kept of a refused change (the model's reply, the staged diff): the
    credential that got it refused must not be kept in clear.
    """
    import json

    from patchsmith.runtime.secrets import MASK, mask_secret_lines

    for value in sorted(set(values), key=len, reverse=True):
        for form in {value, json.dumps(value)[1:-1]}:
            text = text.replace(form, MASK)
    lines = _without_key_bodies(text.splitlines(keepends=True))
    numbered = [(n, line.rstrip("\r\n")) for n, line in enumerate(lines, 1)]
    for path in dict.fromkeys(paths):
        for number, masked in mask_secret_lines(path, numbered).items():
            ending = lines[number - 1][len(numbered[number - 1][1]) :]
            lines[number - 1] = masked + ending
            numbered[number - 1] = (number, masked)
    return "".join(lines)


def _without_key_bodies(lines: list[str]) -> list[str]:
    import re

    begin = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
    end = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
    out: list[str] = []
    inside = False
    for line in lines:
        if inside and not end.search(line):
            out.append("[masked]\n" if line.endswith("\n") else "[masked]")
            continue
        inside = bool(begin.search(line)) and not end.search(line)
        out.append(line)
    return out


def masked_json(text: str, paths: Sequence[str] = ("",), values: Iterable[str] = ()) -> str:
    """JSON `text` with `masked_text` applied to each string in it; still valid JSON.

    Text that is not JSON only has `values` replaced (which keeps any JSON valid).
    """
    import json

    from patchsmith.runtime.secrets import MASK

    values = list(values)

    def walk(node: object) -> object:
        if isinstance(node, str):
            return masked_text(node, paths, values)
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        return node

    try:
        return json.dumps(walk(json.loads(text)), ensure_ascii=False)
    except (ValueError, RecursionError):
        for value in sorted(set(values), key=len, reverse=True):
            text = text.replace(json.dumps(value)[1:-1], MASK)
        return text


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
