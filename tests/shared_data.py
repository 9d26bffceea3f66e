"""Where the tests find parity goldens and corpora: `../shared/` when present, else `tests/data/`.

`../shared/` (beside the repository) holds the full corpora and the goldens; CI has it.
`tests/data/` holds a copy of the goldens and a stratified sample of each public corpus
(`scripts/vendor_test_data.py` regenerates it), so a fresh clone runs the same tests.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"
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
