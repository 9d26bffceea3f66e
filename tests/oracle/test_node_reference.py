"""The oracle's install-and-drive seam: cache location, reuse, refusals, driver protocol."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.oracle import node_reference
from tests.oracle.node_reference import (
    NodeReference,
    OracleUnavailable,
    install_reference,
    oracle_cache_dir,
)

pytestmark = pytest.mark.oracle

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


def _fake_package(prefix: Path, version: str, body: str | None = None) -> Path:
    package = prefix / "node_modules" / "llm-diff-patcher"
    port = package / "dist" / "aider_port"
    port.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"version": version}), encoding="utf-8")
    (port / "aider_udiff.js").write_text(
        "exports.findDiffs = (t) => " + (body or "[]") + ";\n", encoding="utf-8"
    )
    (port / "apply_hunk.js").write_text("exports.applyHunks = (c, h) => c;\n", encoding="utf-8")
    return package


class TestOracleCacheDir:
    """Where the reference is installed."""

    def test_environment_override(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """$PATCHSMITH_ORACLE_CACHE names the npm prefix."""
        monkeypatch.setenv("PATCHSMITH_ORACLE_CACHE", str(tmp_path / "here"))

        assert tmp_path / "here" == oracle_cache_dir()

    def test_default_under_home(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without the variable the cache is ~/.cache/patchsmith/oracle."""
        monkeypatch.delenv("PATCHSMITH_ORACLE_CACHE", raising=False)

        assert Path.home() / ".cache" / "patchsmith" / "oracle" == oracle_cache_dir()


class TestInstallReference:
    """Installing llm-diff-patcher 0.2.1 once, or saying why not."""

    @needs_node
    def test_reuses_installed_package(self, tmp_path: Path) -> None:
        """A cache already holding 0.2.1 is returned without running npm."""
        package = _fake_package(tmp_path, "0.2.1")

        assert package == install_reference(tmp_path)

    def test_no_node(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Without node the reference is unavailable, and the reason says so."""
        monkeypatch.setattr(shutil, "which", lambda name: None)

        with pytest.raises(OracleUnavailable, match="node is not on PATH"):
            install_reference(tmp_path)

    def test_no_npm(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Without npm a missing package cannot be installed."""
        monkeypatch.setattr(shutil, "which", lambda name: "/bin/node" if name == "node" else None)

        with pytest.raises(OracleUnavailable, match="npm is not on PATH"):
            install_reference(tmp_path)

    def test_failed_install(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """An npm that fails (offline) makes the reference unavailable with npm's last words."""
        fake_npm = tmp_path / "npm"
        fake_npm.write_text("#!/bin/sh\necho 'network unreachable' >&2\nexit 1\n")
        fake_npm.chmod(0o755)
        monkeypatch.setattr(shutil, "which", lambda name: str(fake_npm) if name == "npm" else name)

        with pytest.raises(OracleUnavailable, match="network unreachable"):
            install_reference(tmp_path / "cache")

    def test_install_timeout(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """An npm that hangs past the timeout makes the reference unavailable."""
        fake_npm = tmp_path / "npm"
        fake_npm.write_text("#!/bin/sh\nexec sleep 5\n")
        fake_npm.chmod(0o755)
        monkeypatch.setattr(shutil, "which", lambda name: str(fake_npm) if name == "npm" else name)
        monkeypatch.setattr(node_reference, "INSTALL_TIMEOUT_S", 0.2)

        with pytest.raises(OracleUnavailable, match="timed out"):
            install_reference(tmp_path / "cache")

    def test_wrong_version_is_reinstalled(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A cache holding another version is not used as the reference."""
        _fake_package(tmp_path, "0.2.0")
        fake_npm = tmp_path / "npm"
        fake_npm.write_text("#!/bin/sh\nexit 0\n")
        fake_npm.chmod(0o755)
        monkeypatch.setattr(shutil, "which", lambda name: str(fake_npm) if name == "npm" else name)

        with pytest.raises(OracleUnavailable, match="failed"):
            install_reference(tmp_path)


@needs_node
class TestNodeReference:
    """Talking to the driver process."""

    def test_reference_exception_is_reported(self, tmp_path: Path) -> None:
        """A request the reference throws on raises with the JavaScript error."""
        package = _fake_package(tmp_path, "0.2.1", body="(() => { throw new Error('boom'); })()")

        with NodeReference(package) as oracle, pytest.raises(RuntimeError, match="boom"):
            oracle.apply("a\n", "@@\n-a\n+b\n")

    def test_driver_exit_is_unavailable(self, tmp_path: Path) -> None:
        """A driver that cannot load the package makes the oracle unavailable."""
        with NodeReference(tmp_path / "missing") as oracle, pytest.raises(OracleUnavailable):
            oracle.apply("a\n", "@@\n-a\n+b\n")

    def test_astral_and_crlf_round_trip(self, tmp_path: Path) -> None:
        """Text with emoji, CJK and CRLF crosses the pipe unchanged."""
        package = _fake_package(tmp_path, "0.2.1")
        source = "中文 😀\r\nline\ttwo\r\n"

        with NodeReference(package) as oracle:
            result = oracle.apply(source, "no hunks")

        assert (False, source) == (result.ok, result.out)

    def test_no_node_to_start(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Starting the driver without node says node is missing."""
        monkeypatch.setattr(shutil, "which", lambda name: None)

        with pytest.raises(OracleUnavailable, match="node is not on PATH"):
            NodeReference(tmp_path)

    @pytest.mark.parametrize(
        ("reply", "message"),
        [
            ("[1]", "sent"),
            ('{"ok": 1, "out": "x", "ns": [1, 2]}', "malformed answer"),
            ('{"ok": true, "out": "x"}', "no timings"),
        ],
    )
    def test_malformed_driver_answers(self, tmp_path: Path, reply: str, message: str) -> None:
        """A driver answering out of protocol makes the oracle unavailable, saying how."""
        driver = tmp_path / "driver.js"
        driver.write_text(
            "require('readline').createInterface({input: process.stdin})"
            f".on('line', () => process.stdout.write({json.dumps(reply)} + '\\n'));\n",
            encoding="utf-8",
        )

        with (
            NodeReference(tmp_path, driver) as oracle,
            pytest.raises(OracleUnavailable, match=message),
        ):
            oracle.time("a\n", "b", repeat=2)

    def test_run_counts_hunks(self, tmp_path: Path) -> None:
        """`run` says how many hunks were found and how many located, with one timing."""
        groups = "[{hunks: [['-a\\n', '+b\\n'], ['-c\\n', '+d\\n']]}]"
        package = _fake_package(tmp_path, "0.2.1", body=groups)

        with NodeReference(package) as oracle:
            run = oracle.run("a\n", "@@\n-a\n+b\n")

        assert (run.result.ok, run.hunks, run.applied) == (True, 2, 2)
        assert run.ns >= 0

    def test_run_without_counts_is_unavailable(self, tmp_path: Path) -> None:
        """A driver that sends no hunk counts makes `run` fail, saying so."""
        driver = tmp_path / "driver.js"
        driver.write_text(
            "require('readline').createInterface({input: process.stdin})"
            '.on(\'line\', () => process.stdout.write(\'{"ok": true, "out": "x"}\\n\'));\n',
            encoding="utf-8",
        )

        with (
            NodeReference(tmp_path, driver) as oracle,
            pytest.raises(OracleUnavailable, match="no hunk counts"),
        ):
            oracle.run("a\n", "b")
