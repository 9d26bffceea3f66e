"""`fleet run --verify pytest` never counts a repository whose tests could not run as changed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from patchsmith.cli import main

from .sample import make_repo

BAD_ADDOPTS = '[tool.pytest.ini_options]\npythonpath = ["src"]\naddopts = "--no-such-option"\n'
"""pytest exit 4: a usage error, no test runs."""

NO_TESTS = '[tool.pytest.ini_options]\npythonpath = ["src"]\npython_files = ["check_*.py"]\n'
"""pytest exit 5: nothing is collected."""


def _repo(folder: Path, name: str, n: int, pyproject: str | None) -> str:
    root = folder / name
    make_repo(root, n)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "pytest"],
            cwd=root,
            check=True,
        )
    return name


def test_pytest_exit_4_and_5_are_errors_counted_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "fleet"
    folder.mkdir()
    names = [
        _repo(folder, "green", 0, None),
        _repo(folder, "usage", 1, BAD_ADDOPTS),
        _repo(folder, "empty", 2, NO_TESTS),
    ]
    listing = folder / "repos.txt"
    listing.write_text("\n".join(names) + "\n")
    monkeypatch.chdir(tmp_path)

    code = main(
        [
            *("fleet", "run", "unittest-to-assert", "--repos", str(listing)),
            *("--verify", "pytest", "--run-id", "v", "--json"),
        ]
    )
    run = json.loads(capsys.readouterr().out)

    assert code == 1  # not every repository is good
    statuses = {r["key"]: r["status"] for r in run["results"]}
    assert statuses == {
        "green": "changed",
        "usage": "verification_error",
        "empty": "verification_error",
    }
    assert run["counts"]["changed"] == 1 and run["counts"]["verification_error"] == 2
    by_key = {r["key"]: r for r in run["results"]}
    usage = by_key["usage"]["verification"]
    assert usage["status"] == "error"
    assert "exit 4" in usage["profiles"][0]["reason"]
    assert "exit 5" in by_key["empty"]["verification"]["profiles"][0]["reason"]
    assert [e["code"] for e in by_key["usage"]["errors"]] == ["VERIFICATION_ERROR"]
    green = by_key["green"]["verification"]
    assert green["status"] == "passed" and green["profiles"][0]["verdict"] == "passed"

    # the report counts them apart, as text, JSON and HTML
    assert main(["fleet", "report", "v", "--json", "--html", "r.html"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == run["counts"]
    page = (tmp_path / "r.html").read_text()
    assert 'data-status="verification_error"' in page
    assert main(["fleet", "report", "v"]) == 1
    text = capsys.readouterr().out
    assert any(line.split() == ["verification_error", "2"] for line in text.splitlines()), text


def test_a_profile_missing_from_a_repository_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--verify X` over repositories of which one lacks X: that one is `skipped` (with the
    reason), not verification_failed or changed; the one with X is verified and changed."""
    folder = tmp_path / "fleet"
    folder.mkdir()
    with_x = folder / "with-x"
    make_repo(with_x, 0)
    (with_x / "patchsmith.toml").write_text('[verify.x]\nargv = ["true"]\n')
    subprocess.run(["git", "add", "-A"], cwd=with_x, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        cwd=with_x,
        check=True,
    )
    make_repo(folder / "without-x", 1)
    listing = folder / "repos.txt"
    listing.write_text("with-x\nwithout-x\n")
    monkeypatch.chdir(tmp_path)

    code = main(
        [
            *("fleet", "run", "unittest-to-assert", "--repos", str(listing)),
            *("--verify", "x", "--trust", "--run-id", "s", "--json"),
        ]
    )
    run = json.loads(capsys.readouterr().out)

    assert code == 1  # a skipped repository was not proven: the run is not all good
    statuses = {r["key"]: r["status"] for r in run["results"]}
    assert statuses == {"with-x": "changed", "without-x": "skipped"}
    assert run["counts"]["skipped"] == 1 and run["counts"]["verification_failed"] == 0
    skipped = next(r for r in run["results"] if r["key"] == "without-x")
    assert [e["code"] for e in skipped["errors"]] == ["UNKNOWN_PROFILE"]
    assert "unknown verification profile(s): x " in skipped["errors"][0]["message"]
