"""Proposals accept the camelCase spelling of every field, as JavaScript runtimes send them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic.alias_generators import to_camel
from tests.workspace_snapshot import make_tree

from patchsmith import propose
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.proposal import PatchProposal, load_proposal, proposal_json_schema
from patchsmith.model.report import ApplyStatus

SNAKE: dict[str, Any] = {
    "proposal_id": "p-camel",
    "run_id": "r-1",
    "attempt_no": 1,
    "strategy": "HYBRID",
    "objective": "bump",
    "expected_files": ["a.py", "b.py"],
    "forbidden_files": ["secrets/**"],
    "preconditions": [{"type": "FILE_EXISTS", "path": "a.py"}],
    "operations": [
        {
            "type": "patch",
            "format": "udiff",
            "text": "--- a/a.py\n+++ b/a.py\n@@\n-x = 1\n+x = 2\n",
        },
        {
            "type": "direct_write",
            "path": "b.py",
            "content": "y = 1\n",
            "expected_sha256": None,
            "allow_create": True,
        },
    ],
    "expected_postconditions": [{"type": "DIFF_MAX_FILES", "value": 2}],
}


def camel(value: Any) -> Any:
    """`value` with every object key in camelCase."""
    if isinstance(value, dict):
        return {to_camel(k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


class TestCamelCase:
    def test_same_model_either_way(self) -> None:
        assert load_proposal(SNAKE) == load_proposal(camel(SNAKE))

    def test_keys_really_differ(self) -> None:
        """The fixture exercises aliases: nested keys such as expectedSha256 are camelCase."""
        text = json.dumps(camel(SNAKE))

        assert '"proposalId"' in text and '"expectedSha256"' in text and '"allowCreate"' in text

    def test_dump_stays_snake_case(self) -> None:
        loaded = load_proposal(camel(SNAKE))
        assert isinstance(loaded, PatchProposal)

        assert "proposal_id" in json.loads(loaded.model_dump_json())

    def test_errors_name_the_snake_case_field(self) -> None:
        """A bad value in camelCase input is reported under the documented (snake) name."""
        broken = camel(SNAKE) | {"attemptNo": 0}

        failure = load_proposal(broken)

        assert isinstance(failure, PatchFailure)
        assert FailureCode.INVALID_PROPOSAL == failure.code
        assert "attempt_no" in failure.message

    def test_unknown_keys_still_refused(self) -> None:
        """The other side: a key that is neither spelling is INVALID_PROPOSAL."""
        failure = load_proposal(SNAKE | {"proposalID": "x"})

        assert isinstance(failure, PatchFailure)

    def test_both_spellings_of_one_field_are_named(self) -> None:
        """`proposal_id` and `proposalId` together: the message says so, not "extra input"."""
        failure = load_proposal(SNAKE | {"proposalId": SNAKE["proposal_id"]})

        assert isinstance(failure, PatchFailure)
        assert FailureCode.INVALID_PROPOSAL == failure.code
        assert "'proposal_id' is given twice, as 'proposal_id' and 'proposalId'" in failure.message
        assert "Extra inputs" not in failure.message
        assert "Value error" not in failure.message

    def test_applies_through_propose(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "ws", {"a.py": b"x = 1\n"})

        # HYBRID, which nothing here can verify: accepted on purpose (docs/verify.md)
        report = propose(json.dumps(camel(SNAKE)), root, allow_unverified=True)

        assert ApplyStatus.APPLIED == report.status
        assert b"x = 2\n" == (root / "a.py").read_bytes()


class TestSchema:
    @pytest.mark.parametrize("spelling", ["snake", "camel"])
    def test_schema_accepts_both_spellings(self, spelling: str) -> None:
        document = SNAKE if spelling == "snake" else camel(SNAKE)

        jsonschema.validate(document, proposal_json_schema())

    def test_schema_still_requires_each_field(self) -> None:
        """Dropping a required field in both spellings fails the schema."""
        document = {k: v for k, v in camel(SNAKE).items() if k != "proposalId"}

        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(document, proposal_json_schema())

    def test_schema_is_valid_json_schema(self) -> None:
        jsonschema.Draft202012Validator.check_schema(proposal_json_schema())
