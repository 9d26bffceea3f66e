"""`run_process`: argv only, scrubbed environment, group kill on timeout, bounded output."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.runtime.process import (
    ESSENTIAL_ENV,
    ProcessResult,
    output_digest,
    run_process,
    scrub_env,
)

PY = sys.executable


def _py(code: str, tmp_path: Path, **kwargs: object) -> ProcessResult:
    return run_process([PY, "-c", code], cwd=tmp_path, timeout_s=30, **kwargs)  # type: ignore[arg-type]


class TestRun:
    def test_captures_exit_code_and_streams(self, tmp_path: Path) -> None:
        """Both streams come back separately, with the exit code and the argv as run."""
        result = _py(
            "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)", tmp_path
        )

        assert (3, "out\n", "err\n") == (result.exit_code, result.stdout, result.stderr)
        assert (PY, "-c") == result.argv[:2]
        assert not result.ok
        assert not result.timed_out
        assert result.duration_s > 0

    def test_runs_in_cwd(self, tmp_path: Path) -> None:
        """The command's working directory is the one asked for."""
        result = _py("import os; print(os.getcwd())", tmp_path)

        assert os.path.realpath(tmp_path) == os.path.realpath(result.stdout.strip())
        assert result.ok

    def test_no_shell_interpretation(self, tmp_path: Path) -> None:
        """Shell syntax in an argument reaches the program as plain text."""
        result = run_process(
            [PY, "-c", "import sys; print(sys.argv[1])", "$(echo hi); rm -rf x"],
            cwd=tmp_path,
            timeout_s=30,
        )

        assert "$(echo hi); rm -rf x\n" == result.stdout

    def test_missing_executable_is_a_value(self, tmp_path: Path) -> None:
        """A command that cannot start is reported, not raised."""
        result = run_process(["no-such-tool-patchsmith"], cwd=tmp_path, timeout_s=5)

        assert result.exit_code is None
        assert result.start_error is not None and "no-such-tool-patchsmith" in result.start_error
        assert not result.ok

    def test_missing_cwd_is_a_value(self, tmp_path: Path) -> None:
        """A working directory that does not exist is reported, not raised."""
        result = run_process([PY, "-c", "pass"], cwd=tmp_path / "nope", timeout_s=5)

        assert result.start_error is not None and "not found" in result.start_error

    def test_rejects_empty_argv_and_bad_timeout(self, tmp_path: Path) -> None:
        """Misuse is the caller's bug: a ValueError, not a result."""
        with pytest.raises(ValueError):
            run_process([], cwd=tmp_path, timeout_s=5)
        with pytest.raises(ValueError):
            run_process([PY], cwd=tmp_path, timeout_s=0)

    def test_stdin_is_closed(self, tmp_path: Path) -> None:
        """A command that reads stdin gets end-of-file at once instead of hanging."""
        result = _py("import sys; print(repr(sys.stdin.read()))", tmp_path)

        assert "''\n" == result.stdout


class TestEnvironment:
    def test_scrubs_everything_not_allowed(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A secret in the parent environment does not reach the command; PATH does."""
        monkeypatch.setenv("PATCHSMITH_TEST_SECRET", "s3cret")
        result = _py("import os, json; print(json.dumps(dict(os.environ)))", tmp_path)

        assert "s3cret" not in result.stdout
        assert '"PATH"' in result.stdout

    def test_allow_list_patterns_and_explicit_values(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Patterns keep matching names; `env_set` adds values the parent never had."""
        monkeypatch.setenv("PSX_ONE", "1")
        monkeypatch.setenv("PSX_TWO", "2")
        monkeypatch.setenv("OTHER_PSX", "3")
        code = "import os; print(sorted(k for k in os.environ if 'PSX' in k or k == 'SET_ME'))"
        result = _py(code, tmp_path, env_allow=[*ESSENTIAL_ENV, "PSX_*"], env_set={"SET_ME": "x"})

        assert "['PSX_ONE', 'PSX_TWO', 'SET_ME']\n" == result.stdout

    def test_empty_allow_list_still_runs_an_absolute_path(self, tmp_path: Path) -> None:
        """With nothing inherited, an absolute executable still starts."""
        result = run_process(
            [PY, "-c", "import os; print(len(os.environ.get('PATH', '')))"],
            cwd=tmp_path,
            timeout_s=30,
            env_allow=[],
        )

        assert result.ok

    @settings(max_examples=30)
    @given(
        st.dictionaries(
            st.from_regex(r"[A-Z_]{1,8}", fullmatch=True), st.text(max_size=5), max_size=8
        ),
        st.lists(st.from_regex(r"[A-Z_]{1,8}\*?", fullmatch=True), max_size=4),
    )
    def test_scrub_keeps_only_matches(self, source: dict[str, str], allow: list[str]) -> None:
        """Every kept name matches the allow-list; every matching name is kept."""
        kept = scrub_env(allow, source=source)

        def allowed(name: str) -> bool:
            return any(name == a or (a.endswith("*") and name.startswith(a[:-1])) for a in allow)

        assert {k: v for k, v in source.items() if allowed(k)} == kept


class TestTimeout:
    def test_kills_the_whole_group(self, tmp_path: Path) -> None:
        """On timeout the command and the children it started are all killed."""
        marker = tmp_path / "grandchild.pid"
        code = (
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
            "time.sleep(60)\n"
        )
        started = time.monotonic()
        result = run_process([PY, "-c", code], cwd=tmp_path, timeout_s=1.5)

        assert result.timed_out
        assert result.exit_code is None
        assert time.monotonic() - started < 30
        grandchild = int(marker.read_text())
        assert not _alive(grandchild)

    def test_background_child_holding_the_pipe_does_not_hang(self, tmp_path: Path) -> None:
        """A child left running with our stdout is killed once the command itself exits."""
        code = (
            "import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print('parent done')\n"
        )
        result = run_process([PY, "-c", code], cwd=tmp_path, timeout_s=30)

        assert result.ok
        assert "parent done\n" == result.stdout


class TestBoundedOutput:
    def test_long_output_keeps_head_and_tail(self, tmp_path: Path) -> None:
        """Output over the bound keeps its first and last bytes, and says what it dropped."""
        code = "import sys; sys.stdout.write('A' * 1000 + 'B' * 5000 + 'C' * 1000)"
        result = _py(code, tmp_path, max_output_bytes=2000)

        assert result.stdout_truncated
        assert 7000 == result.stdout_bytes
        assert result.stdout.startswith("A" * 1000)
        assert result.stdout.endswith("C" * 1000)
        assert "[... 5000 bytes omitted ...]" in result.stdout

    def test_digest_covers_every_byte(self, tmp_path: Path) -> None:
        """The digest is computed over the complete streams, not the kept part."""
        code = "import sys; sys.stdout.write('x' * 10000); sys.stderr.write('e')"
        result = _py(code, tmp_path, max_output_bytes=100)
        expected = output_digest(
            hashlib.sha256(b"x" * 10000).digest(), hashlib.sha256(b"e").digest()
        )

        assert expected == result.output_sha256
        assert not result.stderr_truncated

    def test_invalid_utf8_is_replaced(self, tmp_path: Path) -> None:
        """Bytes that are not UTF-8 do not break decoding."""
        result = _py("import sys; sys.stdout.buffer.write(b'ok\\xff')", tmp_path)

        assert "ok\ufffd" == result.stdout


def _alive(pid: int) -> bool:
    # Give the kernel a moment to reap; a zombie counts as dead.
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split()[2] == "Z":
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.1)
    return True
