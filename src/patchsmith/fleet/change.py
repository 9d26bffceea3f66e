"""The change a fleet run makes: a recipe or a proposal, resolved once, pinned by its hash.

The driver resolves the change (a recipe id, a recipe file, a proposal file) before any
repository is touched and hands every worker the same text, so that each repository gets
exactly the same recipe@version, whatever machine runs it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:
    from patchsmith.policy import Policy

__all__ = ["ChangeKind", "ChangeSpec", "policy_from_text", "resolve_change"]


class ChangeKind(StrEnum):
    """`recipe`: a codemod recipe. `proposal`: a `PatchProposal`."""

    RECIPE = "recipe"
    PROPOSAL = "proposal"


@dataclass(frozen=True)
class ChangeSpec:
    """What every repository of a run receives: the kind, a name, and the full text.

    `version` is the SHA-256 of the text (and of the policy text, if any): two runs with
    the same version make the same change.
    """

    kind: ChangeKind
    name: str
    text: str
    policy_text: str | None = None
    verify_profiles: tuple[str, ...] = ()

    @property
    def version(self) -> str:
        digest = hashlib.sha256()
        for part in (self.kind.value, self.text, self.policy_text or "", *self.verify_profiles):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        return digest.hexdigest()

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "name": self.name,
            "text": self.text,
            "policy_text": self.policy_text,
            "verify_profiles": list(self.verify_profiles),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> ChangeSpec:
        profiles = data.get("verify_profiles") or []
        assert isinstance(profiles, list)
        policy_text = data.get("policy_text")
        return cls(
            ChangeKind(str(data["kind"])),
            str(data["name"]),
            str(data["text"]),
            str(policy_text) if policy_text is not None else None,
            tuple(str(p) for p in profiles),
        )


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long for a path, a NUL in it
        return False


def _looks_like_proposal(path: Path) -> bool:
    """A JSON or YAML mapping with a proposal id is a proposal; anything else a recipe."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and ("proposal_id" in data or "proposalId" in data)


def resolve_change(
    change: str | os.PathLike[str],
    *,
    kind: ChangeKind | None = None,
    recipe_dirs: Iterable[str | os.PathLike[str]] = (),
    policy: str | os.PathLike[str] | None = None,
    verify_profiles: Iterable[str] = (),
) -> ChangeSpec | PatchFailure:
    """Resolve `change` (a recipe id or file, or a proposal file) into a `ChangeSpec`.

    Without `kind`, a file holding a mapping with `proposal_id` is a proposal and anything
    else a recipe (looked up like `patchsmith recipe run` does, from the current folder and
    `recipe_dirs`). `policy` is a policy file (`patchsmith.toml` syntax) applied in every
    repository instead of the repository's own. Returns the failure of an unknown recipe,
    an invalid recipe or proposal, or an unreadable policy file.
    """
    path = Path(change)
    if kind is None:
        kind = ChangeKind.PROPOSAL if _is_file(path) and _looks_like_proposal(path) else None
        kind = kind or ChangeKind.RECIPE
    policy_text: str | None = None
    if policy is not None:
        loaded = _policy_text(Path(policy))
        if isinstance(loaded, PatchFailure):
            return loaded
        policy_text = loaded
    profiles = tuple(verify_profiles)
    if kind is ChangeKind.RECIPE:
        from patchsmith.codemod.registry import find_recipe

        if not _is_file(path) and ("\n" in str(change) or len(str(change)) > 255):
            return PatchFailure(
                FailureCode.RECIPE_NOT_FOUND,
                "not a recipe id or recipe file (pass --kind proposal for a proposal's text)",
                hint="`patchsmith recipe list` shows every recipe",
            )
        entry = find_recipe(change, Path.cwd(), recipe_dirs)
        if isinstance(entry, PatchFailure):
            return entry
        return ChangeSpec(kind, entry.recipe.recipe_id, entry.text, policy_text, profiles)
    from patchsmith.model.proposal import load_proposal

    proposal = load_proposal(change)
    if isinstance(proposal, PatchFailure):
        return proposal
    text = json.dumps(proposal.model_dump(mode="json"), sort_keys=True, ensure_ascii=True)
    return ChangeSpec(kind, proposal.proposal_id, text, policy_text, profiles)


def _policy_text(path: Path) -> str | PatchFailure:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return PatchFailure(
            FailureCode.INVALID_POLICY,
            f"cannot read policy file {path}: {exc}",
            hint="pass --policy FILE: a patchsmith.toml with a [policy] table",
        )
    checked = policy_from_text(text, source=path.name)
    if isinstance(checked, PatchFailure):
        return checked
    return text


def policy_from_text(text: str, *, source: str = "policy") -> Policy | PatchFailure:
    """The `[policy]` table of a `patchsmith.toml` text (INVALID_POLICY when it is not one)."""
    import tomllib

    from pydantic import ValidationError

    from patchsmith.policy import Policy

    try:
        data = tomllib.loads(text).get("policy", {})
        return Policy.model_validate(data)
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        return PatchFailure(
            FailureCode.INVALID_POLICY,
            f"invalid policy in {source}: {exc}",
            file=source,
            hint="docs/policy.md lists every policy key",
        )
