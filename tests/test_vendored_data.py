"""`tests/data/` is what it says: the goldens byte for byte, the corpus samples as drawn."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from tests.shared_data import REPO, SHARED_CORPUS, SHARED_PARITY, VENDORED, parity_dir


def _sources() -> dict[str, str]:
    recorded: dict[str, str] = json.loads((VENDORED / "SOURCES.json").read_text(encoding="utf-8"))
    return recorded


def _script() -> ModuleType:
    path = REPO / "scripts" / "vendor_test_data.py"
    spec = importlib.util.spec_from_file_location("vendor_test_data", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestVendored:
    def test_every_golden_and_its_readme_is_vendored(self) -> None:
        names = sorted(p.name for p in (VENDORED / "parity").iterdir())

        assert sorted(_script().PARITY_FILES) == names

    def test_provenance_is_stated(self) -> None:
        """The README names the sources and their licences; NOTICE names hunkpatch's."""
        readme = (VENDORED / "README.md").read_text(encoding="utf-8")
        notice = (REPO / "NOTICE").read_text(encoding="utf-8")

        assert "hunkpatch" in readme and "Apache-2.0" in readme
        assert "scripts/vendor_test_data.py" in readme
        assert "tests/data/parity" in notice

    def test_small(self) -> None:
        """Well under 1 MB in all."""
        total = sum(p.stat().st_size for p in VENDORED.rglob("*") if p.is_file())

        assert total < 600_000

    def test_parity_dir_falls_back(self) -> None:
        assert (parity_dir() / "parity_apply.json").is_file()


class TestAgainstShared:
    """Each copy against its source: `../shared` itself when present, else the sha256 of the
    source recorded when the copy was made (`tests/data/SOURCES.json`)."""

    @pytest.mark.parametrize("name", _script().PARITY_FILES)
    def test_goldens_are_byte_identical(self, name: str) -> None:
        vendored = (VENDORED / "parity" / name).read_bytes()

        assert _sources()[f"parity/{name}"] == hashlib.sha256(vendored).hexdigest()
        if SHARED_PARITY.is_dir():
            assert (SHARED_PARITY / name).read_bytes() == vendored

    @pytest.mark.parametrize("name", sorted(_script().PER_CATEGORY))
    def test_sample_is_what_the_script_draws(self, name: str) -> None:
        """The vendored sample is exactly the script's deterministic draw from ../shared (without
        it: a draw from the sample gives the sample back, and the corpus it came from is the one
        recorded)."""
        script = _script()
        vendored = VENDORED / "corpus" / (name if name.endswith(".gz") else name + ".gz")
        source = SHARED_CORPUS / name if SHARED_CORPUS.is_dir() else vendored
        drawn = script.sample(script.read_cases(source), script.PER_CATEGORY[name])

        with gzip.open(vendored, "rt", encoding="utf-8") as handle:
            assert drawn == handle.read().splitlines()
        if SHARED_CORPUS.is_dir():
            assert _sources()[f"corpus/{name}"] == script.sha256_of(SHARED_CORPUS / name)

    def test_regenerating_gives_the_same_bytes(self, tmp_path: Path) -> None:
        script = _script()
        source = SHARED_CORPUS / "peer-codex.jsonl.gz"
        if not source.is_file():
            source = VENDORED / "corpus" / "peer-codex.jsonl.gz"
        lines = script.read_cases(source)
        first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"

        script.write_cases(first, script.sample(lines, 1))
        script.write_cases(second, script.sample(lines, 1))

        assert first.read_bytes() == second.read_bytes()

    def test_click_checkout_is_the_corpus_files(self) -> None:
        """The vendored click sources are the public corpus's click files (compared when
        ../shared is present; else they must at least be the package and its doc)."""
        with gzip.open(VENDORED / _script().CHECKOUT, "rt", encoding="utf-8") as handle:
            vendored = json.loads(handle.read())

        assert "src/click/globals.py" in vendored and "docs/advanced.rst" in vendored
        if SHARED_CORPUS.is_dir():
            assert vendored == _script().click_files(SHARED_CORPUS / "public.jsonl.gz")
