"""Regenerate `tests/data/` from the shared material: parity goldens and corpus samples.

    python scripts/vendor_test_data.py [--shared ../shared]

The parity goldens and their README are copied byte for byte. Each public corpus is
sampled by category (stratified): within a category, cases whose JSON line is at most
`MAX_CASE_BYTES` are ordered by the sha256 of their id and the first `PER_CATEGORY[file]`
taken (the smallest cases when too few are that small). click's sources (`CHECKOUT_FILES`
of the `public` corpus's click cases) become one JSON object, for the test that runs a
recipe on a real checkout. `SOURCES.json` records the sha256 of every shared file these
were made from, so a clone without `../shared` can still check its copies. The output is
deterministic: the same input gives the same bytes (gzip with no name and mtime 0, sorted
keys).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import shutil
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = REPO / ".." / "shared"
TARGET = REPO / "tests" / "data"

PARITY_FILES = (
    "README.md",
    "js_semantics.json",
    "parity_apply.json",
    "parity_finddiffs.json",
    "parity_internal.json",
    "parity_unidiff.json",
)

PER_CATEGORY = {
    "public.jsonl.gz": 2,
    "peer-vanilla.jsonl.gz": 6,
    "peer-codex.jsonl.gz": 1,
    "llm-written-public.jsonl": 1,
    "lazy-public.jsonl.gz": 2,
    "omission-public.jsonl.gz": 2,
    "stale-public.jsonl.gz": 2,
}
"""Cases drawn per category, per corpus file (each sample keeps its corpus's name, plus .gz)."""

CHECKOUT = "checkout/click.json.gz"
"""click 8.1.7's sources, as the `public` corpus's click cases hold them."""
CHECKOUT_FILES = ("src/click/", "docs/advanced.rst")
"""Paths (prefixes) of the click files vendored: the package and the one doc the test reads."""
SOURCES = "SOURCES.json"
"""sha256 of each shared file the vendored data was made from, by its path under ../shared."""

MAX_CASE_BYTES = 12_000
"""Preferred upper size of one case (its JSON line), to keep the sample small."""


def read_cases(path: Path) -> list[str]:
    """The corpus file's JSON lines, as they are."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip()]


def sample(lines: list[str], per_category: int) -> list[str]:
    """`per_category` cases of each category, chosen as the module docstring says."""
    by_category: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for line in lines:
        case = json.loads(line)
        by_category[str(case["category"])].append((str(case["id"]), line))
    chosen: list[str] = []
    for category in sorted(by_category):
        cases = by_category[category]
        small = [c for c in cases if len(c[1].encode("utf-8")) <= MAX_CASE_BYTES]
        if len(small) >= per_category:
            ordered = sorted(small, key=lambda c: hashlib.sha256(c[0].encode()).hexdigest())
        else:
            ordered = sorted(cases, key=lambda c: (len(c[1].encode("utf-8")), c[0]))
        chosen.extend(line for _id, line in ordered[:per_category])
    return chosen


def write_cases(path: Path, lines: list[str]) -> None:
    """Write `lines` as JSON lines, gzip-compressed (reproducibly) when the name says .gz."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if path.name.endswith(".gz"):
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as handle:
            handle.write(data)
        data = buffer.getvalue()
    path.write_bytes(data)


def click_files(public: Path) -> dict[str, str]:
    """The files of the click cases of the `public` corpus under `CHECKOUT_FILES`."""
    files: dict[str, str] = {}
    for line in read_cases(public):
        case = json.loads(line)
        if str(case["id"]).startswith("pypi-click-"):
            files.update(case["files"])
    return {k: v for k, v in sorted(files.items()) if k.startswith(CHECKOUT_FILES)}


def write_json(path: Path, value: object) -> None:
    """`value` as sorted JSON, gzip-compressed reproducibly when the name says .gz."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, sort_keys=True, indent=None if path.name.endswith(".gz") else 2)
    write_cases(path, [text])


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared material")
    args = parser.parse_args(argv)
    shared: Path = args.shared
    if not (shared / "parity").is_dir() or not (shared / "corpus").is_dir():
        sys.stderr.write(f"no parity/ and corpus/ under {shared}\n")
        return 2
    (TARGET / "parity").mkdir(parents=True, exist_ok=True)
    (TARGET / "corpus").mkdir(parents=True, exist_ok=True)
    sources: dict[str, str] = {}
    for name in PARITY_FILES:
        shutil.copyfile(shared / "parity" / name, TARGET / "parity" / name)
        sources[f"parity/{name}"] = sha256_of(shared / "parity" / name)
    for name, per_category in PER_CATEGORY.items():
        sources[f"corpus/{name}"] = sha256_of(shared / "corpus" / name)
        chosen = sample(read_cases(shared / "corpus" / name), per_category)
        # Every sample is gzipped; the loaders in tests/shared_data.py try both names.
        out = name if name.endswith(".gz") else name + ".gz"
        write_cases(TARGET / "corpus" / out, chosen)
        print(f"{name}: {len(chosen)} cases")
    click = click_files(shared / "corpus" / "public.jsonl.gz")
    write_json(TARGET / CHECKOUT, click)
    print(f"{CHECKOUT}: {len(click)} files")
    write_json(TARGET / SOURCES, sources)
    return 0


if __name__ == "__main__":
    sys.exit(main())
