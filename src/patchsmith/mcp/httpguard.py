"""Who may talk to the HTTP server: the binding's rules, Host/Origin lists and a bearer token.

An HTTP server edits files for whoever reaches it. On a loopback address only this
machine can; on any other address (a LAN address, `0.0.0.0`, `''`, `::`) the network
can, so a bearer token is required (`--token`, or `PATCHSMITH_MCP_TOKEN` to keep it out of
`ps`). Host and Origin are checked on every binding (DNS rebinding, cross-origin pages):
the loopback names are always allowed, a specific bound address too, and whatever
`--allowed-host` adds. No SDK import here: the lists are plain strings.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "MIN_TOKEN_LENGTH",
    "TOKEN_ENV",
    "BearerToken",
    "allowed_hosts",
    "allowed_origins",
    "check_binding",
    "is_loopback",
    "is_wildcard",
]

TOKEN_ENV = "PATCHSMITH_MCP_TOKEN"
"""The environment variable `patchsmith mcp` reads the bearer token from (without `--token`)."""

MIN_TOKEN_LENGTH = 16
"""A shorter token is refused: it guards every file of the workspace."""

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_wildcard(host: str) -> bool:
    """Whether binding `host` listens on every interface (`''`, `0.0.0.0`, `::`)."""
    address = _address(host)
    return host == "" or (address is not None and address.is_unspecified)


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only (`localhost`, 127.0.0.0/8, `::1`)."""
    if host == "localhost":
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def check_binding(host: str, token: str | None) -> PatchFailure | None:
    """Why the server may not listen on `host` with `token`, or None."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        return PatchFailure(
            FailureCode.INVALID_ARGUMENTS,
            f"the bearer token is {len(token)} characters; at least {MIN_TOKEN_LENGTH} are needed",
            hint='make one with: python -c "import secrets; print(secrets.token_urlsafe(32))"',
            rule="mcp_http",
        )
    if token is None and not is_loopback(host):
        shown = host or "'' (every interface)"
        return PatchFailure(
            FailureCode.INVALID_ARGUMENTS,
            f"--host {shown} is not a loopback address: whoever reaches it could edit files, "
            "so a bearer token is required",
            hint=f"pass --token TOKEN (or set {TOKEN_ENV}), or listen on 127.0.0.1",
            rule="mcp_http",
        )
    return None


def _host_name(host: str) -> str:
    address = _address(host)
    return f"[{address}]" if isinstance(address, ipaddress.IPv6Address) else host


def _has_port(name: str) -> bool:
    return name.rpartition("]")[2].startswith(":") if name.startswith("[") else ":" in name


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> list[str]:
    """The Host header values accepted when listening on `host` (`NAME:*` allows any port).

    The loopback names always; the bound address when it is one address (a wildcard
    binding names no host of its own); each of `extra` (a name, or `NAME:PORT`).
    """
    names = list(_LOOPBACK_HOSTS)
    if host and not is_wildcard(host) and _host_name(host) not in names:
        names.append(_host_name(host))
    names.extend(_host_name(name) for name in extra if name)
    allowed: list[str] = []
    for name in names:
        for value in (name,) if _has_port(name) else (name, f"{name}:*"):
            if value not in allowed:
                allowed.append(value)
    return allowed


def allowed_origins(hosts: Iterable[str]) -> list[str]:
    """The Origin header values accepted: pages served from the allowed hosts themselves."""
    return [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]


class BearerToken:
    """ASGI middleware: an HTTP request without `Authorization: Bearer TOKEN` gets 401.

    The comparison takes the same time whatever the guess (`hmac.compare_digest`).
    """

    def __init__(self, app: App, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            given = b""
            for name, value in scope.get("headers", ()):
                if name.lower() == b"authorization":
                    given = value
            if not hmac.compare_digest(given, self._expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"www-authenticate", b'Bearer realm="patchsmith"'),
                            (b"content-type", b"application/json"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error": "unauthorized"}'})
                return
        await self._app(scope, receive, send)
