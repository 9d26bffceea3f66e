"""A repository cannot replace a built-in recipe (finding 6 of issue 20).

The review's shadow: `.patchsmith/recipes/unittest-to-assert/` turning every
`self.assertEqual(...)` into `assert True`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patchsmith.cli import main
from patchsmith.codemod import run_recipe
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.change import resolve_change

TEST = "class T:\n    def test(self):\n        self.assertEqual(f(1), 2)\n"
SHADOW = """recipe_id: unittest-to-assert
language: python
summary: Replace unittest's assertions
operations:
  - type: ast_grep_rule
    id: gut
    rule: {pattern: "self.assertEqual($A, $B)"}
    fix: "assert True"
"""


@pytest.fixture(name="repo")
def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".patchsmith" / "recipes" / "unittest-to-assert").mkdir(parents=True)
    (root / ".patchsmith" / "recipes" / "unittest-to-assert" / "recipe.yaml").write_text(SHADOW)
    (root / "test_a.py").write_text(TEST)
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


class TestShadowRefused:
    def test_recipe_run_refuses_and_writes_nothing(
        self, repo: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`recipe run unittest-to-assert --apply` refuses; the test file is untouched."""
        code, out = _run(
            capsys, "recipe", "run", "unittest-to-assert", "-C", str(repo), "--apply", "--json"
        )

        report = json.loads(out)
        assert 1 == code
        assert ["INVALID_RECIPE"] == [e["code"] for e in report["errors"]]
        assert "built-in recipe" in report["errors"][0]["message"]
        assert TEST == (repo / "test_a.py").read_text()

    def test_api_refuses(self, repo: Path) -> None:
        """`run_recipe` by id refuses the same way."""
        report = run_recipe("unittest-to-assert", repo, apply=True)

        assert [FailureCode.INVALID_RECIPE] == [e.code for e in report.errors]
        assert TEST == (repo / "test_a.py").read_text()

    def test_fleet_change_refuses(self, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """`fleet run unittest-to-assert` from inside the repository resolves no recipe."""
        monkeypatch.chdir(repo)

        spec = resolve_change("unittest-to-assert")

        assert isinstance(spec, PatchFailure)
        assert FailureCode.INVALID_RECIPE == spec.code

    def test_list_shows_the_builtin_and_the_refusal(
        self, repo: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`recipe list` lists the built-in with its source, and the shadow as an error."""
        code, out = _run(capsys, "recipe", "list", "-C", str(repo), "--json")

        data = json.loads(out)
        [entry] = [r for r in data["recipes"] if r["recipe_id"] == "unittest-to-assert"]
        assert entry["builtin"] and 1 == code
        assert os.path.join(".patchsmith", "recipes") in data["errors"][0]["message"]


class TestOwnIdsStillWork:
    def test_project_recipe_under_its_own_id_runs(
        self, repo: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The same recipe under another id is an ordinary project recipe."""
        shadow = repo / ".patchsmith" / "recipes" / "unittest-to-assert" / "recipe.yaml"
        shadow.write_text(SHADOW.replace("recipe_id: unittest-to-assert", "recipe_id: gut-tests"))

        code, out = _run(capsys, "recipe", "run", "gut-tests", "-C", str(repo), "--json")

        assert 0 == code, out
        assert "assert True" in json.dumps(json.loads(out))

    def test_builtin_runs_without_a_shadow(self, tmp_path: Path) -> None:
        """With no shadow, the built-in recipe runs as shipped."""
        (tmp_path / "test_a.py").write_text(TEST)

        report = run_recipe("unittest-to-assert", tmp_path, apply=True)

        assert not report.errors
        assert "assert f(1) == 2" in (tmp_path / "test_a.py").read_text()
