"""The `patchsmith` program (`console`) and `main`: the same command, the collector tuned
only in the program's own process (docs/decisions/0022)."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from patchsmith.cli import _FIRST_GC_THRESHOLD, console

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "greeting"


def _run(code: str, env: dict[str, str] | None = None) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


# Run after `code = ...`: the exit code and the state of the collector, as JSON.
_REPORT = (
    "\nimport gc, json\n"
    "print(json.dumps({'code': code, 'threshold': gc.get_threshold()[0], "
    "'frozen': gc.get_freeze_count(), "
    "'collections': gc.get_stats()[0]['collections'] - start}))"
)
_START = "import gc\nstart = gc.get_stats()[0]['collections']\n"
"""Run after the import: the collections counted are the command's own."""


class TestConsole:
    def test_the_installed_command_and_python_m_run_console(self) -> None:
        """Both ways to start the program go through `console`."""
        scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        main_module = (ROOT / "src" / "patchsmith" / "__main__.py").read_text(encoding="utf-8")

        assert "patchsmith.cli:console" == scripts["project"]["scripts"]["patchsmith"]
        assert "sys.exit(console())" in main_module

    def test_a_cold_apply_never_collects_and_ends_frozen(self, tmp_path: Path) -> None:
        """`apply --check` of the example exits 0 without one collection, all frozen at the end."""
        workspace = tmp_path / "ws"
        shutil.copytree(EXAMPLE / "workspace", workspace)
        argv = ["apply", str(EXAMPLE / "model-reply.md"), "-C", str(workspace), "--check"]
        code = f"from patchsmith.cli import console\n{_START}code = console({argv!r}){_REPORT}"
        env = {"PATCHSMITH_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
        _run(code, env)  # the first call fills the per-user cache (detect-secrets' patterns)

        found = _run(code, env)

        assert {"code": 0, "threshold": 50_000, "collections": 0} == {
            k: found[k] for k in ("code", "threshold", "collections")
        }
        assert isinstance(found["frozen"], int) and found["frozen"] > 10_000

    def test_main_leaves_the_collector_alone(self) -> None:
        """A caller of `main` (a test, an embedding program) keeps its collector as it was."""
        code = f"from patchsmith.cli import main\n{_START}code = main(['--version']){_REPORT}"

        found = _run(code)

        assert 0 == found["code"]
        assert 700 == found["threshold"]
        assert 0 == found["frozen"]

    def test_console_returns_mains_exit_code(self) -> None:
        """In this process too (its collector put back afterwards): the code `main` gives."""
        threshold = gc.get_threshold()
        try:
            assert 0 == console(["--version"])
            assert 2 == console(["no-such-command"])
            assert _FIRST_GC_THRESHOLD == gc.get_threshold()[0]
        finally:
            gc.unfreeze()
            gc.set_threshold(*threshold)

    def test_usage_errors_keep_their_exit_code(self, tmp_path: Path) -> None:
        """A command line argparse refuses exits 2 through the program as through `main`."""
        done = subprocess.run(
            [sys.executable, "-m", "patchsmith", "apply", "--no-such-option"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )

        assert 2 == done.returncode
        assert "unrecognized arguments" in done.stderr
