"""`bench/codemod_speed.py --imports` on a tiny tree made here (the bench itself downloads a
real package; the test never does)."""

from __future__ import annotations

from pathlib import Path

from bench import codemod_speed


def tree(root: Path) -> Path:
    files = {
        "pkg/a.py": "from datetime import datetime\n\nnow = datetime.utcnow()\n",
        "pkg/b.py": "import datetime\n\nnow = datetime.datetime.utcnow()\n",
        "pkg/c.py": "x = 1\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def test_compare_imports_counts_and_renders(tmp_path: Path) -> None:
    result = codemod_speed.compare_imports(tree(tmp_path), repeat=1)

    assert 3 == result["files"]
    assert 2 == result["changed"]
    assert 1 == result["added"]  # a.py only: b.py reads `timezone` as an attribute
    assert 0 == result["unused"]
    assert result["ratio"] > 0
    table = codemod_speed.imports_table("tiny", result)
    assert "| tiny | 3 | 2 | 1 | 0 |" in table


def test_unused_import_is_counted() -> None:
    diff = "+from datetime import timezone\n-x = datetime.datetime.utcnow()\n"
    diff += "+x = datetime.datetime.now(datetime.timezone.utc)\n"

    assert (1, 1) == codemod_speed.imports_counted([diff])


def test_fetch_uses_the_cache(tmp_path: Path) -> None:
    (tmp_path / "boto-2.49.0").mkdir()

    assert tmp_path / "boto-2.49.0" == codemod_speed.fetch_package("boto==2.49.0", tmp_path)
