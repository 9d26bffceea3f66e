"""The secret guard: refuse a change whose added lines carry a credential.

The scanner it runs, and the masking every excerpt and kept reply uses, live below the
policy in `patchsmith.runtime.secrets`.
"""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.secrets import find_secrets

__all__ = ["SecretGuard"]


class SecretGuard(Guard):
    """Refuse a change whose added lines carry a credential.

    What: scans only the lines a change adds, with detect-secrets' diff scanner
    (the shape-based plugins in `DETECT_SECRETS_PLUGINS`) plus patterns for
    private keys and AWS, GitHub, Slack and Google keys. A line marked
    `pragma: allowlist secret` is skipped.
    Why: a credential written into the tree leaks with the next commit; lines
    that were already there are not this change's doing.
    Example: adding `key = "AKIA` + 16 upper-case letters or digits + `"` is
    refused; the same line already present in the file is not.
    """

    NAME = "secrets"
    CODE = FailureCode.SECRET_ADDED
    MESSAGE = "an added line carries a credential"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per added line with a credential, naming the line and its kind."""
        return [
            self.failure(
                finding.file,
                f"{finding.kind} in {finding.file} line {finding.line}",
                hint="read the credential from the environment or a secret store instead",
            )
            for change in changes
            for finding in find_secrets(change)
        ]
