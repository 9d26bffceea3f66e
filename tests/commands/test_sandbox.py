"""Command profiles in the sandbox, end to end: what the report, the record and `show` say,
`network`, and `[commands] require_sandbox`."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sandboxing import needs_bwrap, take_bwrap_away

from patchsmith.cli import main
from patchsmith.commands import load_profiles
from patchsmith.commands.profiles import require_sandbox
from patchsmith.errors import FailureCode, PatchFailure

PY = json.dumps(sys.executable)
WRITE = "open('out.txt', 'w').write('made\\n')"
CONNECT = (
    "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5);"
    " open('out.txt', 'w').write('reached\\n')"
)


def _workspace(root: Path, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "patchsmith.toml").write_text(
        extra + "[commands.gen]\n"
        f'argv = [{PY}, "-c", {json.dumps(WRITE)}]\n'
        'expected_changed_paths = ["out.txt"]\n'
    )
    return root


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


@pytest.fixture(name="port")
def _port() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


class TestRecorded:
    @pytest.mark.parametrize("available", [True, False])
    def test_report_record_and_show_name_the_sandbox(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        available: bool,
    ) -> None:
        from patchsmith.runtime.sandbox import usable_bwrap

        if available and usable_bwrap() is None:
            pytest.skip("bwrap cannot make a sandbox on this machine")
        if not available:
            take_bwrap_away(monkeypatch)
        expected = "bwrap" if available else "none"
        root = _workspace(tmp_path / "ws")

        code, out = _run(
            ["run-command", "gen", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        data = json.loads(out)
        assert 0 == code, data["errors"]
        assert [expected] == [run["sandbox"] for run in data["verification"]]
        assert (not available) == any("without a sandbox" in n for n in data["notes"])
        code, shown = _run(["show", data["attempt_id"], "-C", str(root)], capsys)
        assert f"    sandbox {expected}\n" in shown
        code, shown = _run(["show", data["attempt_id"], "-C", str(root), "--json"], capsys)
        assert [expected] == [e["sandbox"] for e in json.loads(shown)["attempt"]["evidence"]]


class TestRequireSandbox:
    def test_refused_where_no_sandbox_can_be_made(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        take_bwrap_away(monkeypatch)
        root = _workspace(tmp_path / "ws", "[commands]\nrequire_sandbox = true\n\n")

        code, out = _run(
            ["run-command", "gen", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        data = json.loads(out)
        assert 0 != code
        assert ["SANDBOX_UNAVAILABLE"] == [e["code"] for e in data["errors"]]
        assert [] == data.get("verification", [])
        assert not (root / "out.txt").exists()

    @needs_bwrap
    def test_runs_where_bwrap_works(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = _workspace(tmp_path / "ws", "[commands]\nrequire_sandbox = true\n\n")

        code, out = _run(
            ["run-command", "gen", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        assert 0 == code, out
        assert "made\n" == (root / "out.txt").read_text()

    def test_the_setting_is_not_a_profile(self, tmp_path: Path) -> None:
        root = _workspace(tmp_path / "ws", "[commands]\nrequire_sandbox = true\n\n")

        profiles = load_profiles(root)

        assert not isinstance(profiles, PatchFailure)
        assert "gen" in profiles and "require_sandbox" not in profiles
        assert require_sandbox(root) is True
        assert require_sandbox(tmp_path / "nothing") is False

    def test_a_setting_that_is_not_a_boolean_is_refused(self, tmp_path: Path) -> None:
        root = _workspace(tmp_path / "ws", '[commands]\nrequire_sandbox = "yes"\n\n')

        failure = require_sandbox(root)

        assert isinstance(failure, PatchFailure)
        assert FailureCode.COMMAND_NOT_ALLOWED is failure.code
        assert "require_sandbox" in failure.message


@needs_bwrap
class TestNetwork:
    def _profile(self, root: Path, port: int, network: bool) -> Path:
        root.mkdir(parents=True)
        (root / "patchsmith.toml").write_text(
            "[commands.fetch]\n"
            f'argv = [{PY}, "-c", {json.dumps(CONNECT)}, "{port}"]\n'
            'expected_changed_paths = ["out.txt"]\n'
            f"network = {str(network).lower()}\n"
        )
        return root

    def test_no_network_by_default(
        self, tmp_path: Path, port: int, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = self._profile(tmp_path / "ws", port, network=False)

        _code, out = _run(
            ["run-command", "fetch", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        assert ["COMMAND_FAILED"] == [e["code"] for e in json.loads(out)["errors"]]
        assert not (root / "out.txt").exists()

    def test_network_true_reaches_it(
        self, tmp_path: Path, port: int, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = self._profile(tmp_path / "ws", port, network=True)

        code, out = _run(
            ["run-command", "fetch", "-C", str(root), "--json", "--allow-unverified"], capsys
        )

        assert 0 == code, out
        assert "reached\n" == (root / "out.txt").read_text()
