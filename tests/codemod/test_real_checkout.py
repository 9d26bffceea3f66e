"""A recipe on a real checkout: click's sources from the shared corpus, renamed across modules.

The corpus holds the files of real package releases (`tests/data/checkout` vendors click's
when `../shared` is absent); click's are written to a temporary
workspace (a git repository, so the base commit is recorded), and a function defined in
`click/globals.py` and used in `termui.py` and `utils.py` is renamed through the CLI.
"""

from __future__ import annotations

import json
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.shared_data import click_checkout

from patchsmith.cli import main

RECIPE = """\
recipe_id: rename-resolve-color-default
language: python
summary: Rename click.globals.resolve_color_default to resolve_color
scope:
  include: ["src/**/*.py"]
operations:
  - type: rename_symbol
    from: click.globals.resolve_color_default
    to: resolve_color
postconditions:
  - no_reference: resolve_color_default($$$ARGS)
  - compiles: compile
"""


@pytest.fixture(name="checkout")
def _checkout(tmp_path: Path) -> Path:
    for path, text in click_checkout().items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (tmp_path / "recipe.yaml").write_text(RECIPE)
    if shutil.which("git"):
        for argv in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
        ):
            subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_recipe_on_click(capsys: pytest.CaptureFixture[str], checkout: Path) -> None:
    """Dry run, apply, record, idempotency and guards on a real package's sources."""
    root = str(checkout)
    recipe = str(checkout / "recipe.yaml")
    docs_before = (checkout / "docs" / "advanced.rst").read_bytes()
    python = json.dumps(sys.executable)
    (checkout / "patchsmith.toml").write_text(
        f'[verify.compile]\nargv = [{python}, "-m", "compileall", "-q", "src"]\nkind = "build"\n'
    )

    code, dry = run(capsys, "recipe", "run", recipe, "-C", root, "--json", "--verify")

    assert 0 == code and "dry_run" == dry["status"], dry["errors"]
    checks = {c["condition"]: c for c in dry["checks"]}  # type: ignore[union-attr]
    assert "verified by compile" in checks["compiles"]["evidence"]
    assert "passed" == checks["no_reference resolve_color_default($$$ARGS)"]["status"]
    changed = sorted(f["path"] for f in dry["files"])  # type: ignore[union-attr, index]
    assert ["src/click/globals.py", "src/click/termui.py", "src/click/utils.py"] == changed
    assert "resolve_color_default" in (checkout / "src/click/utils.py").read_text()

    code, applied = run(capsys, "recipe", "run", recipe, "-C", root, "--apply", "--json")

    assert 0 == code and "applied" == applied["status"] and applied["idempotent"] is True
    for path in changed:
        text = (checkout / path).read_text()
        assert "resolve_color_default" not in text and "resolve_color" in text
        py_compile.compile(str(checkout / path), doraise=True)
    assert docs_before == (checkout / "docs" / "advanced.rst").read_bytes()

    assert 0 == main(["log", "-C", root])
    assert str(applied["attempt_id"]) in capsys.readouterr().out

    code, again = run(capsys, "recipe", "run", recipe, "-C", root, "--apply", "--json")
    assert 0 == code and "no_change" == again["status"]


def test_guards_hold_on_click(capsys: pytest.CaptureFixture[str], checkout: Path) -> None:
    """A rename that a guard would split (one user forbidden) is refused, nothing written."""
    (checkout / "patchsmith.toml").write_text('[policy]\nforbidden = ["src/click/termui.py"]\n')
    recipe = str(checkout / "recipe.yaml")
    before = {
        p: (checkout / p).read_bytes() for p in ("src/click/globals.py", "src/click/termui.py")
    }

    code, report = run(capsys, "recipe", "run", recipe, "-C", str(checkout), "--apply", "--json")

    assert 1 == code and "refused" == report["status"]
    assert ["FORBIDDEN_PATH"] == [e["code"] for e in report["errors"]]  # type: ignore[union-attr, index]
    assert before == {p: (checkout / p).read_bytes() for p in before}
