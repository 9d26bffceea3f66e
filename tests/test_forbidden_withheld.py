"""A refused edit of a forbidden file shows nothing of it: no lines, likeness or hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import patchsmith
import patchsmith.cli
from patchsmith.attempt.direct import write_file
from patchsmith.attempt.propose import propose
from patchsmith.errors import FailureCode

SECRET = "hunter2secretvalue"
ENV = f"API_KEY={SECRET}\nDB=postgres://u:p@h/db\nMODE=dev\nOTHER=1\n"
POLICY = '[policy]\nforbidden = [".env"]\n'


def hunk(old_db: str) -> str:
    return (
        "--- a/.env\n+++ b/.env\n@@ -1,3 +1,3 @@\n"
        f" API_KEY={SECRET}\n-DB={old_db}\n+DB=elsewhere\n MODE=dev\n"
    )


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    (tmp_path / ".env").write_text(ENV)
    (tmp_path / "patchsmith.toml").write_text(POLICY)
    (tmp_path / "app.py").write_text("x = 1\n")
    return tmp_path


def cli_json(root: Path, capsys: pytest.CaptureFixture[str], patch: str) -> dict[str, object]:
    (root.parent / "p.diff").write_text(patch)
    code = patchsmith.cli.main(["apply", str(root.parent / "p.diff"), "-C", str(root), "--json"])
    out = capsys.readouterr().out
    assert code != 0
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def bare(error: object) -> None:
    assert isinstance(error, dict)
    assert error["code"] == "FORBIDDEN_PATH"
    assert error["file"] == ".env"
    assert error["excerpt"] is None
    assert error["current_sha256"] is None
    assert error["hunk"] is None
    for key in ("similarity", "lookalikes", "candidates"):
        assert key not in error


def test_cli_refusal_of_a_mismatched_edit_shows_nothing_of_the_file(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = cli_json(root, capsys, hunk("postgres://u:p@h/dbX"))

    assert data["status"] == "refused"
    errors = data["errors"]
    assert isinstance(errors, list) and len(errors) == 1
    bare(errors[0])
    text = json.dumps(data)
    assert "postgres" not in text and "MODE=dev" not in text and "similar" not in text
    assert (root / ".env").read_text() == ENV


def test_a_located_and_a_mismatched_edit_are_refused_alike(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whether a guessed line is in the file cannot be told from the refusal."""
    located = cli_json(root, capsys, hunk("postgres://u:p@h/db"))
    missed = cli_json(root, capsys, hunk("mysql://guess"))

    assert located["errors"] == missed["errors"]
    assert located["files"] == missed["files"]


def test_api_ambiguous_edit_names_no_places(root: Path) -> None:
    (root / ".env").write_text("A=1\nA=1\nA=1\n")
    report = patchsmith.apply("--- a/.env\n+++ b/.env\n@@\n-A=1\n+A=2\n", root)

    assert [e.code for e in report.errors] == [FailureCode.FORBIDDEN_PATH]
    error = report.errors[0]
    assert (error.excerpt, error.similarity, error.candidates, error.lookalikes) == (
        None,
        None,
        (),
        (),
    )
    assert "A=1" not in report.feedback()
    assert all(not f.placements for f in report.files)


def test_write_file_neither_confirms_content_nor_tells_its_hash(root: Path) -> None:
    same = write_file(root, ".env", ENV, None, "guess", allow_create=True)
    stale = write_file(root, ".env", "X=1\n", "ab" * 32, "guess")

    for report in (same, stale):
        assert [e.code for e in report.errors] == [FailureCode.FORBIDDEN_PATH]
        assert report.errors[0].current_sha256 is None
        assert "sha256" not in report.errors[0].message
    assert same.errors == stale.errors


def test_a_link_to_a_forbidden_file_is_withheld_too(root: Path) -> None:
    (root / "settings").symlink_to(".env")
    patch = hunk("nope").replace("a/.env", "a/settings").replace("b/.env", "b/settings")
    report = patchsmith.apply(patch, root)

    assert [e.code for e in report.errors] == [FailureCode.FORBIDDEN_PATH]
    assert report.errors[0].excerpt is None
    assert SECRET not in report.feedback()


def test_partial_writes_the_rest_and_withholds_the_forbidden_file(root: Path) -> None:
    patch = hunk("nope") + "--- a/app.py\n+++ b/app.py\n@@\n-x = 1\n+x = 2\n"
    report = patchsmith.apply(patch, root, partial=True)

    assert report.status.value == "partial"
    assert (root / "app.py").read_text() == "x = 2\n"
    assert [e.code for e in report.errors] == [FailureCode.FORBIDDEN_PATH]
    assert report.errors[0].excerpt is None


def _proposal(patch: str, **fields: object) -> dict[str, object]:
    """A minimal proposal of one udiff operation, with `fields` added."""
    return {
        "proposal_id": "p-1",
        "run_id": "r-1",
        "attempt_no": 1,
        "strategy": "HYBRID",
        "objective": "o",
        "rationale": "r",
        "risk": "LOW",
        **fields,
        "operations": [{"type": "patch", "format": "udiff", "text": patch}],
    }


def test_a_proposals_forbidden_files_are_withheld(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text(f"token = {SECRET}\n")
    patch = "--- a/secrets/key.txt\n+++ b/secrets/key.txt\n@@\n-token = guess\n+token = new\n"
    proposal = _proposal(patch, forbidden_files=["secrets/**"])
    report = propose(proposal, tmp_path, check=True)

    assert [e.code for e in report.errors] == [FailureCode.FORBIDDEN_PATH]
    assert SECRET not in json.dumps(report.to_json())


def test_with_the_guard_off_the_excerpt_is_shown(root: Path) -> None:
    """Both sides: without the forbidden_paths guard the file is an ordinary one."""
    (root / "patchsmith.toml").write_text(POLICY + "[policy.guards]\nforbidden_paths = false\n")
    report = patchsmith.apply(hunk("nope"), root)

    assert report.errors[0].code is FailureCode.PATCH_CONTEXT_MISMATCH
    assert report.errors[0].excerpt is not None and "MODE=dev" in report.errors[0].excerpt


def test_guard_decisions_do_not_tell_a_located_edit_from_a_missed_one(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guards run only when every edit located; their decisions would tell which."""
    (root.parent / "p.diff").write_text(hunk("postgres://u:p@h/db"))
    argv = ["apply", str(root.parent / "p.diff"), "-C", str(root), "--json", "--check"]
    patchsmith.cli.main(argv)
    located = json.loads(capsys.readouterr().out)
    (root.parent / "p.diff").write_text(hunk("mysql://guess"))
    patchsmith.cli.main(argv)
    missed = json.loads(capsys.readouterr().out)

    assert located["decisions"] == missed["decisions"]
    assert ["forbidden_paths"] == [d["name"] for d in located["decisions"]]
    for key in ("status", "errors", "files", "diff", "warnings"):
        assert located.get(key) == missed.get(key), key


def _hash_proposal(path: str, value: str) -> dict[str, object]:
    precondition = {"type": "FILE_HASH_MATCH", "path": path, "value": value}
    return _proposal(
        "--- a/app.py\n+++ b/app.py\n@@\n-x = 1\n+x = 2\n", preconditions=[precondition]
    )


def test_a_hash_precondition_on_a_forbidden_file_does_not_print_its_hash(root: Path) -> None:
    actual = hashlib.sha256(ENV.encode()).hexdigest()
    (root / "settings").symlink_to(".env")

    for path in (".env", "./.env", "settings"):
        wrong = json.dumps(propose(_hash_proposal(path, "ab" * 32), root, check=True).to_json())
        right = propose(_hash_proposal(path, actual), root, check=True)

        assert actual not in wrong, path
        assert "not shown" in wrong
        assert right.status.value == "applied", right.feedback()


def test_a_hash_precondition_on_an_ordinary_file_shows_both_hashes(root: Path) -> None:
    actual = hashlib.sha256(b"x = 1\n").hexdigest()

    report = propose(_hash_proposal("app.py", "ab" * 32), root, check=True)

    assert actual in json.dumps(report.to_json())


def test_the_record_of_a_refused_edit_keeps_nothing_of_the_file(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The staged diff would show the file's lines around the edit, and FileRecord its
    hashes: neither is kept in the audit record that `show` and the MCP tools read back."""
    patch = "--- a/.env\n+++ b/.env\n@@\n-MODE=dev\n+MODE=prod\n"
    report = patchsmith.apply(patch + "--- a/app.py\n+++ b/app.py\n@@\n-x = 1\n+x = 2\n", root)
    assert report.attempt_id is not None

    assert 0 == patchsmith.cli.main(["show", report.attempt_id, "-C", str(root), "--json"])
    shown = capsys.readouterr().out

    assert SECRET not in shown and "postgres" not in shown
    assert hashlib.sha256(ENV.encode()).hexdigest() not in shown
    assert "x = 2" in shown  # the other file's staged change is kept
