"""Tests for the artifact store (`patchsmith.store`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.runtime.change import FileChange
from patchsmith.store import (
    DB_FILE_NAME,
    SCHEMA_VERSION,
    UNIQUE_ID_PREFIX,
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    GuardDecision,
    Store,
    new_attempt_id,
)
from patchsmith.store.errors import mapped_errors
from patchsmith.store.schema import MIGRATIONS, migrate

SHA_A = hashlib.sha256(b"a\n").hexdigest()
SHA_B = hashlib.sha256(b"b\n").hexdigest()


def make_record(**changes: object) -> AttemptRecord:
    """A fully populated record; `changes` override fields."""
    base = AttemptRecord(
        run_id="run-1",
        proposal_id="prop-1",
        attempt_no=1,
        kind=AttemptKind.APPLY,
        status=AttemptStatus.APPLIED,
        created_at="2024-05-01T10:00:00.000000+00:00",
        finished_at="2024-05-01T10:00:01.000000+00:00",
        base_commit="0123456789abcdef0123456789abcdef01234567",
        input_text="--- a/x.py\n+++ b/x.py\n@@\n-a\n+b\n",
        staged_diff="diff --git a/x.py b/x.py\n",
        applied_diff="diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
        files=(
            FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),
            FileRecord("new.txt", Action.CREATE, None, SHA_A),
            FileRecord("gone.txt", Action.DELETE, SHA_B, None),
            FileRecord("dst.py", Action.MOVE, SHA_A, SHA_A, old_path="src.py"),
        ),
        failures=(
            PatchFailure(
                code=FailureCode.STALE_FILE,
                message="changed since read",
                file="x.py",
                hunk=2,
                hint="read it again",
                excerpt="1 | a",
                current_sha256=SHA_A,
                rule="precondition",
            ),
            PatchFailure(code=FailureCode.NO_CHANGE, message="nothing to do"),
        ),
        decisions=(
            GuardDecision("paths", FailureCode.PATH_OUTSIDE_WORKSPACE, True),
            GuardDecision("secrets", FailureCode.SECRET_ADDED, False, "AWS key on line 3"),
        ),
        proposal_json='{"proposal_id": "prop-1"}',
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture(name="state_dir")
def _state_dir(tmp_path: Path) -> Path:
    return tmp_path / ".patchsmith"


@pytest.fixture(name="store")
def _store(state_dir: Path) -> Store:
    return Store.open(state_dir)


def _schema_version(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT version FROM schema_version").fetchone()[0])


class TestOpen:
    def test_creates_dir_gitignore_and_db(self, state_dir: Path) -> None:
        """Opening creates the state dir, a `.gitignore` of `*` and the database."""
        Store.open(state_dir).close()

        assert (state_dir / ".gitignore").read_text() == "*\n"
        assert (state_dir / DB_FILE_NAME).is_file()

    def test_keeps_existing_gitignore(self, state_dir: Path) -> None:
        """An existing `.gitignore` is left as it is."""
        state_dir.mkdir()
        (state_dir / ".gitignore").write_text("*\n!keep\n")

        Store.open(state_dir).close()

        assert (state_dir / ".gitignore").read_text() == "*\n!keep\n"

    def test_wal_mode(self, state_dir: Path) -> None:
        """The database is in WAL mode, as seen from another connection."""
        Store.open(state_dir).close()

        with sqlite3.connect(state_dir / DB_FILE_NAME) as conn:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]

        assert mode == "wal"

    def test_records_sync_normally(self, state_dir: Path) -> None:
        """Every connection syncs the log at checkpoints, not at each commit
        (docs/decisions/0034: a power cut may lose the last record, never corrupt one)."""
        with Store.open(state_dir) as store, Store.shared(state_dir) as shared:
            for opened in (store, shared):
                assert opened._conn is not None
                assert 1 == opened._conn.execute("PRAGMA synchronous").fetchone()[0]
        Store.close_shared()

    def test_waits_for_another_writer(self, state_dir: Path) -> None:
        """Every connection waits `BUSY_TIMEOUT_MS` for another process's write lock (set
        by the connection itself, without a statement of its own)."""
        from patchsmith.store.connection import BUSY_TIMEOUT_MS

        with Store.open(state_dir) as store, Store.shared(state_dir) as shared:
            for opened in (store, shared):
                assert opened._conn is not None
                busy = opened._conn.execute("PRAGMA busy_timeout").fetchone()[0]
                assert BUSY_TIMEOUT_MS == busy
        Store.close_shared()

    def test_schema_version_is_current(self, state_dir: Path) -> None:
        """A new database is at `SCHEMA_VERSION`, one step per migration."""
        Store.open(state_dir).close()

        assert len(MIGRATIONS) == SCHEMA_VERSION == _schema_version(state_dir / DB_FILE_NAME)

    def test_reopen_keeps_records(self, state_dir: Path) -> None:
        """Reopening finds what was recorded and runs no migration twice."""
        with Store.open(state_dir) as store:
            attempt_id = store.record_attempt(make_record())

        with Store.open(state_dir) as store:
            assert store.get(attempt_id) is not None
        assert _schema_version(state_dir / DB_FILE_NAME) == SCHEMA_VERSION

    def test_newer_schema_refused(self, state_dir: Path) -> None:
        """A database from a newer patchsmith is refused with IO_ERROR, untouched."""
        Store.open(state_dir).close()
        with sqlite3.connect(state_dir / DB_FILE_NAME) as conn:
            conn.execute("UPDATE schema_version SET version = 99")

        with pytest.raises(PatchRefused) as info:
            Store.open(state_dir)

        assert info.value.failures[0].code == FailureCode.IO_ERROR
        assert "99" in info.value.failures[0].message
        assert _schema_version(state_dir / DB_FILE_NAME) == 99

    def test_not_a_database(self, state_dir: Path) -> None:
        """A file that is not SQLite is refused with IO_ERROR, not a traceback."""
        state_dir.mkdir()
        (state_dir / DB_FILE_NAME).write_bytes(b"this is not sqlite at all" * 100)

        with pytest.raises(PatchRefused) as info:
            Store.open(state_dir)

        assert info.value.failures[0].code == FailureCode.IO_ERROR

    def test_state_dir_is_a_file(self, tmp_path: Path) -> None:
        """A state dir that cannot be created is refused with IO_ERROR."""
        blocker = tmp_path / "blocker"
        blocker.write_text("")

        with pytest.raises(PatchRefused) as info:
            Store.open(blocker / ".patchsmith")

        assert info.value.failures[0].code == FailureCode.IO_ERROR

    def test_closed_store_is_misuse(self, state_dir: Path) -> None:
        """Using a closed store raises RuntimeError; closing twice is harmless."""
        with Store.open(state_dir) as store:
            pass
        store.close()

        with pytest.raises(RuntimeError):
            store.list_attempts()

    def test_git_status_clean(self, tmp_path: Path) -> None:
        """Recording in a git workspace leaves `git status` clean."""
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(tmp_path)]
        subprocess.run([*git, "init", "-q"], check=True)
        (tmp_path / "a.txt").write_text("a\n")
        subprocess.run([*git, "add", "a.txt"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)

        with Store.open(tmp_path / ".patchsmith") as store:
            store.record_attempt(make_record())
        status = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=all"],
            check=True,
            capture_output=True,
            text=True,
        )

        assert status.stdout == ""


class TestMigrations:
    def test_upgrades_version_one(self, state_dir: Path) -> None:
        """A version-1 database is migrated in place and its records stay readable."""
        state_dir.mkdir()
        db = state_dir / DB_FILE_NAME
        conn = sqlite3.connect(db, isolation_level=None)
        migrate(conn, MIGRATIONS[:1])
        conn.execute(
            "INSERT INTO attempts VALUES ('a-OLD', 'run-0', 'prop-0', 1, 'apply', 'applied',"
            " '2020-01-01T00:00:00+00:00', '2020-01-01T00:00:01+00:00', NULL, 'in', '', 'd', NULL)"
        )
        conn.execute("INSERT INTO attempt_files VALUES ('a-OLD', 0, 'x.py', 'update', NULL, 'h')")
        conn.close()
        assert _schema_version(db) == 1

        with Store.open(state_dir) as store:
            record = store.get("a-OLD")

        assert _schema_version(db) == SCHEMA_VERSION
        assert record is not None
        assert (FileRecord("x.py", Action.UPDATE, None, "h"),) == record.files
        with sqlite3.connect(db) as check:
            assert check.execute("SELECT id FROM runs").fetchall() == [("run-0",)]
            assert check.execute("SELECT id, run_id FROM proposals").fetchall() == [
                ("prop-0", "run-0")
            ]

    def test_checked_attempts_become_dry_runs(self, state_dir: Path) -> None:
        """Version 6 marks the `checked` rows of an older store as dry runs."""
        state_dir.mkdir()
        db = state_dir / DB_FILE_NAME
        conn = sqlite3.connect(db, isolation_level=None)
        migrate(conn, MIGRATIONS[:5])
        for number, status in ((1, "checked"), (2, "applied")):
            conn.execute(
                f"INSERT INTO attempts VALUES ('a-{number}', 'run-0', 'p', {number}, 'apply',"
                f" '{status}', '2020-01-01T00:00:0{number}+00:00', '2020-01-01T00:00:0{number}"
                "+00:00', NULL, '', '', '', NULL)"
            )
        conn.close()

        with Store.open(state_dir) as store:
            every = store.run_attempts("run-0")
            attempts = store.run_attempts("run-0", checks=False)

        assert [("a-1", True), ("a-2", False)] == [(r.id, r.dry_run) for r in every]
        assert ["a-2"] == [r.id for r in attempts]

    def test_failed_migration_rolls_back(self, state_dir: Path) -> None:
        """A migration that fails leaves the database at its old version."""
        state_dir.mkdir()
        conn = sqlite3.connect(state_dir / DB_FILE_NAME, isolation_level=None)

        def broken(c: sqlite3.Connection) -> None:
            c.execute("CREATE TABLE half_done (x INTEGER)")
            raise sqlite3.OperationalError("disk full")

        with pytest.raises(sqlite3.OperationalError):
            migrate(conn, (*MIGRATIONS, broken))
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        conn.close()

        assert "attempts" not in tables
        assert "half_done" not in tables


class TestRecordAttempt:
    def test_round_trip_every_field(self, store: Store) -> None:
        """Every field, file, failure and decision reads back equal."""
        record = make_record(id="a-FIXED")

        attempt_id = store.record_attempt(record)

        assert attempt_id == "a-FIXED"
        assert record == store.get(attempt_id)

    def test_round_trip_nothing_owned(self, store: Store) -> None:
        """A record without files, failures, decisions or evidence reads back so (no row
        is written for an empty list)."""
        record = make_record(id="a-BARE", files=(), failures=(), decisions=())

        store.record_attempt(record)

        assert record == store.get("a-BARE")

    def test_assigns_id(self, store: Store) -> None:
        """An empty id gets a fresh `a-` id, returned and stored."""
        attempt_id = store.record_attempt(make_record())

        assert attempt_id.startswith("a-")
        assert make_record(id=attempt_id) == store.get(attempt_id)

    def test_duplicate_id_is_misuse(self, store: Store) -> None:
        """Recording an existing id raises ValueError and changes nothing."""
        store.record_attempt(make_record(id="a-SAME"))

        with pytest.raises(ValueError, match="a-SAME"):
            store.record_attempt(make_record(id="a-SAME", run_id="other"))

        assert [make_record(id="a-SAME")] == store.list_attempts()

    def test_unknown_stored_code(self, store: Store, state_dir: Path) -> None:
        """A code this version does not know is reported as IO_ERROR, not a crash."""
        attempt_id = store.record_attempt(make_record())
        with sqlite3.connect(state_dir / DB_FILE_NAME) as conn:
            conn.execute("UPDATE decisions SET code = 'FROM_THE_FUTURE'")

        with pytest.raises(PatchRefused) as info:
            store.get(attempt_id)

        assert info.value.failures[0].code == FailureCode.IO_ERROR
        assert "FROM_THE_FUTURE" in info.value.failures[0].message

    @settings(
        max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        texts=st.lists(st.text(), min_size=4, max_size=4),
        base_commit=st.none() | st.text(min_size=1),
        paths=st.lists(st.text(min_size=1), max_size=3),
    )
    def test_round_trip_any_text(
        self, store: Store, texts: list[str], base_commit: str | None, paths: list[str]
    ) -> None:
        """Arbitrary unicode in every text field reads back unchanged."""
        record = make_record(
            input_text=texts[0],
            staged_diff=texts[1],
            applied_diff=texts[2],
            proposal_json=texts[3],
            base_commit=base_commit,
            files=tuple(FileRecord(p, Action.UPDATE, None, None) for p in paths),
        )

        attempt_id = store.record_attempt(record)

        assert dataclasses.replace(record, id=attempt_id) == store.get(attempt_id)


def _record_many(state_dir: str, worker: int, count: int, barrier: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    with Store.open(Path(state_dir)) as store:
        for n in range(count):
            store.record_attempt(make_record(run_id=f"w{worker}", attempt_no=n))


class TestConcurrency:
    def test_two_processes_record_at_once(self, state_dir: Path) -> None:
        """Two processes opening and recording at the same time both keep every record."""
        ctx = multiprocessing.get_context("fork")
        barrier = ctx.Barrier(2)
        workers = [
            ctx.Process(target=_record_many, args=(str(state_dir), w, 25, barrier)) for w in (1, 2)
        ]
        for proc in workers:
            proc.start()
        for proc in workers:
            proc.join(timeout=60)

        assert [proc.exitcode for proc in workers] == [0, 0]
        with Store.open(state_dir) as store:
            records = store.list_attempts(limit=100)
        assert len({r.id for r in records}) == 50
        assert {("w1", n) for n in range(25)} | {("w2", n) for n in range(25)} == {
            (r.run_id, r.attempt_no) for r in records
        }


class TestGet:
    def test_unique_prefix(self, store: Store) -> None:
        """A unique prefix, with or without `a-`, finds the record."""
        store.record_attempt(make_record(id="a-01ABC"))
        store.record_attempt(make_record(id="a-01XYZ"))

        found = [store.get(p) for p in ("a-01A", "01X", "a-01ABC")]

        assert [r.id if r else None for r in found] == ["a-01ABC", "a-01XYZ", "a-01ABC"]

    def test_ambiguous_unknown_and_empty(self, store: Store) -> None:
        """An ambiguous, unknown or empty prefix finds nothing."""
        store.record_attempt(make_record(id="a-01ABC"))
        store.record_attempt(make_record(id="a-01ABD"))

        assert [store.get(p) for p in ("a-01AB", "a-9", "")] == [None, None, None]
        assert store.find_ids("01AB") == ("a-01ABC", "a-01ABD")

    def test_exact_id_beats_longer_ids(self, store: Store) -> None:
        """An id that is also a prefix of another id still finds itself."""
        store.record_attempt(make_record(id="a-1"))
        store.record_attempt(make_record(id="a-12"))

        found = store.get("a-1")

        assert found is not None
        assert found.id == "a-1"


class TestListAttempts:
    def test_newest_first_with_limit(self, store: Store) -> None:
        """Records come newest first by creation time, at most `limit` of them."""
        for n, stamp in enumerate(["2024-01-02", "2024-01-03", "2024-01-01"]):
            store.record_attempt(make_record(id=f"a-{n}", created_at=stamp))

        assert [r.id for r in store.list_attempts()] == ["a-1", "a-0", "a-2"]
        assert [r.id for r in store.list_attempts(limit=1)] == ["a-1"]

    def test_bad_limit(self, store: Store) -> None:
        """A limit below one is misuse."""
        with pytest.raises(ValueError):
            store.list_attempts(limit=0)


class TestFindApplied:
    def test_matches_proposal_and_hashes(self, store: Store) -> None:
        """The applied attempt with the same proposal and after-hashes is found."""
        files = (FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),)
        attempt_id = store.record_attempt(make_record(files=files))

        found = store.find_applied("prop-1", {"x.py": SHA_B})

        assert found is not None
        assert attempt_id == found.id

    def test_no_match(self, store: Store) -> None:
        """Other hashes, other files, another proposal or a refused attempt do not match."""
        files = (FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),)
        store.record_attempt(make_record(files=files))
        store.record_attempt(
            make_record(proposal_id="prop-2", status=AttemptStatus.REFUSED, files=files)
        )

        assert None is store.find_applied("prop-1", {"x.py": SHA_A})
        assert None is store.find_applied("prop-1", {"x.py": SHA_B, "y.py": SHA_B})
        assert None is store.find_applied("prop-2", {"x.py": SHA_B})
        assert None is store.find_applied("prop-3", {"x.py": SHA_B})

    def test_deleted_file_and_newest(self, store: Store) -> None:
        """A deletion matches `None`, and the newest matching attempt wins."""
        files = (FileRecord("x.py", Action.DELETE, SHA_A, None),)
        store.record_attempt(make_record(id="a-1", files=files, created_at="2024-01-01"))
        store.record_attempt(make_record(id="a-2", files=files, created_at="2024-01-02"))

        found = store.find_applied("prop-1", {"x.py": None})

        assert found is not None
        assert found.id == "a-2"


class TestFileRecord:
    def test_from_change(self) -> None:
        """A staged change becomes its path, action and hashes; a move keeps its source."""
        update = FileChange("x.py", Action.UPDATE, "x.py", b"a\n", b"b\n")
        create = FileChange("n.py", Action.CREATE, None, None, b"a\n")
        move = FileChange("to.py", Action.MOVE, "from.py", b"a\n", b"a\n")

        records = [FileRecord.from_change(c) for c in (update, create, move)]

        assert [
            FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),
            FileRecord("n.py", Action.CREATE, None, SHA_A),
            FileRecord("to.py", Action.MOVE, SHA_A, SHA_A, old_path="from.py"),
        ] == records


class TestJson:
    def test_shapes(self) -> None:
        """The summary omits texts and decisions; the full form adds them; both serialise."""
        record = make_record(id="a-1")

        summary = record.summary_json()
        full = record.to_json()

        assert {
            "id",
            "run_id",
            "proposal_id",
            "attempt_no",
            "kind",
            "status",
            "created_at",
            "finished_at",
            "base_commit",
            "files",
            "failures",
            "dry_run",
        } == set(summary)
        assert set(summary) | {
            "decisions",
            "evidence",
            "input_text",
            "staged_diff",
            "applied_diff",
            "proposal_json",
        } == set(full)
        decoded = json.loads(json.dumps(full))
        assert decoded["status"] == "applied"
        assert (decoded["decisions"][0]) == {
            "name": "paths",
            "code": "PATH_OUTSIDE_WORKSPACE",
            "passed": True,
            "detail": "",
        }
        assert decoded["files"][3] == {
            "path": "dst.py",
            "action": "move",
            "old_path": "src.py",
            "before_sha256": SHA_A,
            "after_sha256": SHA_A,
        }


class TestIds:
    def test_random_from_the_first_character(self) -> None:
        """Ids are `a-` plus 18 characters, unique, and differ early even when made together."""
        ids = [new_attempt_id() for _ in range(200)]

        assert all(len(i) == 20 and i.startswith("a-") for i in ids)
        assert len(set(ids)) == 200
        assert len({i[:4] for i in ids}) > 20

    def test_recorded_ids_have_unique_prefixes(
        self, store: Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A new id never shares its first UNIQUE_ID_PREFIX characters with a recorded one."""
        drawn = iter(["a-ABCDEF0000000000AA", "a-ABCDEF1111111111BB", "a-ZZZZZZ0000000000CC"])
        monkeypatch.setattr("patchsmith.store.ids.new_attempt_id", lambda: next(drawn))

        first = store.record_attempt(make_record(id=None))
        second = store.record_attempt(make_record(id=None))

        assert ("a-ABCDEF0000000000AA", "a-ZZZZZZ0000000000CC") == (first, second)
        assert UNIQUE_ID_PREFIX == 8


class TestMappedErrors:
    @pytest.mark.parametrize(
        "error",
        [sqlite3.OperationalError("locked"), sqlite3.DatabaseError("corrupt"), OSError(5, "EIO")],
    )
    def test_storage_errors_become_io_error(self, error: Exception) -> None:
        """SQLite and OS storage errors become an IO_ERROR refusal."""
        with pytest.raises(PatchRefused) as info, mapped_errors("reading"):
            raise error

        assert info.value.failures[0].code == FailureCode.IO_ERROR
        assert info.value.failures[0].message.startswith("reading: ")

    @pytest.mark.parametrize(
        "error",
        [
            sqlite3.ProgrammingError("closed"),
            sqlite3.IntegrityError("unique"),
            sqlite3.InterfaceError("bad binding"),
            KeyError("bug"),
        ],
    )
    def test_misuse_and_unknown_pass_through(self, error: Exception) -> None:
        """Misuse and unknown errors are re-raised untouched."""
        with pytest.raises(type(error)), mapped_errors("reading"):
            raise error


class TestFindStillApplied:
    def test_files_named_by_the_record(self, store: Store) -> None:
        """Each recorded file is looked up by the caller's hash function."""
        files = (FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),)
        attempt_id = store.record_attempt(make_record(files=files))

        found = store.find_still_applied("prop-1", {"x.py": SHA_B}.get)

        assert found is not None and attempt_id == found.id
        assert None is store.find_still_applied("prop-1", {"x.py": SHA_A}.get)
        assert None is store.find_still_applied("prop-2", {"x.py": SHA_B}.get)

    def test_a_move_needs_its_old_path_gone(self, store: Store) -> None:
        files = (FileRecord("new.py", Action.MOVE, SHA_A, SHA_A, old_path="old.py"),)
        store.record_attempt(make_record(files=files))

        assert store.find_still_applied("prop-1", {"new.py": SHA_A}.get) is not None
        assert None is store.find_still_applied("prop-1", {"new.py": SHA_A, "old.py": SHA_A}.get)

    def test_an_attempt_without_files_vouches_for_nothing(self, store: Store) -> None:
        store.record_attempt(make_record(files=()))

        assert None is store.find_still_applied("prop-1", {}.get)

    def test_the_newest_still_applied_attempt_wins(self, store: Store) -> None:
        """Candidates are tried newest first; one whose file changed since is passed over."""
        older = store.record_attempt(
            make_record(
                created_at="2024-05-01T10:00:00.000+00:00",
                files=(FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),),
            )
        )
        newer = store.record_attempt(
            make_record(
                created_at="2024-05-02T10:00:00.000+00:00",
                files=(
                    FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),
                    FileRecord("y.py", Action.UPDATE, SHA_A, SHA_B),
                ),
            )
        )
        store.record_attempt(
            make_record(
                created_at="2024-05-03T10:00:00.000+00:00",
                status=AttemptStatus.REFUSED,
                files=(FileRecord("x.py", Action.UPDATE, SHA_A, SHA_B),),
            )
        )
        reads: list[str] = []

        def current(path: str) -> str | None:
            reads.append(path)
            return {"x.py": SHA_B, "y.py": SHA_B}.get(path)

        found = store.find_still_applied("prop-1", current)
        assert found is not None and newer == found.id
        assert found.files[1].path == "y.py"  # the whole record is loaded

        found = store.find_still_applied("prop-1", {"x.py": SHA_B, "y.py": SHA_A}.get)
        assert found is not None and older == found.id
        assert sorted(reads) == ["x.py", "y.py"]  # each file hashed once per lookup


class TestSameMillisecond:
    """Attempts recorded within one millisecond keep the order they were recorded in."""

    def test_newest_and_oldest_follow_the_recording_order(self, tmp_path: Path) -> None:
        with Store.open(tmp_path / ".patchsmith") as store:
            ids = [
                store.record_attempt(make_record(attempt_no=n, proposal_id="same"))
                for n in range(1, 9)
            ]

            assert ids == [r.id for r in store.run_attempts("run-1")]
            assert ids[::-1] == [r.id for r in store.list_attempts()]
            assert ids[:3] == [r.id for r in store.applied_since("2024-05-01T10:00:00")][:3]
            files = {f.path: f.after_sha256 for f in make_record().files}
            newest = store.find_applied("same", files)
            assert newest is not None and ids[-1] == newest.id
