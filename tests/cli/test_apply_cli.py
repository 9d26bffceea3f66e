"""`patchsmith apply`: input from a file or stdin, text and JSON output, exit codes, help."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.cli import main

SOURCE = b"x = 1\ny = 2\nz = 4\n"
GOOD = "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 4\n"
BAD = "--- a/c.py\n+++ b/c.py\n@@\n-nope\n+x\n"
APPLIED = b"x = 1\ny = 3\nz = 4\n"

_RUN_CLI = [sys.executable, "-c", "import sys; from patchsmith.cli import main; sys.exit(main())"]


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    """A workspace with `a.py` and `b.py`."""
    return make_tree(tmp_path / "ws", {"a.py": SOURCE, "b.py": b"q\n"})


def _patch_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "reply.md"
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


class TestApplyCommand:
    def test_patch_from_file(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A PATCH file applies, exits 0 and says which file changed."""
        code = main(["apply", _patch_file(tmp_path, GOOD), "-C", str(root)])

        out = capsys.readouterr().out
        assert 0 == code
        assert APPLIED == (root / "a.py").read_bytes()
        assert "update  a.py (1/1 edits)" in out
        assert "applied: 1 file(s)" in out

    @pytest.mark.parametrize("argv", [["-"], []])
    def test_patch_from_stdin(
        self,
        root: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        argv: list[str],
    ) -> None:
        """`-` (or no PATCH) reads the patch from standard input."""
        _stdin(monkeypatch, GOOD)

        code = main(["apply", *argv, "-C", str(root)])

        assert 0 == code
        assert APPLIED == (root / "a.py").read_bytes()
        assert "applied: 1 file(s)" in capsys.readouterr().out

    def test_unreadable_patch_file(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A PATCH file that cannot be read exits 2 with the reason on stderr."""
        before = snapshot_tree(root)

        code = main(["apply", str(tmp_path / "missing.diff"), "-C", str(root)])

        err = capsys.readouterr().err
        assert 2 == code
        assert "cannot read" in err and "missing.diff" in err
        assert "Traceback" not in err
        assert before == snapshot_tree(root)

    def test_directory_as_patch_file(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A directory given as PATCH exits 2, not with a traceback."""
        code = main(["apply", str(tmp_path), "-C", str(root)])

        assert 2 == code
        assert "cannot read" in capsys.readouterr().err

    def test_refusal_exit_and_reasons(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A refusal exits 1 and prints each hunk's code, hint and the real lines on stderr."""
        before = snapshot_tree(root)
        _stdin(monkeypatch, GOOD + "--- a/b.py\n+++ b/b.py\n@@\n-nope\n+x\n")

        code = main(["apply", "-C", str(root)])

        err = capsys.readouterr().err
        assert 1 == code
        assert before == snapshot_tree(root)
        assert "Refused: nothing was written" in err
        assert "PATCH_CONTEXT_MISMATCH in b.py, edit 1:" in err
        assert "resend the whole reply" in err.lower()
        assert "lines 1-1 of b.py" in err
        assert "1 | q" in err

    def test_missing_file_reason(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An update of a file that does not exist names FILE_NOT_FOUND and the path."""
        _stdin(monkeypatch, "--- a/c.py\n+++ b/c.py\n@@\n-y\n+z\n")

        code = main(["apply", "-C", str(root)])

        assert 1 == code
        assert "FILE_NOT_FOUND in c.py:" in capsys.readouterr().err

    def test_json_shape(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--json prints exactly one object: status, files, errors first, and nothing on stderr."""
        _stdin(monkeypatch, GOOD)

        code = main(["apply", "--json", "-C", str(root)])

        captured = capsys.readouterr()
        data = json.loads(captured.out)
        assert 0 == code
        assert 1 == len(captured.out.strip().splitlines())
        assert ["status", "files", "errors"] == list(data)[:3]
        assert "applied" == data["status"]
        assert {
            "path": "a.py",
            "action": "update",
            "hunks_applied": 1,
            "hunks_total": 1,
        }.items() <= (data["files"][0].items())
        assert (1, True) == (data["files"][0]["hunks_located"], data["files"][0]["written"])
        assert [] == data["errors"]
        assert "+y = 3" in data["diff"]
        assert "" == captured.err

    def test_json_refusal(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--json on a refusal exits 1 with each failure as an object with its code."""
        _stdin(monkeypatch, BAD)

        code = main(["apply", "--json", "-C", str(root)])

        data = json.loads(capsys.readouterr().out)
        assert 1 == code
        assert "refused" == data["status"]
        assert ["FILE_NOT_FOUND"] == [e["code"] for e in data["errors"]]
        assert "c.py" == data["errors"][0]["file"]

    def test_check_prints_diff_writes_nothing(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--check prints the diff that would be written and leaves the tree as it is."""
        before = snapshot_tree(root)
        _stdin(monkeypatch, GOOD)

        code = main(["apply", "--check", "-C", str(root)])

        out = capsys.readouterr().out
        assert 0 == code
        assert before == snapshot_tree(root)
        assert "diff --git a/a.py b/a.py\n" in out
        assert "-y = 2\n+y = 3\n" in out
        assert "would apply: 1 file(s)" in out

    def test_partial(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--partial writes what located, exits 1 and reports the rest."""
        _stdin(monkeypatch, GOOD + "--- a/b.py\n+++ b/b.py\n@@\n-nope\n+x\n")

        code = main(["apply", "--partial", "--json", "-C", str(root)])

        data = json.loads(capsys.readouterr().out)
        assert 1 == code
        assert "partial" == data["status"]
        assert APPLIED == (root / "a.py").read_bytes()
        assert b"q\n" == (root / "b.py").read_bytes()
        assert ["PATCH_CONTEXT_MISMATCH"] == [e["code"] for e in data["errors"]]

    def test_format_override(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--format forces a format: a diff read as whole files is refused, as udiff applies."""
        _stdin(monkeypatch, GOOD)
        refused = main(["apply", "--format", "search_replace", "-C", str(root)])
        _stdin(monkeypatch, GOOD)
        applied = main(["apply", "--format", "udiff", "-C", str(root)])

        assert (1, 0) == (refused, applied)
        assert "MALFORMED_PATCH" in capsys.readouterr().err
        assert APPLIED == (root / "a.py").read_bytes()

    def test_unknown_format_is_usage_error(
        self, root: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An unknown --format value exits 2 naming the choices."""
        code = main(["apply", "--format", "klingon", "-C", str(root)])

        assert 2 == code
        err = capsys.readouterr().err
        assert "unknown format 'klingon'" in err
        assert "search_replace" in err

    def test_format_alias_is_accepted(self, root: Path) -> None:
        """--format takes the aliases the parsers know (diff for udiff)."""
        (root / "patch.diff").write_text(
            "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-x\n+y\n", encoding="utf-8"
        )
        (root / "f.txt").write_text("x\n", encoding="utf-8")

        code = main(["apply", str(root / "patch.diff"), "--format", "diff", "-C", str(root)])

        assert 0 == code
        assert "y\n" == (root / "f.txt").read_text(encoding="utf-8")

    def test_root_not_a_directory(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """-C naming a file is a usage error (exit 2) with a reason, not a traceback."""
        _stdin(monkeypatch, GOOD)

        code = main(["apply", "-C", str(root / "a.py")])

        err = capsys.readouterr().err
        assert 2 == code
        assert "not a directory" in err
        assert "Traceback" not in err

    def test_root_not_a_directory_json(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """With --json, a usage error still prints one JSON object on stdout."""
        _stdin(monkeypatch, GOOD)

        code = main(["apply", "--json", "-C", str(root / "missing")])

        payload = json.loads(capsys.readouterr().out)
        assert 2 == code
        assert "error" == payload["status"]
        assert "FILE_NOT_FOUND" == payload["errors"][0]["code"]

    def test_non_utf8_stdin_is_refused_cleanly(self, root: Path) -> None:
        """Random bytes on a real stdin give a refusal, never a decoding traceback."""
        done = subprocess.run(
            [*_RUN_CLI, "apply", "-", "-C", str(root), "--json", "--no-record"],
            input=bytes(range(256)) * 8,
            capture_output=True,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
            check=False,
        )

        assert 1 == done.returncode
        assert b"Traceback" not in done.stderr
        assert "refused" == json.loads(done.stdout)["status"]

    def test_help_lists_every_format_with_example(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`apply --help` names every format and shows an example line of each."""
        code = main(["apply", "--help"])

        out = capsys.readouterr().out
        assert 0 == code
        for name, example in [
            ("udiff", "@@ -1,2 +1,2 @@"),
            ("apply_patch", "*** Begin Patch"),
            ("search_replace", "<<<<<<< SEARCH"),
            ("whole_file", "```python"),
            ("str_replace", '"command": "str_replace"'),
        ]:
            assert name in out
            assert example in out
        assert "exit status" in out


def _run(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from patchsmith.cli import main; sys.exit(main())",
            *args,
        ],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class TestApplySubprocess:
    def test_applies_from_stdin(self, root: Path) -> None:
        """A real process reading stdin applies the patch and exits 0."""
        result = _run(["apply", "-C", str(root)], GOOD)

        assert 0 == result.returncode, result.stderr
        assert APPLIED == (root / "a.py").read_bytes()

    def test_refusal_json(self, root: Path) -> None:
        """A real process refuses with exit 1, one JSON object on stdout, no traceback."""
        before = snapshot_tree(root)

        result = _run(["apply", "--json", "-C", str(root), "-"], BAD)

        assert 1 == result.returncode
        assert "refused" == json.loads(result.stdout)["status"]
        assert "Traceback" not in result.stderr
        assert before == snapshot_tree(root)
