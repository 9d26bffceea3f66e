"""MCP over HTTP: Host/Origin checked on every binding; off loopback a bearer token is required."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import patchsmith.cli
from patchsmith.errors import FailureCode, PatchRefused
from patchsmith.mcp.httpguard import (
    TOKEN_ENV,
    allowed_hosts,
    allowed_origins,
    check_binding,
    is_loopback,
    is_wildcard,
)

pytest.importorskip("mcp")

from patchsmith.mcp.server import Transport, serve
from patchsmith.mcp.toolbox import Toolbox

TOKEN = "s3cret-token-0123456789abcdef"
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
)


class TestRules:
    @pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "127.255.0.9", "localhost", "::1"])
    def test_loopback(self, host: str) -> None:
        assert is_loopback(host) and not is_wildcard(host)
        assert check_binding(host, None) is None

    @pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "10.0.0.5", "example.com", "::ffff:1"])
    def test_not_loopback_needs_a_token(self, host: str) -> None:
        assert not is_loopback(host)
        failure = check_binding(host, None)
        assert failure is not None and failure.code is FailureCode.INVALID_ARGUMENTS
        assert "--token" in (failure.hint or "") and TOKEN_ENV in (failure.hint or "")
        assert check_binding(host, TOKEN) is None

    def test_wildcards(self) -> None:
        assert all(is_wildcard(h) for h in ("", "0.0.0.0", "::"))
        assert not is_wildcard("10.0.0.5")

    def test_a_short_token_is_refused(self) -> None:
        failure = check_binding("127.0.0.1", "short")
        assert failure is not None and "at least" in failure.message

    def test_allowed_hosts(self) -> None:
        loopback = ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"]
        assert allowed_hosts("0.0.0.0") == loopback
        assert allowed_hosts("") == loopback
        assert allowed_hosts("127.0.0.1") == loopback
        assert allowed_hosts("127.0.0.2") == [*loopback, "127.0.0.2", "127.0.0.2:*"]
        assert allowed_hosts("fd00::5") == [*loopback, "[fd00::5]", "[fd00::5]:*"]
        assert allowed_hosts("::", ["mcp.internal", "box:8443", "[fd00::1]:9"]) == [
            *loopback,
            "mcp.internal",
            "mcp.internal:*",
            "box:8443",
            "[fd00::1]:9",
        ]
        assert allowed_origins(["box:8443"]) == ["http://box:8443", "https://box:8443"]


@pytest.fixture(name="start")
def _start(repo: Path) -> Iterator[Callable[..., int]]:
    """Start `serve` on a thread (HTTP, a free port); returns the port."""
    stops: list[tuple[threading.Event, threading.Thread]] = []

    def start(host: str, **options: Any) -> int:
        ready = threading.Event()
        urls: list[str] = []
        stop = threading.Event()

        def announce(url: str) -> None:
            urls.append(url)
            ready.set()

        thread = threading.Thread(
            target=serve,
            args=(Toolbox(repo),),
            kwargs={
                "transport": Transport.HTTP,
                "host": host,
                "port": 0,
                "announce": announce,
                "stop": stop,
                **options,
            },
            daemon=True,
        )
        thread.start()
        stops.append((stop, thread))
        assert ready.wait(60), "the server did not start"
        return int(urls[0].rsplit(":", 1)[1].split("/")[0])

    yield start
    for stop, thread in stops:
        stop.set()
        thread.join(30)


def post(port: int, *, connect: str = "127.0.0.1", **headers: str) -> int:
    """POST an initialize request to /mcp; the status code."""
    connection = http.client.HTTPConnection(connect, port, timeout=60)
    try:
        connection.request(
            "POST",
            "/mcp",
            body=INITIALIZE,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **{name.replace("_", "-"): value for name, value in headers.items()},
            },
        )
        return connection.getresponse().status
    finally:
        connection.close()


BINDINGS = [
    ("127.0.0.1", "127.0.0.1", None),
    ("127.0.0.2", "127.0.0.2", None),
    ("0.0.0.0", "127.0.0.1", TOKEN),
    ("", "127.0.0.1", TOKEN),
]


@pytest.mark.parametrize(("host", "connect", "token"), BINDINGS)
def test_cross_origin_and_rebound_hosts_are_refused_on_every_binding(
    start: Callable[..., int], host: str, connect: str, token: str | None
) -> None:
    port = start(host, token=token)
    auth = {"Authorization": f"Bearer {token}"} if token else {}

    assert post(port, connect=connect, **auth) == 200
    assert post(port, connect=connect, Origin=f"http://{connect}:{port}", **auth) == 200
    assert post(port, connect=connect, Origin="http://evil.example", **auth) == 403
    assert post(port, connect=connect, Origin="null", **auth) == 403
    assert post(port, connect=connect, Host=f"evil.example:{port}", **auth) in (403, 421)


def test_an_allowed_host_is_accepted(start: Callable[..., int]) -> None:
    port = start("0.0.0.0", token=TOKEN, extra_hosts=["mcp.internal"])
    auth = {"Authorization": f"Bearer {TOKEN}"}

    assert post(port, Host=f"mcp.internal:{port}", Origin="https://mcp.internal", **auth) == 200
    assert post(port, Host=f"other.internal:{port}", **auth) in (403, 421)


def test_with_a_token_every_request_must_carry_it(start: Callable[..., int]) -> None:
    port = start("127.0.0.1", token=TOKEN)

    assert post(port) == 401
    assert post(port, Authorization="Bearer wrong-token-0123456789abc") == 401
    assert post(port, Authorization=f"Basic {TOKEN}") == 401
    assert post(port, Authorization=f"Bearer {TOKEN}x") == 401
    assert post(port, Authorization=f"Bearer {TOKEN}") == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "", "10.0.0.5"])
def test_serve_refuses_a_non_loopback_binding_without_a_token(repo: Path, host: str) -> None:
    with pytest.raises(PatchRefused) as refused:
        serve(Toolbox(repo), transport=Transport.HTTP, host=host, port=0)
    assert refused.value.failures[0].code is FailureCode.INVALID_ARGUMENTS


def cli(capsys: pytest.CaptureFixture[str], repo: Path, *argv: str) -> tuple[int, str]:
    code = patchsmith.cli.main(["mcp", "-C", str(repo), "--transport", "http", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.0.2.1"])
def test_the_cli_refuses_to_start_off_loopback_without_a_token(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)

    code, err = cli(capsys, repo, "--host", host, "--port", "0")

    assert code == 2
    assert "INVALID_ARGUMENTS" in err and "token" in err


def test_the_cli_takes_the_token_from_the_environment(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import patchsmith.mcp.server as server_module

    seen: dict[str, Any] = {}
    monkeypatch.setattr(server_module, "serve", lambda toolbox, **options: seen.update(options))
    monkeypatch.setenv(TOKEN_ENV, TOKEN)

    code, _ = cli(capsys, repo, "--host", "0.0.0.0", "--allowed-host", "box.lan")

    assert code == 0
    assert seen["token"] == TOKEN and seen["extra_hosts"] == ["box.lan"]

    code, _ = cli(capsys, repo, "--host", "0.0.0.0", "--token", "x" * 20)
    assert code == 0 and seen["token"] == "x" * 20
