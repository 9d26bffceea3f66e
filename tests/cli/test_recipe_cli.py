"""`patchsmith recipe list|show|test|run|new` and `patchsmith schema recipe`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchsmith.cli import main

TEST = "class T:\n    def test(self):\n        self.assertEqual(f(1), 2)\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(name="workspace")
def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "test_a.py").write_text(TEST)
    return tmp_path


class TestRecipeCli:
    def test_list(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`recipe list --json` names the built-in recipes."""
        code, out, _ = run(capsys, "recipe", "list", "--json")

        ids = [r["recipe_id"] for r in json.loads(out)["recipes"]]
        assert 0 == code
        assert {"unittest-to-assert", "legacy-id-generator"} <= set(ids)

    def test_list_text(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The text listing says where each recipe comes from."""
        code, out, _ = run(capsys, "recipe", "list")

        assert 0 == code and "[built-in]" in out

    def test_show(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`recipe show` prints the recipe's YAML; --json its model."""
        code, out, _ = run(capsys, "recipe", "show", "unittest-to-assert")
        code_json, out_json, _ = run(capsys, "recipe", "show", "unittest-to-assert", "--json")

        assert (0, 0) == (code, code_json)
        assert "recipe_id: unittest-to-assert" in out
        assert "python" == json.loads(out_json)["recipe"]["language"]

    def test_show_unknown(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown recipe is a usage error (exit 2)."""
        code, _, err = run(capsys, "recipe", "show", "nope")

        assert 2 == code and "RECIPE_NOT_FOUND" in err

    def test_test_one(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`recipe test ID` runs its fixtures and ends with the counts."""
        code, out, _ = run(capsys, "recipe", "test", "unittest-to-assert")

        assert 0 == code
        assert out.strip().endswith("2 passed, 0 failed")

    def test_test_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`recipe test --json` gives every fixture's verdict."""
        code, out, _ = run(capsys, "recipe", "test", "k8s-service-account-name", "--json")

        assert 0 == code and 0 == json.loads(out)["failed"]

    def test_run_dry_then_apply(self, capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
        """`recipe run` is a dry run; `--apply` writes; both exit 0."""
        code, out, _ = run(capsys, "recipe", "run", "unittest-to-assert", "-C", str(workspace))

        assert 0 == code and "dry_run" in out and "assert f(1) == 2" in out
        assert TEST == (workspace / "test_a.py").read_text()

        code, out, _ = run(
            capsys, "recipe", "run", "unittest-to-assert", "-C", str(workspace), "--apply", "--json"
        )

        assert 0 == code and "applied" == json.loads(out)["status"]
        assert "assert f(1) == 2" in (workspace / "test_a.py").read_text()

        code, out, _ = run(capsys, "log", "-C", str(workspace))
        assert "recipe" in out

    def test_run_refused_exits_1(self, capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
        """A refused run exits 1 and says why."""
        (workspace / "patchsmith.toml").write_text("[policy]\nbogus = 1\n")

        code, out, _ = run(capsys, "recipe", "run", "unittest-to-assert", "-C", str(workspace))

        assert 1 == code and "INVALID_POLICY" in out

    def test_run_unknown_recipe(self, capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
        """An unknown recipe id exits 2."""
        code, out, _ = run(capsys, "recipe", "run", "nope", "-C", str(workspace), "--json")

        assert 2 == code and "RECIPE_NOT_FOUND" in out

    def test_run_missing_root(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """A -C that is not a directory exits 2."""
        code, _, _ = run(capsys, "recipe", "run", "unittest-to-assert", "-C", str(tmp_path / "x"))

        assert 2 == code

    def test_new(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """`recipe new` scaffolds into .patchsmith/recipes and runs the fixtures."""
        (tmp_path / "before.js").write_text("const x = foo.bar(1);\n")
        (tmp_path / "after.js").write_text("const x = foo.baz(1);\n")

        code, out, _ = run(
            capsys,
            "recipe",
            "new",
            "bar-to-baz",
            "--before",
            str(tmp_path / "before.js"),
            "--after",
            str(tmp_path / "after.js"),
            "--language",
            "javascript",
            "-C",
            str(tmp_path),
        )

        assert 0 == code and "ok" in out
        assert (tmp_path / ".patchsmith/recipes/bar-to-baz/recipe.yaml").is_file()
        code, out, _ = run(capsys, "recipe", "list", "-C", str(tmp_path))
        assert "bar-to-baz" in out

    def test_new_refusals(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """An unknown language, an unreadable example, an existing recipe: exit 2."""
        (tmp_path / "b.py").write_text("a()\n")
        args = ["recipe", "new", "r", "--before", str(tmp_path / "b.py"), "--after"]

        assert (
            2
            == run(
                capsys, *args, str(tmp_path / "b.py"), "--language", "cobol", "-C", str(tmp_path)
            )[0]
        )
        assert (
            2
            == run(
                capsys, *args, str(tmp_path / "x.py"), "--language", "python", "-C", str(tmp_path)
            )[0]
        )
        assert (
            0
            != run(
                capsys, *args, str(tmp_path / "b.py"), "--language", "python", "-C", str(tmp_path)
            )[0]
        )
        assert (
            2
            == run(
                capsys, *args, str(tmp_path / "b.py"), "--language", "python", "-C", str(tmp_path)
            )[0]
        )

    def test_no_action_is_usage(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`patchsmith recipe` alone prints help and exits 2."""
        assert 2 == run(capsys, "recipe")[0]

    def test_schema_recipe(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`patchsmith schema recipe` prints the recipe schema; the default stays the proposal's."""
        _, recipe, _ = run(capsys, "schema", "recipe")
        _, proposal, _ = run(capsys, "schema")

        assert "recipe_id" in json.loads(recipe)["properties"]
        assert "proposal_id" in json.loads(proposal)["properties"]


class TestProgressBar:
    def test_shown_only_after_a_second_on_a_terminal(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The bar starts once a run has taken a second, on a terminal, and stops cleanly."""
        import io

        from patchsmith.cli import recipe as recipe_cli

        now = [0.0]
        monkeypatch.setattr(recipe_cli.time, "monotonic", lambda: now[0])
        stream = io.StringIO()
        stream.isatty = lambda: True  # type: ignore[method-assign]
        monkeypatch.setattr(recipe_cli.sys, "stderr", stream)

        bar = recipe_cli._Bar()
        bar("selecting files", 0, 4)
        assert bar.progress is None
        now[0] = 2.0
        bar("running operations", 1, 4)
        bar("done", 4, 4)
        bar.close()

        assert bar.progress is not None


class TestFriction:
    def test_options_before_the_paths(
        self, capsys: pytest.CaptureFixture[str], workspace: Path
    ) -> None:
        """`recipe run ID --no-diff PATHS`: an option between the id and the paths."""
        (workspace / "test_b.py").write_text(TEST)

        code, out, err = run(
            capsys, "recipe", "run", "unittest-to-assert", "--no-diff", "test_a.py",
            "--json", "-C", str(workspace),
        )  # fmt: skip

        assert 0 == code, err
        report = json.loads(out)
        assert ["test_a.py"] == [f["path"] for f in report["files"]]

    def test_options_anywhere_text(
        self, capsys: pytest.CaptureFixture[str], workspace: Path
    ) -> None:
        """Options before, between and after the positionals; --no-diff leaves diffs out."""
        code, out, _ = run(
            capsys, "recipe", "run", "-C", str(workspace), "unittest-to-assert", "--no-diff",
            "test_a.py", "--apply",
        )  # fmt: skip

        assert 0 == code
        assert "+++" not in out
        assert "assert f(1) == 2" in (workspace / "test_a.py").read_text()

    def test_unknown_option_is_still_a_usage_error(
        self, capsys: pytest.CaptureFixture[str], workspace: Path
    ) -> None:
        """Intermixed parsing does not swallow a misspelt option."""
        code, _, err = run(
            capsys, "recipe", "run", "unittest-to-assert", "--bogus", "-C", str(workspace)
        )

        assert 2 == code and "--bogus" in err

    def test_new_rule_matches_another_call_site(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """`recipe new` makes a rule from the call that changed: it rewrites a second,
        different call site (other arguments, another statement) in the repository."""
        (tmp_path / "before.java").write_text(
            'class A {\n    long f() {\n        long id = LegacyIdGenerator.generate("a");\n'
            "        return id;\n    }\n}\n"
        )
        (tmp_path / "after.java").write_text(
            'class A {\n    long f() {\n        long id = IdGenerator.nextId("a");\n'
            "        return id;\n    }\n}\n"
        )
        code, out, _ = run(
            capsys, "recipe", "new", "ids", "--before", str(tmp_path / "before.java"),
            "--after", str(tmp_path / "after.java"), "--language", "java", "-C", str(tmp_path),
        )  # fmt: skip
        assert 0 == code, out
        other = tmp_path / "src" / "B.java"
        other.parent.mkdir()
        other.write_text(
            "class B {\n    void g(String p) {\n"
            "        use(LegacyIdGenerator.generate(p, 3));\n    }\n}\n"
        )

        code, out, _ = run(capsys, "recipe", "run", "ids", "src", "--apply", "-C", str(tmp_path))

        assert 0 == code, out
        assert "use(IdGenerator.nextId(p, 3));" in other.read_text()


class TestSchemaCli:
    def test_proposal_schema_lists_the_ids_as_required(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`patchsmith schema proposal` lists proposal_id, run_id, attempt_no as required."""
        code, out, _ = run(capsys, "schema", "proposal")

        required = json.loads(out)["required"]
        assert 0 == code
        assert {"proposal_id", "run_id", "attempt_no"} <= set(required)

    def test_recipe_schema_lists_both_spellings(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`patchsmith schema recipe` names camelCase operation types and conditions."""
        code, out, _ = run(capsys, "schema", "recipe")

        assert 0 == code
        for name in ("methodInvocationReplace", "fileExists", "rerunProducesNoDiff"):
            assert f'"{name}"' in out
