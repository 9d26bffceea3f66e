"""`patchsmith fleet run|report` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchsmith.cli import main

from .sample import make_fleet


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_run_resume_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = make_fleet(tmp_path / "fleet", 5)
    (tmp_path / "fleet" / "repos.txt").write_text("repo0000\nrepo0004\nmissing\n")
    monkeypatch.chdir(tmp_path)

    code, first = run_json(
        capsys, "fleet", "run", "unittest-to-assert", "--repos", str(listing), "--json"
    )

    assert code == 1  # `missing` is an error
    assert first["counts"] == {
        "changed": 1,
        "no_op": 1,
        "refused": 0,
        "verification_failed": 0,
        "verification_error": 0,
        "skipped": 0,
        "error": 1,
        "pending": 0,
    }
    run_id = str(first["run_id"])
    assert (tmp_path / "fleet-runs" / run_id / "fleet.db").is_file()
    assert not list((tmp_path / "fleet-runs" / run_id / "work").iterdir())

    # text output; the same command resumes: nothing left to run
    assert main(["fleet", "run", "unittest-to-assert", "--repos", str(listing)]) == 1
    text = capsys.readouterr().out
    assert f"fleet run {run_id}" in text and "REPOSITORY_UNAVAILABLE" in text

    code, report = run_json(capsys, "fleet", "report", run_id, "--json", "--html", "r.html")
    assert code == 1
    assert report["counts"] == first["counts"] and report["html"] == "r.html"
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")

    assert main(["fleet", "report", run_id, "--no-repos"]) == 1
    assert "repo0000" not in capsys.readouterr().out


def test_all_good_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = make_fleet(tmp_path / "fleet", 1)
    monkeypatch.chdir(tmp_path)

    code, result = run_json(
        capsys,
        *("fleet", "run", "unittest-to-assert", "--repos", str(listing), "--json"),
        *("--run-id", "ok", "--workers", "1", "--batch", "2", "--timeout", "300"),
    )

    assert code == 0 and result["complete"] is True
    assert main(["fleet", "report", "ok"]) == 0
    assert "changed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["fleet", "run", "no-such-recipe", "--repos", "r.txt", "--json"], "RECIPE_NOT_FOUND"),
        (["fleet", "run", "unittest-to-assert", "--repos", "nope.txt", "--json"], "FILE_NOT_FOUND"),
        (["fleet", "report", "nope", "--json"], "FILE_NOT_FOUND"),
    ],
)
def test_usage_errors_are_structured(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    code: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.txt").write_text("x\n")

    status, payload = run_json(capsys, *argv)

    assert status == 2
    assert payload["status"] == "error"
    assert [e["code"] for e in payload["errors"]] == [code]  # type: ignore[union-attr]


def test_usage_errors_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert main(["fleet", "report", "nope"]) == 2
    assert "FILE_NOT_FOUND" in capsys.readouterr().err
    assert main(["fleet"]) == 2
    assert "run" in capsys.readouterr().err
    assert main(["fleet", "run", "unittest-to-assert"]) == 2  # --repos is required


def test_live_progress_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = make_fleet(tmp_path / "fleet", 1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)

    assert main(["fleet", "run", "unittest-to-assert", "--repos", str(listing)]) == 0

    err = capsys.readouterr().err
    assert "changed 1" in err and "1/1" in err
