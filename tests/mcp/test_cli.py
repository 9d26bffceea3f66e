"""`patchsmith mcp`: its options, its usage errors, and that nothing else imports the SDK."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.workspace_snapshot import make_tree

import patchsmith.cli
from patchsmith.mcp import server as server_module
from patchsmith.mcp.toolbox import Toolbox


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = patchsmith.cli.main(["mcp", *argv])
    return code, capsys.readouterr().err


class TestOptions:
    def test_fixed_at_start(
        self, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The root, prefix and recording choice reach the toolbox; the transport the server."""
        seen: dict[str, Any] = {}

        def fake_serve(toolbox: Toolbox, **options: Any) -> None:
            seen.update(options, toolbox=toolbox)

        monkeypatch.setattr(server_module, "serve", fake_serve)

        code, _ = run(
            capsys,
            "-C",
            str(repo),
            "--transport",
            "http",
            "--port",
            "0",
            "--workspace-prefix",
            "",
            "--no-record",
        )

        assert 0 == code
        assert server_module.Transport.HTTP == seen["transport"]
        assert (repo, None, False) == (
            seen["toolbox"].root,
            seen["toolbox"].workspace_prefix,
            seen["toolbox"].record,
        )

    def test_interrupted(
        self, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Ctrl-C stops the server quietly."""

        def interrupted(_toolbox: Toolbox, **_options: Any) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(server_module, "serve", interrupted)

        assert (0, "") == run(capsys, "-C", str(repo))


class TestUsageErrors:
    def test_missing_root(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A root that is not a directory is a usage error."""
        code, err = run(capsys, "-C", str(tmp_path / "nope"))

        assert 2 == code
        assert "FILE_NOT_FOUND" in err

    def test_bad_port(self, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A port out of range is a usage error."""
        code, err = run(capsys, "-C", str(repo), "--port", "70000")

        assert 2 == code
        assert "INVALID_ARGUMENTS" in err

    def test_invalid_policy(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A workspace whose policy cannot be read is not served."""
        root = make_tree(tmp_path / "r", {"patchsmith.toml": b"[policy]\nmax_file = 1\n"})

        code, err = run(capsys, "-C", str(root))

        assert 2 == code
        assert "INVALID_POLICY" in err

    def test_port_taken(self, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A port already in use is a usage error, not a traceback."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]

            code, err = run(capsys, "-C", str(repo), "--transport", "http", "--port", str(port))

        assert 2 == code
        assert "cannot listen" in err

    def test_sdk_missing(
        self, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without the SDK the command names the extra to install."""
        monkeypatch.setitem(sys.modules, "patchsmith.mcp.server", None)

        code, err = run(capsys, "-C", str(repo))

        assert 2 == code
        assert "patchsmith[mcp]" in err


class TestLazyImport:
    def test_other_commands_do_not_load_the_sdk(self) -> None:
        """Building the CLI and `import patchsmith.mcp` load neither the SDK nor the toolbox."""
        code = (
            "import sys, patchsmith, patchsmith.mcp; from patchsmith.cli import build_parser; "
            "build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types') "
            "or m.startswith('patchsmith.mcp.')))"
        )

        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        )

        assert "[]" == done.stdout.strip()

    def test_lazy_names(self) -> None:
        """`patchsmith.mcp` names load on first use; unknown names are AttributeError."""
        import patchsmith.mcp

        assert Toolbox is patchsmith.mcp.Toolbox
        with pytest.raises(AttributeError):
            patchsmith.mcp.nothing  # noqa: B018
