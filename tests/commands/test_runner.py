"""Tests for running a profile on a scratch copy: what is kept, what is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.sandboxing import needs_bwrap, take_bwrap_away

from patchsmith.commands import CommandProfile, run_profile, summarise_output
from patchsmith.errors import FailureCode
from patchsmith.runtime.process import ProcessResult


def _python(code: str, **extra: object) -> CommandProfile:
    """A profile running `code` with this interpreter, in the scratch copy."""
    return CommandProfile.model_validate({"argv": [sys.executable, "-c", code], **extra})


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.txt").write_text("old\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def _codes(run: object) -> list[FailureCode]:
    return [f.code for f in run.failures]  # type: ignore[attr-defined]


class TestRunProfile:
    def test_changes_in_the_copy_are_collected(self, root: Path) -> None:
        """Created, updated and deleted files come back; the real workspace is untouched."""
        profile = _python(
            "import os, pathlib; pathlib.Path('src/a.txt').write_text('new\\n');"
            "pathlib.Path('src/b.txt').write_text('b\\n');"
            "pathlib.Path(os.environ['HOME'], 'cache').write_text('x')",
            expected_changed_paths=["src/"],
        )

        run = run_profile(root, "gen", profile, {})

        assert run.ok
        assert {"src/a.txt": b"new\n", "src/b.txt": b"b\n"} == {
            f.path: f.new_bytes for f in run.files
        }
        assert "old\n" == (root / "src" / "a.txt").read_text()
        assert "changed: src/a.txt, src/b.txt" in run.summary()

    def test_git_and_records_are_not_copied(self, root: Path) -> None:
        """The command sees no .git/ (and cannot change it)."""
        profile = _python("import os; assert not os.path.exists('.git')")

        assert run_profile(root, "gen", profile, {}).ok

    def test_overlay_is_what_the_command_sees(self, root: Path) -> None:
        """Staged changes are laid over the copy; a deleted file is absent."""
        profile = _python(
            "import pathlib, os; t = pathlib.Path('src/a.txt').read_text();"
            "assert not os.path.exists('gone.txt');"
            "pathlib.Path('out.txt').write_text(t)",
            expected_changed_paths=["out.txt"],
        )
        (root / "gone.txt").write_text("x")

        run = run_profile(
            root, "gen", profile, {}, overlay={"src/a.txt": b"staged\n", "gone.txt": None}
        )

        assert [("out.txt", b"staged\n")] == [(f.path, f.new_bytes) for f in run.files]

    def test_writing_outside_the_workspace_is_refused(self, root: Path) -> None:
        """A file written next to the copy is COMMAND_OUT_OF_BOUNDS; nothing is kept."""
        profile = _python(
            "import pathlib; pathlib.Path('../escape.txt').write_text('x');"
            "pathlib.Path('src/a.txt').write_text('new\\n')",
            expected_changed_paths=["src/"],
        )

        run = run_profile(root, "gen", profile, {})

        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(run)
        assert "escape.txt" in run.failures[0].message
        assert () == run.files
        assert not (root.parent / "escape.txt").exists()

    @needs_bwrap
    def test_writing_the_real_workspace_is_impossible(self, root: Path) -> None:
        """In the sandbox the real workspace is read-only: the write fails, the file is intact."""
        target = root / "src" / "a.txt"
        profile = _python(f"open({str(target)!r}, 'w').write('hacked')")

        run = run_profile(root, "gen", profile, {})

        # read-only, or hidden (a workspace under /tmp is behind the private /tmp)
        assert [FailureCode.COMMAND_FAILED] == _codes(run)
        assert "old\n" == target.read_text()

    def test_writing_the_real_workspace_is_refused(
        self, root: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a sandbox, a command that writes the real workspace by absolute path is
        refused (the file is changed: that is the fallback's limit)."""
        take_bwrap_away(monkeypatch)
        target = root / "src" / "a.txt"
        profile = _python(f"open({str(target)!r}, 'w').write('hacked')")

        run = run_profile(root, "gen", profile, {})

        assert FailureCode.COMMAND_OUT_OF_BOUNDS in _codes(run)
        assert "real workspace" in " ".join(f.message for f in run.failures)
        assert "ran without a sandbox" in run.summary()
        assert "none" == run.evidence().sandbox  # type: ignore[union-attr]

    def test_a_hook_written_by_absolute_path_is_refused(
        self, root: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a sandbox, a new `.git/hooks/` file in the real workspace is seen."""
        take_bwrap_away(monkeypatch)
        hook = root / ".git" / "hooks" / "pre-commit"
        code = (
            f"import os; os.makedirs({str(hook.parent)!r}, exist_ok=True);"
            f" open({str(hook)!r}, 'w').write('x')"
        )

        run = run_profile(root, "gen", _python(code), {})

        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(run)
        assert "real workspace" in run.failures[0].message

    def test_a_setsid_child_cannot_edit_after_the_checks(
        self, root: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a sandbox the child that left the process group is killed before the
        real workspace is compared: it never writes (with bwrap its namespace dies)."""
        take_bwrap_away(monkeypatch)
        target = root / "src" / "a.txt"
        late = f"import time; time.sleep(1); open({str(target)!r}, 'w').write('late')"
        code = (
            "import subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', {late!r}], start_new_session=True,"
            " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        )

        run = run_profile(root, "gen", _python(code), {})
        import time

        time.sleep(2)  # longer than the child would have waited

        assert run.ok, run.failures
        assert "old\n" == target.read_text()

    @pytest.mark.parametrize("sandboxed", [True, False])
    def test_a_file_replaced_by_a_symlink_is_refused(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, sandboxed: bool
    ) -> None:
        """An expected file turned into a symlink is refused, not staged as a deletion."""
        if not sandboxed:
            take_bwrap_away(monkeypatch)
        code = "import os; os.remove('src/a.txt'); os.symlink('/etc/passwd', 'src/a.txt')"

        run = run_profile(root, "gen", _python(code, expected_changed_paths=["src/"]), {})

        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(run)
        assert "src/a.txt" in run.failures[0].message
        assert () == run.files

    def test_a_symlinked_folder_is_refused(self, root: Path) -> None:
        code = "import os; os.symlink('/etc', 'src/etc')"

        run = run_profile(root, "gen", _python(code, expected_changed_paths=["src/"]), {})

        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(run)
        assert "src/etc" in run.failures[0].message

    def test_require_sandbox_refuses_without_one(
        self, root: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        take_bwrap_away(monkeypatch)
        marker = root.parent / "ran"
        profile = _python(f"open({str(marker)!r}, 'w').write('x')")

        run = run_profile(root, "gen", profile, {}, require_sandbox=True)

        assert [FailureCode.SANDBOX_UNAVAILABLE] == _codes(run)
        assert run.result is None and run.evidence() is None
        assert not marker.exists()

    @needs_bwrap
    def test_require_sandbox_runs_with_one(self, root: Path) -> None:
        run = run_profile(root, "gen", _python("pass"), {}, require_sandbox=True)

        assert run.ok
        assert "bwrap" == run.evidence().sandbox  # type: ignore[union-attr]

    @pytest.mark.parametrize(
        ("extra", "problem"),
        [
            ({"expected_changed_paths": ["other/"]}, "unexpected paths: src/a.txt"),
            ({}, "unexpected paths: src/a.txt"),
            (
                {"expected_changed_paths": ["src/"], "forbidden_changed_paths": ["*.txt"]},
                "forbidden paths: src/a.txt",
            ),
        ],
    )
    def test_unexpected_and_forbidden_paths_are_refused(
        self, root: Path, extra: dict[str, object], problem: str
    ) -> None:
        """A change outside the expected paths, or inside forbidden ones, is refused."""
        profile = _python("open('src/a.txt', 'w').write('new')", **extra)

        run = run_profile(root, "gen", profile, {})

        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(run)
        assert problem in run.failures[0].message

    def test_operation_patterns_override_the_profile(self, root: Path) -> None:
        """The operation's expected paths replace the profile's; forbidden ones add up."""
        profile = _python("open('src/a.txt', 'w').write('new')")

        allowed = run_profile(root, "gen", profile, {}, expected=["src/a.txt"])
        banned = run_profile(root, "gen", profile, {}, expected=["src/a.txt"], forbidden=["src/"])

        assert allowed.ok
        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(banned)

    def test_symlink_creation_is_refused(self, root: Path) -> None:
        """A command may only produce regular files."""
        profile = _python(
            "import os; os.symlink('/etc/passwd', 'src/link')", expected_changed_paths=["src/"]
        )

        run = run_profile(root, "gen", profile, {})

        assert [FailureCode.COMMAND_OUT_OF_BOUNDS] == _codes(run)

    def test_failing_command_reports_its_output(self, root: Path) -> None:
        """A non-zero exit is COMMAND_FAILED with the end of the output as excerpt."""
        profile = _python("import sys; print('resolving'); sys.exit('ERESOLVE no match')")

        run = run_profile(root, "gen", profile, {})

        assert [FailureCode.COMMAND_FAILED] == _codes(run)
        assert "exited 1" in run.failures[0].message
        excerpt = run.failures[0].excerpt or ""
        assert "ERESOLVE no match" in excerpt
        assert "resolving" in excerpt

    def test_missing_program_and_timeout(self, root: Path) -> None:
        """A program that cannot start, or runs past its timeout, is COMMAND_FAILED."""
        missing = CommandProfile(argv=("patchsmith-no-such-tool-xyz",))
        slow = _python("import time; time.sleep(30)", timeout_seconds=0.5)

        not_started = run_profile(root, "gen", missing, {})
        timed_out = run_profile(root, "gen", slow, {})

        assert "could not start" in not_started.failures[0].message
        assert "timed out" in timed_out.failures[0].message

    def test_bad_parameters_never_run(self, root: Path) -> None:
        """An undeclared parameter is refused before anything runs."""
        run = run_profile(root, "gen", _python("pass"), {"x": "1"})

        assert [FailureCode.COMMAND_NOT_ALLOWED] == _codes(run)
        assert run.result is None
        assert "did not run" in run.summary()

    def test_run_twice_marks_nondeterminism(self, root: Path) -> None:
        """Two runs that write different bytes mark the path nondeterministic."""
        random = _python(
            "import os; open('out.bin', 'w').write(os.urandom(8).hex())",
            expected_changed_paths=["out.bin"],
            run_twice=True,
        )
        stable = _python(
            "open('out.bin', 'w').write('same')", expected_changed_paths=["out.bin"], run_twice=True
        )

        assert ("out.bin",) == run_profile(root, "gen", random, {}).nondeterministic
        run = run_profile(root, "gen", stable, {})
        assert () == run.nondeterministic
        assert "nondeterministic" not in run.summary()


class TestSummariseOutput:
    def test_output_is_bounded(self) -> None:
        """Only the last lines, each cut short, are kept for the model."""
        result = ProcessResult(
            argv=("t",),
            cwd=".",
            exit_code=1,
            duration_s=0.1,
            stdout="\n".join(f"line {i} " + "x" * 500 for i in range(100)),
            stderr="",
        )

        text = summarise_output(result)

        assert len(text) <= 2003
        assert "line 99" in text
        assert "line 0 " not in text
        assert "(no output)" == summarise_output(
            ProcessResult(argv=("t",), cwd=".", exit_code=0, duration_s=0.0, stdout="", stderr="")
        )
