"""A file that never parsed is judged by where its errors are, not blamed on the recipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.codemod.helpers import write_tree

from patchsmith.cli import main
from patchsmith.codemod import run_recipe
from patchsmith.codemod.checks import _syntax
from patchsmith.codemod.report import RecipeStatus
from patchsmith.model.evidence import Verdict

PY2 = 'class T:\n    def test(self):\n        print "x"\n        self.assertEqual(f(1), 2)\n'
GOOD = "class T:\n    def test(self):\n        self.assertEqual(f(1), 2)\n"

BREAKER = """\
id: break-calls
language: python
operations:
  - type: astGrepRule
    rule: {pattern: "self.assertEqual($A, $B)"}
    fix: "assert ($A == $B"
postconditions: [parses]
idempotency: {rerunProducesNoDiff: false}
"""


def test_python2_file_is_not_blamed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The normal files change; the Python 2 file is reported as not parsed before, and
    changed too (the recipe added no error there); the apply passes the syntax guard."""
    write_tree(tmp_path, {"test_old.py": PY2, "test_a.py": GOOD, "pkg/test_b.py": GOOD})

    code = main(["recipe", "run", "unittest-to-assert", "--apply", "--json", "-C", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)

    assert 0 == code, report["errors"]
    assert ["pkg/test_b.py", "test_a.py", "test_old.py"] == sorted(
        f["path"] for f in report["files"]
    )
    [parses] = report["checks"]
    assert "passed" == parses["status"]
    assert (
        "did not parse before the change and it added no error there: test_old.py"
        in (parses["evidence"])
    )
    assert "assert f(1) == 2" in (tmp_path / "test_a.py").read_text()
    assert 'print "x"\n        assert f(1) == 2\n' in (tmp_path / "test_old.py").read_text()


def test_an_error_added_to_a_broken_file_is_refused(tmp_path: Path) -> None:
    """A fix that adds an error elsewhere in the broken file is the change's: refused."""
    write_tree(tmp_path, {"test_old.py": PY2, "r.yaml": BREAKER})

    report = run_recipe(tmp_path / "r.yaml", tmp_path, apply=True, record=False)

    assert RecipeStatus.REFUSED == report.status
    [parses] = report.checks
    assert Verdict.FAILED == parses.status
    assert "1 changed file(s) do not parse: test_old.py" == parses.evidence
    assert PY2 == (tmp_path / "test_old.py").read_text()


@pytest.mark.parametrize(
    ("path", "old", "new", "passed"),
    [
        # broken at the top before and after, the edit far below: not the change's
        (
            "a.js",
            "const a = ;\n\n\n\n\nconst x = a(1);\n",
            "const a = ;\n\n\n\n\nconst x = b(1);\n",
            True,
        ),
        # an unclosed bracket the edit wrote: the change's
        (
            "a.js",
            "const a = ;\n\n\n\n\nconst x = a(1);\n",
            "const a = ;\n\n\n\n\nconst x = b(1;\n",
            False,
        ),
        # a clean file broken by the edit
        ("a.js", "const x = a(1);\n", "const x = a(1;\n", False),
        ("m.py", "x = f(1)\n", "x = g(1\n", False),
    ],
)
def test_parses_judges_by_location(path: str, old: str, new: str, passed: bool) -> None:
    """By location, not count, for tree-sitter languages too."""
    check = _syntax({path: new.encode()}, {path: old.encode()})

    assert (Verdict.PASSED if passed else Verdict.FAILED) == check.status, check.evidence
    assert ("did not parse before" in check.evidence) is (passed and old.startswith("const a"))


def test_without_originals_every_error_counts() -> None:
    """Called without the texts before, an error is an error (nothing to compare with)."""
    check = _syntax({"m.py": PY2.encode()})

    assert Verdict.FAILED == check.status
