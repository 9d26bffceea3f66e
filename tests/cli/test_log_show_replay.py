"""Tests for `patchsmith log`, `show` and `replay`."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import patchsmith
import patchsmith.cli
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.store import (
    DB_FILE_NAME,
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    GuardDecision,
    Store,
)

BEFORE = b"def greet():\n    return 'hi'\n"
AFTER = b"def greet():\n    return 'hello'\n"
DIFF = (
    "diff --git a/greet.py b/greet.py\n"
    "--- a/greet.py\n"
    "+++ b/greet.py\n"
    "@@ -1,2 +1,2 @@\n"
    " def greet():\n"
    "-    return 'hi'\n"
    "+    return 'hello'\n"
)


CliRun = Callable[..., tuple[int, str, str]]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_record(**changes: object) -> AttemptRecord:
    """An applied attempt changing greet.py from BEFORE to AFTER; `changes` override fields."""
    base = AttemptRecord(
        run_id="run-1",
        proposal_id="prop-1",
        attempt_no=1,
        kind=AttemptKind.APPLY,
        status=AttemptStatus.APPLIED,
        created_at="2024-05-01T10:00:00+00:00",
        finished_at="2024-05-01T10:00:01+00:00",
        base_commit="abc123",
        input_text=DIFF,
        staged_diff=DIFF,
        applied_diff=DIFF,
        files=(FileRecord("greet.py", Action.UPDATE, sha(BEFORE), sha(AFTER)),),
        decisions=(
            GuardDecision("paths", FailureCode.PATH_OUTSIDE_WORKSPACE, True),
            GuardDecision("secrets", FailureCode.SECRET_ADDED, False, "token on line 2"),
        ),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def record(root: Path, *records: AttemptRecord) -> list[str]:
    with Store.open(root / ".patchsmith") as store:
        return [store.record_attempt(r) for r in records]


@pytest.fixture(name="cli")
def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> CliRun:
    """Run `patchsmith ARGS...` in-process; returns (exit code, stdout, stderr)."""
    monkeypatch.setattr(patchsmith.cli, "_COMMANDS", ("log", "show", "replay"))

    def run(*argv: str) -> tuple[int, str, str]:
        code = patchsmith.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


class FakeReport:
    def __init__(self, status: str, errors: tuple[PatchFailure, ...] = ()) -> None:
        self.status = status
        self.errors = errors


@pytest.fixture(name="git_apply")
def _git_apply(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Stand in for `patchsmith.apply` with `git apply`; returns the roots it was called on."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    calls: list[Path] = []

    def apply(model_output: str, root: Path, *, format: str) -> FakeReport:
        assert format == "udiff"
        calls.append(root)
        done = subprocess.run(
            ["git", "apply", "-"], cwd=root, input=model_output, text=True, capture_output=True
        )
        return FakeReport("applied" if done.returncode == 0 else "refused")

    monkeypatch.setattr(patchsmith, "apply", apply, raising=False)
    return calls


@pytest.fixture(name="checkouts")
def _checkouts(tmp_path: Path) -> tuple[Path, Path]:
    """A source workspace (already changed, with the record) and a fresh target at BEFORE."""
    source, target = tmp_path / "source", tmp_path / "target"
    for root, content in ((source, AFTER), (target, BEFORE)):
        root.mkdir()
        (root / "greet.py").write_bytes(content)
    record(source, make_record(id="a-REPLAY"))
    return source, target


class TestLog:
    def test_nothing_recorded(self, cli: CliRun, tmp_path: Path) -> None:
        """With no store, log says so, exits 0 and creates nothing."""
        code, out, _ = cli("log", "-C", str(tmp_path))

        assert (code, out) == (0, "no attempts recorded\n")
        assert not (tmp_path / ".patchsmith").exists()

    def test_lines_newest_first(self, cli: CliRun, tmp_path: Path) -> None:
        """One line per attempt, newest first, with id, status and file count."""
        record(
            tmp_path,
            make_record(id="a-OLD", created_at="2024-01-01"),
            make_record(id="a-NEW", created_at="2024-02-01", status=AttemptStatus.REFUSED),
        )

        code, out, _ = cli("log", "-C", str(tmp_path))
        lines = out.splitlines()

        assert code == 0
        assert len(lines) == 2
        assert lines[0].startswith("a-NEW  2024-02-01  apply")
        assert "refused" in lines[0]
        assert "1 file " in lines[0]
        assert lines[1].startswith("a-OLD")

    def test_json_shape_and_limit(self, cli: CliRun, tmp_path: Path) -> None:
        """`--json` prints one object with status, attempt summaries and errors."""
        record(
            tmp_path,
            make_record(id="a-1", created_at="2024-01-01"),
            make_record(id="a-2", created_at="2024-01-02"),
        )

        code, out, _ = cli("log", "--json", "-n", "1", "-C", str(tmp_path))
        payload = json.loads(out)

        assert code == 0
        assert {"status", "attempts", "errors", "schema_version"} == set(payload)
        assert (payload["status"], payload["errors"]) == ("ok", [])
        assert [a["id"] for a in payload["attempts"]] == ["a-2"]
        assert "applied_diff" not in payload["attempts"][0]
        assert payload["attempts"][0]["files"][0]["path"] == "greet.py"

    def test_bad_limit_is_usage_error(self, cli: CliRun, tmp_path: Path) -> None:
        """A limit below one is a usage error."""
        code, _, err = cli("log", "-n", "0", "-C", str(tmp_path))

        assert code == 2
        assert "between 1 and" in err

    def test_missing_dir(self, cli: CliRun, tmp_path: Path) -> None:
        """A -C that is not a directory is a usage error with FILE_NOT_FOUND."""
        code, out, _ = cli("log", "--json", "-C", str(tmp_path / "nope"))

        assert code == 2
        assert json.loads(out)["errors"][0]["code"] == "FILE_NOT_FOUND"

    def test_unreadable_store(self, cli: CliRun, tmp_path: Path) -> None:
        """A corrupt store exits 1 with IO_ERROR on stderr, never a traceback."""
        (tmp_path / ".patchsmith").mkdir()
        (tmp_path / ".patchsmith" / DB_FILE_NAME).write_bytes(b"garbage" * 200)

        code, out, err = cli("log", "-C", str(tmp_path))

        assert (code, out) == (1, "")
        assert err.startswith("patchsmith log: IO_ERROR: ")
        assert "Traceback" not in err


class TestShow:
    def test_text_has_decisions_and_diff(self, cli: CliRun, tmp_path: Path) -> None:
        """The text view shows the header, files, decisions and the applied diff."""
        record(tmp_path, make_record(id="a-SHOW"))

        code, out, _ = cli("show", "a-SH", "-C", str(tmp_path))

        assert code == 0
        assert "attempt   a-SHOW\n" in out
        assert "base      abc123\n" in out
        assert f"  update  greet.py  {sha(BEFORE)[:12]} -> {sha(AFTER)[:12]}\n" in out
        assert "  pass  paths (PATH_OUTSIDE_WORKSPACE)\n" in out
        assert "  FAIL  secrets (SECRET_ADDED)  token on line 2\n" in out
        assert out.endswith("applied diff\n" + DIFF)

    def test_refused_shows_staged_diff_and_failures(self, cli: CliRun, tmp_path: Path) -> None:
        """A refused attempt shows its failures and the staged diff."""
        failure = PatchFailure(
            code=FailureCode.STALE_FILE, message="changed", file="greet.py", hint="re-read"
        )
        record(
            tmp_path,
            make_record(
                id="a-R",
                status=AttemptStatus.REFUSED,
                applied_diff="",
                failures=(failure,),
                base_commit=None,
            ),
        )

        _, out, _ = cli("show", "a-R", "-C", str(tmp_path))

        assert "base      (no commit)\n" in out
        assert "  STALE_FILE  greet.py: changed\n    hint: re-read\n" in out
        assert out.endswith("staged diff\n" + DIFF)

    def test_no_diff_and_move(self, cli: CliRun, tmp_path: Path) -> None:
        """Without any diff it says so; a move names its source."""
        move = FileRecord("b.py", Action.MOVE, sha(BEFORE), sha(BEFORE), old_path="a.py")
        record(
            tmp_path,
            make_record(id="a-N", staged_diff="x", applied_diff="", files=(move,), decisions=()),
            make_record(id="a-E", staged_diff="", applied_diff="", files=(), decisions=()),
        )

        _, moved, _ = cli("show", "a-N", "-C", str(tmp_path))
        _, empty, _ = cli("show", "a-E", "-C", str(tmp_path))

        assert "  move    b.py (from a.py)" in moved
        assert moved.endswith("staged diff\nx\n")
        assert empty.endswith("no diff recorded\n")
        assert "decisions" not in empty

    def test_json_is_the_full_record(self, cli: CliRun, tmp_path: Path) -> None:
        """`--json` prints status, the full attempt and errors."""
        rec = make_record(id="a-J")
        record(tmp_path, rec)

        code, out, _ = cli("show", "--json", "a-J", "-C", str(tmp_path))

        assert code == 0
        assert json.loads(json.dumps(rec.to_json())) == json.loads(out)["attempt"]
        assert (json.loads(out)["status"], json.loads(out)["errors"]) == ("ok", [])

    def test_unknown_id(self, cli: CliRun, tmp_path: Path) -> None:
        """An unknown id exits 2 with RECORD_NOT_FOUND, in text and in JSON."""
        record(tmp_path, make_record(id="a-1"))

        code, out, err = cli("show", "a-9", "-C", str(tmp_path))
        jcode, jout, _ = cli("show", "--json", "a-9", "-C", str(tmp_path))
        payload = json.loads(jout)

        assert (code, out) == (2, "")
        assert err.startswith("patchsmith show: RECORD_NOT_FOUND: no attempt with id 'a-9'\n")
        assert "hint: " in err
        assert jcode == 2
        assert payload["status"] == "error"
        assert payload["errors"][0]["code"] == "RECORD_NOT_FOUND"

    def test_ambiguous_prefix(self, cli: CliRun, tmp_path: Path) -> None:
        """A prefix of several ids exits 2 and lists them."""
        record(tmp_path, make_record(id="a-10"), make_record(id="a-11"))

        code, _, err = cli("show", "a-1", "-C", str(tmp_path))

        assert code == 2
        assert "RECORD_NOT_FOUND" in err
        assert "a-10, a-11" in err

    def test_no_store(self, cli: CliRun, tmp_path: Path) -> None:
        """With nothing recorded, any id is RECORD_NOT_FOUND."""
        code, _, err = cli("show", "a-1", "-C", str(tmp_path))

        assert code == 2
        assert "RECORD_NOT_FOUND: nothing is recorded" in err


class TestReplay:
    def test_identical(
        self, cli: CliRun, checkouts: tuple[Path, Path], git_apply: list[Path]
    ) -> None:
        """Replaying onto a fresh checkout applies the diff and reports identical."""
        source, target = checkouts

        code, out, _ = cli("replay", "a-REP", "--json", "-C", str(target), "--from", str(source))
        payload = json.loads(out)

        assert code == 0
        assert [target] == git_apply
        assert (target / "greet.py").read_bytes() == AFTER
        assert {
            "status": "identical",
            "attempt_id": "a-REPLAY",
            "identical": True,
            "files": [
                {
                    "path": "greet.py",
                    "expected_sha256": sha(AFTER),
                    "actual_sha256": sha(AFTER),
                    "identical": True,
                }
            ],
            "errors": [],
            "schema_version": 1,
        } == payload

    def test_different(
        self, cli: CliRun, checkouts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An apply that produces other content is reported as different, exit 1."""
        source, target = checkouts

        def apply(model_output: str, root: Path, *, format: str) -> FakeReport:
            (root / "greet.py").write_bytes(b"something else\n")
            return FakeReport("applied")

        monkeypatch.setattr(patchsmith, "apply", apply, raising=False)

        code, out, _ = cli("replay", "a-REPLAY", "-C", str(target), "--from", str(source))

        assert code == 1
        assert out == "replay of a-REPLAY: different\n  DIFFERS  greet.py\n"

    def test_already_applied(
        self, cli: CliRun, checkouts: tuple[Path, Path], git_apply: list[Path]
    ) -> None:
        """Replaying onto the recorded workspace itself writes nothing: already applied."""
        source, _ = checkouts

        code, out, _ = cli("replay", "a-REPLAY", "-C", str(source))

        assert code == 0
        assert git_apply == []
        assert out == "replay of a-REPLAY: already_applied\n  same     greet.py\n"

    def test_refused_report(
        self, cli: CliRun, checkouts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A refused or partial apply exits 1 and carries the apply's errors."""
        source, target = checkouts
        failure = PatchFailure(code=FailureCode.PATCH_CONTEXT_MISMATCH, message="no match")
        status = {"value": "refused"}

        def apply(model_output: str, root: Path, *, format: str) -> FakeReport:
            return FakeReport(status["value"], (failure,))

        monkeypatch.setattr(patchsmith, "apply", apply, raising=False)

        code, out, _ = cli("replay", "a-REPLAY", "--json", "-C", str(target), "--from", str(source))
        status["value"] = "partial"
        pcode, pout, _ = cli("replay", "a-REPLAY", "-C", str(target), "--from", str(source))

        assert code == 1
        assert json.loads(out)["status"] == "refused"
        assert [failure.to_json()] == json.loads(out)["errors"]
        assert False is json.loads(out)["identical"]
        assert pcode == 1
        assert pout.startswith("replay of a-REPLAY: partial\n  PATCH_CONTEXT_MISMATCH  no match")

    def test_apply_raises_refusal(
        self, cli: CliRun, checkouts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A `PatchRefused` from apply is reported as refused with its failures."""
        source, target = checkouts
        failure = PatchFailure(code=FailureCode.STALE_FILE, message="stale", file="greet.py")

        def apply(model_output: str, root: Path, *, format: str) -> FakeReport:
            raise PatchRefused([failure])

        monkeypatch.setattr(patchsmith, "apply", apply, raising=False)

        code, out, _ = cli("replay", "a-REPLAY", "-C", str(target), "--from", str(source))

        assert code == 1
        assert "  STALE_FILE  greet.py: stale\n" in out

    def test_no_apply_available(
        self, cli: CliRun, checkouts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without `patchsmith.apply` the replay is refused with NOT_SUPPORTED_YET."""
        source, target = checkouts
        monkeypatch.delattr(patchsmith, "apply", raising=False)
        monkeypatch.delitem(patchsmith._LAZY, "apply")  # the façade loads names on first use

        code, out, _ = cli("replay", "a-REPLAY", "--json", "-C", str(target), "--from", str(source))

        assert code == 1
        assert json.loads(out)["errors"][0]["code"] == "NOT_SUPPORTED_YET"
        assert (target / "greet.py").read_bytes() == BEFORE

    def test_nothing_to_replay(self, cli: CliRun, tmp_path: Path) -> None:
        """An attempt without an applied diff is a usage error (NO_CHANGE)."""
        record(tmp_path, make_record(id="a-R", status=AttemptStatus.REFUSED, applied_diff=""))

        code, _, err = cli("replay", "a-R", "-C", str(tmp_path))

        assert code == 2
        assert "NO_CHANGE" in err
        assert "(refused)" in err

    def test_recorded_path_escapes(
        self, cli: CliRun, tmp_path: Path, git_apply: list[Path]
    ) -> None:
        """A recorded path outside the workspace is refused before anything is applied."""
        evil = FileRecord("../outside.py", Action.UPDATE, None, sha(AFTER))
        record(tmp_path, make_record(id="a-E", files=(evil,)))

        code, out, _ = cli("replay", "a-E", "--json", "-C", str(tmp_path))

        assert code == 1
        assert git_apply == []
        assert json.loads(out)["errors"][0]["code"] == "PATH_OUTSIDE_WORKSPACE"

    def test_move_checks_source_is_gone(
        self, cli: CliRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A replayed move whose source file still exists is not identical."""
        move = FileRecord("b.py", Action.MOVE, sha(BEFORE), sha(BEFORE), old_path="a.py")
        record(tmp_path, make_record(id="a-M", files=(move,)))
        (tmp_path / "a.py").write_bytes(BEFORE)

        def apply(model_output: str, root: Path, *, format: str) -> FakeReport:
            (root / "b.py").write_bytes(BEFORE)
            return FakeReport("applied")

        monkeypatch.setattr(patchsmith, "apply", apply, raising=False)

        code, out, _ = cli("replay", "a-M", "-C", str(tmp_path))

        assert code == 1
        assert "  same     b.py\n  DIFFERS  a.py\n" in out

    def test_unknown_id_and_bad_target(self, cli: CliRun, checkouts: tuple[Path, Path]) -> None:
        """An unknown id or a target that is not a directory exits 2."""
        source, target = checkouts

        code, _, err = cli("replay", "a-NOPE", "-C", str(target), "--from", str(source))
        bcode, bout, _ = cli(
            "replay", "a-REPLAY", "--json", "-C", str(target / "x"), "--from", str(source)
        )

        assert code == 2
        assert "RECORD_NOT_FOUND" in err
        assert bcode == 2
        assert json.loads(bout)["errors"][0]["code"] == "FILE_NOT_FOUND"

    def test_with_real_apply(self, cli: CliRun, checkouts: tuple[Path, Path]) -> None:
        """The real `patchsmith.apply` replays a recorded git diff identically."""
        source, target = checkouts

        code, out, _ = cli("replay", "a-REPLAY", "-C", str(target), "--from", str(source))

        assert (code, (target / "greet.py").read_bytes()) == (0, AFTER)
        assert out.startswith("replay of a-REPLAY: identical\n")


class TestAmbiguousIds:
    def test_json_lists_the_matches(self, cli: CliRun, tmp_path: Path) -> None:
        """`show --json` with an ambiguous prefix gives each match's summary, oldest first."""
        record(
            tmp_path,
            make_record(id="a-AB2", created_at="2024-05-02T00:00:00+00:00"),
            make_record(id="a-AB1", created_at="2024-05-01T00:00:00+00:00"),
            make_record(id="a-XY1"),
        )

        code, out, _ = cli("show", "AB", "--json", "-C", str(tmp_path))
        payload = json.loads(out)

        assert 2 == code
        assert ["a-AB1", "a-AB2"] == [m["id"] for m in payload["matches"]]
        assert {"id", "status", "created_at", "proposal_id", "files"} <= set(payload["matches"][0])
        assert "RECORD_NOT_FOUND" == payload["errors"][0]["code"]

    def test_text_lists_one_line_per_match(self, cli: CliRun, tmp_path: Path) -> None:
        record(tmp_path, make_record(id="a-AB1"), make_record(id="a-AB2"))

        code, _, err = cli("show", "a-AB", "-C", str(tmp_path))

        assert 2 == code
        assert ["a-AB1", "a-AB2"] == [
            line.split()[0] for line in err.splitlines() if line.startswith("  a-")
        ]

    def test_unique_prefix_still_shows(self, cli: CliRun, tmp_path: Path) -> None:
        """The other side: a prefix naming one attempt shows it."""
        record(tmp_path, make_record(id="a-AB1"), make_record(id="a-XY1"))

        code, out, _ = cli("show", "AB", "-C", str(tmp_path))

        assert (0, True) == (code, out.startswith("attempt   a-AB1"))

    def test_real_ids_are_unique_on_their_typed_prefix(self, tmp_path: Path) -> None:
        """Twenty attempts made back to back: each one's first 8 characters name only it."""
        (tmp_path / "a.txt").write_text("0\n")
        ids = []
        for n in range(20):
            diff = f"--- a/a.txt\n+++ b/a.txt\n@@\n-{n}\n+{n + 1}\n"
            report = patchsmith.apply(diff, tmp_path)
            assert report.attempt_id is not None
            ids.append(report.attempt_id)

        assert 20 == len({i[:8] for i in ids})


class TestReplayDiverged:
    def test_diverged_checkout_is_not_written(
        self, cli: CliRun, checkouts: tuple[Path, Path], git_apply: list[Path]
    ) -> None:
        """A target whose file is neither before nor after: nothing written, exit 1."""
        source, target = checkouts
        edited = b"def greet():\n    return 'hi'\n\n# local change\n"
        (target / "greet.py").write_bytes(edited)

        code, out, _ = cli("replay", "a-REPLAY", "--json", "-C", str(target), "--from", str(source))
        payload = json.loads(out)

        assert 1 == code
        assert [] == git_apply
        assert edited == (target / "greet.py").read_bytes()
        assert "diverged" == payload["status"]
        assert [sha(edited)] == [f["actual_sha256"] for f in payload["files"]]
        assert "--onto-diverged" in payload["errors"][0]["hint"]

    def test_onto_diverged_applies(self, cli: CliRun, checkouts: tuple[Path, Path]) -> None:
        """With the flag the recorded diff goes through the fuzzy apply anyway."""
        source, target = checkouts
        (target / "greet.py").write_bytes(BEFORE + b"\n# local change\n")

        code, out, _ = cli(
            "replay", "a-REPLAY", "-C", str(target), "--from", str(source), "--onto-diverged"
        )

        assert 1 == code  # applied, but the file is not the recorded one: "different"
        assert "different" in out
        assert AFTER + b"\n# local change\n" == (target / "greet.py").read_bytes()

    def test_created_file_already_present_is_diverged(
        self, cli: CliRun, tmp_path: Path, git_apply: list[Path]
    ) -> None:
        source, target = tmp_path / "s", tmp_path / "t"
        source.mkdir()
        target.mkdir()
        (target / "new.py").write_bytes(b"someone else's\n")
        files = (FileRecord("new.py", Action.CREATE, None, sha(b"x\n")),)
        record(source, make_record(id="a-NEW", files=files))

        code, out, _ = cli("replay", "a-NEW", "-C", str(target), "--from", str(source))

        assert (1, []) == (code, git_apply)
        assert "diverged" in out
