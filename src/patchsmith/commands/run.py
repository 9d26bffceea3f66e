"""`patchsmith.run_command`: one command profile, run as a proposal of its own."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence

from patchsmith.commands.profiles import ParamValue
from patchsmith.model.proposal import CommandOperation, PatchProposal, ProposalStrategy
from patchsmith.model.report import ApplyReport
from patchsmith.policy import Policy

__all__ = ["run_command"]


def run_command(
    profile: str,
    root: str | os.PathLike[str],
    *,
    params: Mapping[str, ParamValue] | None = None,
    expected_changed_paths: Sequence[str] = (),
    forbidden_changed_paths: Sequence[str] = (),
    allowed_dependency_changes: Sequence[str] = (),
    check: bool = False,
    record: bool | None = None,
    policy: Policy | None = None,
    trust: bool | None = None,
    allow_unverified: bool = False,
) -> ApplyReport:
    """Run the allow-listed command `profile` on `root` and apply what it changed, or refuse.

    The same as proposing one `command` operation (strategy BUILD_TOOL_GENERATED):
    the command runs on a scratch copy, its changes must stay inside
    `expected_changed_paths` (default: the profile's) and out of
    `forbidden_changed_paths`, and they pass the guards before anything is written.
    COMMAND_NOT_ALLOWED, COMMAND_FAILED or COMMAND_OUT_OF_BOUNDS when it cannot be
    run, fails, or strays; UNTRUSTED_REPOSITORY, with nothing run, unless the
    repository is trusted (`trust` true for this call, `None` asks the trust store).
    Naming the profile is the request to run it, `check` included. Like any
    BUILD_TOOL_GENERATED proposal it needs compile evidence: without a profile that gives
    it, INSUFFICIENT_EVIDENCE unless `allow_unverified`. Never raises for bad input.
    """
    from patchsmith.attempt.propose import propose

    run_id = f"run-command-{uuid.uuid4().hex[:12]}"
    operation = CommandOperation.model_validate(
        {
            "profile": profile,
            "params": dict(params or {}),
            "expected_changed_paths": tuple(expected_changed_paths),
            "forbidden_changed_paths": tuple(forbidden_changed_paths),
        }
    )
    proposal = PatchProposal(
        proposal_id=run_id,
        run_id=run_id,
        attempt_no=1,
        strategy=ProposalStrategy.BUILD_TOOL_GENERATED,
        objective=f"run command profile {profile}",
        operations=(operation,),
        allowed_dependency_changes=tuple(allowed_dependency_changes),
    )
    return propose(
        proposal,
        root,
        check=check,
        record=record,
        policy=policy,
        trust=trust,
        allow_unverified=allow_unverified,
    )
