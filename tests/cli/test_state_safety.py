"""End to end through the CLI: nothing in `.patchsmith/` is trusted or followed.

Findings 1, 6 and 9 of the adversarial review (issue 7): a planted journal, a
symlinked or foreign-owned state directory, dangling links inside it, a malformed
manifest, an absurd `log --limit`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.cli import main
from patchsmith.runtime.journal import JournalEntry, open_journal
from patchsmith.runtime.workspace import Workspace

SOURCE = b"x = 1\ny = 2\n"
GOOD = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
HOOK = b"#!/bin/sh\necho pwned > /tmp/pwned\n"


def _plant_v1_journal(root: Path) -> None:
    """The journal of the review's reproduction: the old, unchecked manifest format."""
    directory = root / ".patchsmith" / "journal" / "deadbeefdeadbeef"
    (directory / "backup").mkdir(parents=True)
    (directory / "backup" / "1").write_bytes(HOOK)
    manifest = {
        "version": 1,
        "id": "deadbeefdeadbeef",
        "entries": [
            {"path": "../victim/keep.txt", "backup": None, "mode": None},
            {"path": ".git/hooks/post-commit", "backup": "1", "mode": 0o755},
        ],
        "created_dirs": [],
    }
    (directory / "manifest.json").write_text(json.dumps(manifest))


def _json_run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict[str, object]]:
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


def _codes(report: dict[str, object]) -> list[str]:
    errors = report["errors"]
    assert isinstance(errors, list)
    return [str(e["code"]) for e in errors]


class TestPlantedJournal:
    @pytest.mark.parametrize("extra", [["--check"], [], ["--no-record"]])
    def test_planted_journal_is_quarantined_not_run(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
    ) -> None:
        """A repository's own journal never deletes outside the root nor writes into .git."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE, ".git/HEAD": b"ref: x\n"})
        victim = make_tree(tmp_path / "victim", {"keep.txt": b"precious"})
        _plant_v1_journal(root)
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)
        before = snapshot_tree(root)

        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json", *extra])

        assert 1 == code
        assert ["JOURNAL_QUARANTINED"] == _codes(report)
        assert b"precious" == (victim / "keep.txt").read_bytes()
        assert not (root / ".git" / "hooks").exists()
        assert before == snapshot_tree(root)
        quarantine = root / ".patchsmith" / "quarantine"
        assert 1 == len(list(quarantine.iterdir()))

        # Reported once; the next command works normally.
        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json", *extra])
        assert 0 == code, report

    @pytest.mark.parametrize(
        "manifest",
        [
            b"{not json",
            json.dumps({"version": 2, "entries": [], "created_dirs": []}).encode(),
            json.dumps(
                {"version": 2, "id": "0123456789abcdef", "entries": 5, "created_dirs": []}
            ).encode(),
        ],
    )
    def test_malformed_manifest_never_crashes_later_commands(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: bytes
    ) -> None:
        """Not JSON, no id, non-list entries: quarantined with a reason, never a traceback."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE})
        directory = root / ".patchsmith" / "journal" / "0123456789abcdef"
        directory.mkdir(parents=True)
        (directory / "manifest.json").write_bytes(manifest)
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)

        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json"])
        assert 1 == code
        assert ["JOURNAL_QUARANTINED"] == _codes(report)
        assert SOURCE == (root / "a.py").read_bytes()
        for argv in (["log", "-C", str(root), "--json"], ["apply", str(patch), "-C", str(root)]):
            assert 0 == main(argv)
        capsys.readouterr()
        assert b"x = 1\ny = 3\n" == (root / "a.py").read_bytes()


class TestInterruptedCommit:
    def test_check_never_restores_then_real_run_does(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A dry run reports a valid leftover journal (INTERRUPTED_COMMIT) and writes nothing;
        the next real run rolls it back and applies."""
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\ny = 0\n", "b.py": b"B\n"})
        journal_root = Workspace(root).ensure_journal_root()
        open_journal(
            journal_root,
            [
                JournalEntry("a.py", SOURCE, 0o644, b"x = 1\ny = 0\n", 0o644),
                JournalEntry("b.py", b"b\n", 0o644, b"B\n", 0o644),
            ],
            [],
        )
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)
        before = snapshot_tree(root)

        code, report = _json_run(
            capsys, ["apply", str(patch), "-C", str(root), "--json", "--check"]
        )
        assert (1, ["INTERRUPTED_COMMIT"]) == (code, _codes(report))
        assert before == snapshot_tree(root)

        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json"])
        assert 0 == code, report
        assert {"a.py": b"x = 1\ny = 3\n", "b.py": b"b\n"} == snapshot_tree(root).files()


class TestStateDirectory:
    @pytest.mark.parametrize("extra", [[], ["--no-record"], ["--check"]])
    def test_symlinked_state_dir_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
    ) -> None:
        """A `.patchsmith` symlink is STATE_DIR_UNSAFE; nothing lands where it points."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE})
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (root / ".patchsmith").symlink_to(elsewhere, target_is_directory=True)
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)

        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json", *extra])

        assert 1 == code
        assert "STATE_DIR_UNSAFE" in _codes(report)
        assert SOURCE == (root / "a.py").read_bytes()
        assert [] == list(elsewhere.iterdir())

    @pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
    def test_foreign_owned_state_dir_is_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A `.patchsmith` owned by another user is refused, with the owner in the message."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE})
        (root / ".patchsmith").mkdir()
        os.chown(root / ".patchsmith", 1234, 1234)
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)

        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json"])

        assert 1 == code
        assert ["STATE_DIR_UNSAFE"] == _codes(report)
        errors = report["errors"]
        assert isinstance(errors, list)
        assert "uid 1234" in errors[0]["message"]
        assert SOURCE == (root / "a.py").read_bytes()

    @pytest.mark.parametrize("name", ["lock", ".gitignore", "patchsmith.db"])
    @pytest.mark.parametrize("extra", [[], ["--no-record"]])
    def test_dangling_links_inside_never_create_targets(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, extra: list[str]
    ) -> None:
        """Links at `.patchsmith/lock`, `.gitignore` or the database create no file anywhere."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE, "b.py": b"b\n"})
        (root / ".patchsmith").mkdir()
        target = tmp_path / "target-of-link"
        (root / ".patchsmith" / name).symlink_to(target)
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)

        code, report = _json_run(capsys, ["apply", str(patch), "-C", str(root), "--json", *extra])

        assert not os.path.lexists(target)
        if name == "lock":
            assert 1 == code
            assert ["STATE_DIR_UNSAFE"] == _codes(report)
        elif name == "patchsmith.db" and not extra:
            # The edit is made; only its record is refused, and said so.
            assert 0 == code
            assert ["STATE_DIR_UNSAFE"] == _codes(report)
        else:
            assert 0 == code, report


class TestLogLimit:
    @pytest.mark.parametrize("limit", ["99999999999999999999", "0", "-3", "ten"])
    def test_absurd_limit_is_usage_error(self, tmp_path: Path, limit: str) -> None:
        """`log --limit` outside 1..10^9 exits 2 with a usage message, never a traceback."""
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from patchsmith.cli import main; sys.exit(main())",
                "log",
                "-C",
                str(tmp_path),
                "--limit",
                limit,
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert 2 == done.returncode
        assert "Traceback" not in done.stderr
        assert "--limit" in done.stderr


class TestMetadataOptions:
    @pytest.mark.parametrize(
        ("setup", "option", "code"),
        [
            ("hardlink", "--break-hardlinks", "HARDLINKED_FILE"),
            ("readonly", "--write-read-only", "READ_ONLY_FILE"),
        ],
    )
    def test_refused_by_default_allowed_with_option(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        setup: str,
        option: str,
        code: str,
    ) -> None:
        """Without the option the CLI refuses with the code; with it, the edit is made."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE})
        if setup == "hardlink":
            os.link(root / "a.py", root / "twin.py")
        else:
            os.chmod(root / "a.py", 0o444)
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)
        argv = ["apply", str(patch), "-C", str(root), "--json", "--no-record"]

        refused, report = _json_run(capsys, argv)
        assert (1, [code]) == (refused, _codes(report))
        assert SOURCE == (root / "a.py").read_bytes()

        applied, report = _json_run(capsys, [*argv, option])
        assert 0 == applied, report
        assert b"x = 1\ny = 3\n" == (root / "a.py").read_bytes()
        if setup == "hardlink":
            assert SOURCE == (root / "twin.py").read_bytes()
        else:
            assert 0o444 == (root / "a.py").stat().st_mode & 0o777

    def test_option_with_unreadable_policy_reports_it(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An option does not hide a broken policy file: INVALID_POLICY is still reported."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE, "patchsmith.toml": b"[policy\n"})
        patch = tmp_path / "reply.diff"
        patch.write_text(GOOD)
        argv = ["apply", str(patch), "-C", str(root), "--json", "--write-read-only"]

        code, report = _json_run(capsys, argv)
        assert (1, ["INVALID_POLICY"]) == (code, _codes(report))
