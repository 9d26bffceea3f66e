"""The verify workflow: profiles, runs, parsers, the base-run cache, only-what-broke reports.

`verify(root, profiles)` checks a working tree against a git revision;
`verify_changes(root, changes, profiles)` checks staged changes in a private copy.

This package is also callable — `patchsmith.verify(root, ["pytest"])` is
`patchsmith.verify.verify(root, ["pytest"])` — because the package and the public
function share the name `patchsmith.verify` (docs/decisions/0016). Its names load on
first use, so `import patchsmith` stays cheap.

Layer (docs/architecture.md): a workflow, sibling of `attempt`, `commands`, `codemod` and
`pipeline` (which it may import, and they it); below it `store` and everything under that.
Never `fleet`, `mcp` or `cli`.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from patchsmith.model.evidence import Evidence, RunSide, ToolFailure, Verdict
    from patchsmith.verify.profiles import (
        DEFAULT_MINIMUM_EVIDENCE,
        EvidenceLevel,
        Profile,
        ProfileKind,
        ProfileSet,
        ProfileSource,
        detect_profiles,
        load_profiles,
    )
    from patchsmith.verify.report import ProfileOutcome, VerifyReport
    from patchsmith.verify.workflow import select_profiles, verify, verify_changes

__all__ = [
    "DEFAULT_MINIMUM_EVIDENCE",
    "Evidence",
    "EvidenceLevel",
    "Profile",
    "ProfileKind",
    "ProfileOutcome",
    "ProfileSet",
    "ProfileSource",
    "RunSide",
    "ToolFailure",
    "Verdict",
    "VerifyReport",
    "detect_profiles",
    "load_profiles",
    "select_profiles",
    "verify",
    "verify_changes",
]

_HOME = {
    "Evidence": "patchsmith.model.evidence",
    "RunSide": "patchsmith.model.evidence",
    "ToolFailure": "patchsmith.model.evidence",
    "Verdict": "patchsmith.model.evidence",
    "DEFAULT_MINIMUM_EVIDENCE": "patchsmith.verify.profiles",
    "EvidenceLevel": "patchsmith.verify.profiles",
    "Profile": "patchsmith.verify.profiles",
    "ProfileKind": "patchsmith.verify.profiles",
    "ProfileSet": "patchsmith.verify.profiles",
    "ProfileSource": "patchsmith.verify.profiles",
    "detect_profiles": "patchsmith.verify.profiles",
    "load_profiles": "patchsmith.verify.profiles",
    "ProfileOutcome": "patchsmith.verify.report",
    "VerifyReport": "patchsmith.verify.report",
    "select_profiles": "patchsmith.verify.workflow",
    "verify": "patchsmith.verify.workflow",
    "verify_changes": "patchsmith.verify.workflow",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'patchsmith.verify' has no attribute {name!r}")
    value: object = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


class _CallablePackage(types.ModuleType):
    """This package's type: calling it runs `verify`."""

    def __call__(self, *args: Any, **kwargs: Any) -> VerifyReport:
        from patchsmith.verify.workflow import verify as run

        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
