"""Generate the twin-block corpus: look-alike blocks, one of them edited after the model read it.

Run: `python bench/gen_twins.py [--seed twins-1] [--per-category 24] [--out FILE]`
(default `tests/data/twins/twins-public.jsonl.gz`). Same seed and count give the same bytes.

Every case is a synthetic Python file with two near-identical blocks (keyword-argument
calls at different indentation, or `raise ValueError(...)` handlers, one an exact copy of
the other), a unified diff written against one of them (the target), and, in the stale
categories, 1-3 of the hunk's context lines edited in the target afterwards (an identifier
renamed with `_v2`, or a trailing comment). `expected` is the intended edit at the target
with the edited lines kept. Scored as `../shared/corpus/README.md` says: applying elsewhere
is wrong, refusing is never wrong. Categories:

- `twin-kwargs-stale-k` (k = 1, 2, 3): twin keyword-argument calls at different
  indentation, the other twin sometimes one argument short; k context lines of the target
  edited. Header: true line numbers, numbers 40-200 lines off, or a bare `@@`.
- `twin-copy-stale-k` (k = 1, 2): the target handler and an exact copy of its old text
  30-80 lines away; k context lines of the target edited; true line numbers.
- `twin-control`: twin calls at different indentation, nothing edited, true line numbers
  (the edit must apply: the twin needs re-indentation, the numbers name the target).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "data" / "twins" / "twins-public.jsonl.gz"

_KWARGS = (
    "name",
    "domain",
    "path",
    "secure",
    "samesite",
    "httponly",
    "max_age",
    "expires",
    "partitioned",
    "priority",
    "timeout",
    "retries",
)
_NEW_KWARGS = ("comment", "version", "scope", "charset", "origin", "policy")
_CALLS = ("set_cookie", "delete_cookie", "configure", "register", "update_options")
_KEYS = ("user", "token", "region", "bucket", "account", "session", "channel")


@dataclass
class _File:
    lines: list[str]
    target: tuple[int, int]
    """File lines [start, end) of the target block."""
    twin: tuple[int, int]
    """File lines [start, end) of the other block."""


def _filler(rng: random.Random, indent: str, count: int, tag: str) -> list[str]:
    out = []
    for i in range(count):
        shape = rng.randrange(4)
        if shape == 0:
            out.append(f"{indent}total_{tag}_{i} = compute_{tag}({i}, total_{tag}_{max(i - 1, 0)})")
        elif shape == 1:
            out.append(f"{indent}# step {i} of {tag}")
        elif shape == 2:
            out.append(f"{indent}log_{tag}.append('{tag}-{i}')")
        else:
            out.append(f"{indent}count_{tag} += {i + 1}")
    return out


def _call(indent: int, call: str, kwargs: list[str]) -> list[str]:
    pad = " " * indent
    body = [f"{pad}    {kwargs[0]},"] + [f"{pad}    {k}={k}," for k in kwargs[1:]]
    return [f"{pad}response.{call}(", *body, f"{pad})"]


def _kwargs_file(rng: random.Random, tag: str) -> _File:
    kwargs = [_KWARGS[0], *rng.sample(_KWARGS[1:], rng.randint(4, 6))]
    twin = list(kwargs)
    if rng.random() < 0.5:
        del twin[rng.randrange(1, len(twin))]
    deep, shallow = rng.choice(((8, 4), (12, 4), (12, 8)))
    calls = rng.sample(_CALLS, 2)
    target_first = rng.random() < 0.5
    # The target always has the full argument list; the other twin may be one short.
    first = _call(deep, calls[0], kwargs if target_first else twin)
    second = _call(shallow, calls[1], twin if target_first else kwargs)
    lines = [f'"""Module {tag}."""', "", "import os", "", ""]
    lines += [f"def handle_{tag}(response, flag):"]
    lines += _filler(rng, "    ", rng.randint(1, 4), tag + "a")
    lines += ["    if flag:"]
    if deep == 12:
        lines += ["        for _ in range(2):"]
    a_start = len(lines)
    lines += first
    a_end = len(lines)
    lines += _filler(rng, "    ", rng.randint(2, 30), tag + "b")
    lines += ["    return response", "", "", f"def other_{tag}(response):"]
    if shallow == 8:
        lines += ["    if response:"]
    b_start = len(lines)
    lines += second
    b_end = len(lines)
    lines += ["    return response"]
    a, b = (a_start, a_end), (b_start, b_end)
    return _File(lines, a if target_first else b, b if target_first else a)


def _handler(indent: str, key: str, tag: str) -> list[str]:
    return [
        f"{indent}def check_{tag}(event):",
        f"{indent}    value = event.get('{key}')",
        f"{indent}    if value is None:",
        f"{indent}        raise ValueError('missing {key}')",
        f"{indent}    return value * 2",
    ]


def _copy_file(rng: random.Random, tag: str) -> _File:
    key = rng.choice(_KEYS)
    block = _handler("    ", key, tag)
    lines = [f'"""Module {tag}."""', "", "", f"class Checks{tag.upper()}:"]
    lines += _filler(rng, "    ", rng.randint(1, 3), tag + "a")
    lines.append("")
    a_start = len(lines)
    lines += block
    lines.append("")
    lines += [f"    def helper_{tag}(self):"]
    lines += _filler(rng, "        ", rng.randint(30, 80), tag + "b")
    lines.append("")
    b_start = len(lines)
    lines += block
    a, b = (a_start, a_start + len(block)), (b_start, b_start + len(block))
    return _File(lines, *((a, b) if rng.random() < 0.5 else (b, a)))


def _stale(line: str, rng: random.Random) -> str:
    """The line as someone else edited it: a renamed identifier or a trailing comment."""
    stripped = line.rstrip()
    if "=" in stripped and stripped.endswith(",") and rng.random() < 0.6:
        return stripped[:-1] + "_v2,"
    return stripped + "  # revised"


def make_case(rng: random.Random, shape: str, k: int, header: str, tag: str) -> dict[str, object]:
    """One case: `shape` "kwargs" or "copy", `k` context lines edited, `header` "numbers",
    "bogus" or "bare"."""
    made = _kwargs_file(rng, tag) if shape == "kwargs" else _copy_file(rng, tag)
    lines = made.lines
    start, end = made.target
    at = start + 3 if shape == "copy" else rng.randrange(start + 1, end - 1)
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    if shape == "copy":  # the raise line
        removed = [at]
        added = [f"{pad}raise KeyError({lines[at].split('(', 1)[1]}"]
    elif rng.random() < 0.3 and at != start + 1:
        removed = [at]
        word = lines[at].strip().split("=")[0].rstrip(",")
        added = [f"{pad}{word}={word}_new,"]
    else:
        removed = []
        added = [f"{pad}{rng.choice(_NEW_KWARGS)}=None,"]
    first = max(at - 3, 0)
    last = min(at + 4, len(lines))
    context = [i for i in range(first, last) if i not in removed and lines[i].strip()]
    edited = set(rng.sample(context, min(k, len(context))))
    stale = [(_stale(text, rng) if i in edited else text) for i, text in enumerate(lines)]
    expected = list(stale)
    if removed:
        expected[removed[0] : removed[0] + 1] = added
    else:
        expected[at + 1 : at + 1] = added
    hunk = []
    for i in range(first, last):
        if i in removed:
            hunk.append("-" + lines[i])
            hunk += ["+" + a for a in added]
        else:
            hunk.append(" " + lines[i])
            if not removed and i == at:
                hunk += ["+" + a for a in added]
    old_count = last - first
    new_count = old_count + len(added) - len(removed)
    number = first + 1
    if header == "bogus":
        # Numbers that name the other twin would be indistinguishable from true ones
        # (docs/decisions/0029): the invented ones land clear of both blocks.
        number = first + 1 + rng.randint(40, 200)
        while any(abs(number - 1 - b) <= 30 for b in (start, made.twin[0])):
            number += 31
    head = "@@" if header == "bare" else f"@@ -{number},{old_count} +{number},{new_count} @@"
    path = f"pkg/{shape}_{tag}.py"
    patch = f"--- a/{path}\n+++ b/{path}\n{head}\n" + "".join(h + "\n" for h in hunk)
    category = "twin-control" if k == 0 else f"twin-{shape}-stale-{k}"
    return {
        "id": f"twins/{category}/{header}/{tag}",
        "suite": "twins",
        "category": category,
        "format": "udiff",
        "files": {path: "\n".join(stale) + "\n"},
        "patch": patch,
        "expected": {path: "\n".join(expected) + "\n"},
        "notes": f"target lines {start + 1}-{end}; {k} context line(s) edited; header {header}",
    }


def generate(seed: str, per_category: int) -> Iterator[dict[str, object]]:
    """The corpus's cases, in order: the same seed and count give the same cases."""
    rng = random.Random(seed)
    plan = [("kwargs", k) for k in (1, 2, 3)] + [("copy", 1), ("copy", 2), ("kwargs", 0)]
    for shape, k in plan:
        for n in range(per_category):
            header = "numbers"
            if shape == "kwargs" and k:
                header = ("numbers", "numbers", "bogus", "bare")[n % 4]
            yield make_case(rng, shape, k, header, f"{shape[0]}{k}n{n}")


def write(cases: Iterator[dict[str, object]], out: Path) -> int:
    """Write the cases as gzip'd JSON lines with a fixed timestamp (byte-identical reruns)."""
    buffer = io.BytesIO()
    count = 0
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz:
        for case in cases:
            gz.write((json.dumps(case, sort_keys=True) + "\n").encode("utf-8"))
            count += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="twins-1")
    parser.add_argument("--per-category", type=int, default=24)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    count = write(generate(args.seed, args.per_category), args.out)
    print(f"{count} cases -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
