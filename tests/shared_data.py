"""Where the tests find parity goldens and corpora: `../shared/` when present, else `tests/data/`.

`../shared/` (beside the repository) holds the full corpora and the goldens; CI has it.
`tests/data/` holds a copy of the goldens, a stratified sample of each public corpus and
click's sources (`scripts/vendor_test_data.py` regenerates it), so a fresh clone runs the
same tests. `PATCHSMITH_SHARED` names another folder to use as `../shared/` (a folder that
does not exist runs the tests as a fresh clone would).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PATCHSMITH_SHARED") or REPO / ".." / "shared")
VENDORED = REPO / "tests" / "data"

SHARED_PARITY = SHARED / "parity"
SHARED_CORPUS = SHARED / "corpus"


def parity_dir() -> Path:
    """`../shared/parity` when it holds the goldens, else the vendored copy."""
    if (SHARED_PARITY / "parity_apply.json").is_file():
        return SHARED_PARITY
    return VENDORED / "parity"


def full_corpus() -> bool:
    """True when the full corpora of `../shared/corpus` are present."""
    return (SHARED_CORPUS / "public.jsonl.gz").is_file()


def corpus_dir() -> Path:
    """`../shared/corpus` when present, else the vendored sample."""
    return SHARED_CORPUS if full_corpus() else VENDORED / "corpus"


def corpus_file(name: str) -> Path | None:
    """The corpus file `name` (or its gzipped sample `name.gz`), `None` when neither exists."""
    folder = corpus_dir()
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def click_checkout() -> dict[str, str]:
    """click 8.1.7's `src/click/` and `docs/advanced.rst`: from the full `public` corpus when
    present, else the vendored copy."""
    path = SHARED_CORPUS / "public.jsonl.gz"
    if path.is_file():
        files: dict[str, str] = {}
        for case in corpus_cases("public.jsonl.gz"):
            if str(case["id"]).startswith("pypi-click-"):
                files.update(case["files"])
        return {
            k: v
            for k, v in sorted(files.items())
            if k.startswith(("src/click/", "docs/advanced.rst"))
        }
    with gzip.open(VENDORED / "checkout" / "click.json.gz", "rt", encoding="utf-8") as handle:
        vendored: dict[str, str] = json.loads(handle.read())
    return vendored


def corpus_cases(name: str) -> Iterator[dict[str, object]]:
    """Every case of corpus file `name` (nothing when it is absent)."""
    path = corpus_file(name)
    if path is None:
        return
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)
