"""Consent: the one decision every launcher of a repository's programs asks first.

Verification profiles (`verify`, `verify_changes`), command profiles (`stage_commands`),
and through them recipe postconditions, fleet workers and the MCP tools, call `consent`
before they start anything the repository chose. The caller's request (`--verify`, a
verification plan, a command operation; never a dry run without `--verify`) decides
whether they are reached at all; `consent` decides whether the repository is trusted.
"""

from __future__ import annotations

import os
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.trust import TrustState, trust_state

__all__ = ["consent", "untrusted"]


def consent(root: str | os.PathLike[str], trust: bool | None, *, what: str) -> PatchFailure | None:
    """`None` when the repository at `root` may run `what` now, else UNTRUSTED_REPOSITORY.

    `trust` true trusts it for this call (`--trust`), false refuses, `None` asks the
    trust store and `$PATCHSMITH_TRUSTED_PATHS` (`patchsmith.runtime.trust`).
    """
    if trust is True:
        return None
    state = TrustState.UNTRUSTED if trust is False else trust_state(root)
    if state.allowed:
        return None
    return untrusted(root, what, changed=state is TrustState.CHANGED)


def untrusted(root: str | os.PathLike[str], what: str, *, changed: bool = False) -> PatchFailure:
    """The UNTRUSTED_REPOSITORY failure for `root`: nothing of `what` ran."""
    path = str(Path(root).resolve())
    why = (
        "its verification configuration changed since it was trusted"
        if changed
        else "it is not trusted"
    )
    return PatchFailure(
        FailureCode.UNTRUSTED_REPOSITORY,
        f"{what} not run: the repository's own programs run only where the user trusts "
        f"them, and {why} ({path})",
        hint=f"read its [verify] and [commands] configuration, then run `patchsmith trust "
        f"{path}`{' again' if changed else ''}, or pass --trust for this call",
        rule="trust",
    )
