"""The invariant on the vendored corpus sample: every case applied right or refused, none wrong.

The sample (`tests/data/corpus`, drawn by `scripts/vendor_test_data.py`) ships with the
repository, so this runs in a fresh clone; `bench/accuracy.py` scores the full corpora.
A wrong case is a file with a misplaced hunk, a lost line, or a write where the case
says refuse: never acceptable.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.shared_data import REPO, SHARED_CORPUS, VENDORED

from patchsmith import apply

SAMPLE = VENDORED / "corpus"


def _vendoring() -> Any:
    spec = importlib.util.spec_from_file_location(
        "vendor_test_data", REPO / "scripts" / "vendor_test_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[Any]:
    found = []
    for path in sorted(SAMPLE.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                found.append(pytest.param(case, id=f"{path.name.split('.')[0]}/{case['id']}"))
    return found


def _snapshot(root: Path) -> dict[str, bytes]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [name for name in dirnames if name != ".patchsmith"]
        for name in filenames:
            path = Path(dirpath) / name
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


@pytest.mark.parametrize("case", _cases())
def test_sample_case_is_never_wrong(case: dict[str, Any], tmp_path: Path) -> None:
    """Applied exactly as `expected` says, or refused with the workspace unchanged."""
    root = tmp_path / "ws"
    for relative, text in case["files"].items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    root.mkdir(exist_ok=True)
    before = _snapshot(root)

    report = apply(case["patch"], root, record=False)

    after = _snapshot(root)
    if case["expected"] is None or not report.ok:
        assert before == after, "a refusal must leave the workspace byte-unchanged"
        assert case["expected"] is None or not report.ok
        return
    wanted = dict(before)
    for relative, text in case["expected"].items():
        if text is None:
            wanted.pop(relative, None)
        else:
            wanted[relative] = text.encode("utf-8")
    assert wanted == after


def test_the_sample_is_there() -> None:
    """Every shared corpus has its sample, with cases in it (nothing silently skipped)."""
    names = sorted(p.name.split(".")[0] for p in SAMPLE.glob("*.jsonl.gz"))
    tested = {str(p.id).split("/")[0] for p in _cases()}

    assert names == sorted(tested)
    assert {n.split(".")[0] for n in _vendoring().PER_CATEGORY} <= set(names)
    assert len(_cases()) >= 100
    if SHARED_CORPUS.is_dir():
        shared = {p.name for p in SHARED_CORPUS.glob("*.jsonl*")}
        assert shared <= set(_vendoring().PER_CATEGORY)
