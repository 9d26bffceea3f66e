"""Tests for the PatchProposal contract, its loader, its schema and `patchsmith schema`."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.cli import schema as schema_cli
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import EditFormat
from patchsmith.model.proposal import (
    DirectWriteOperation,
    FileHashMatch,
    PatchProposal,
    ProposalStrategy,
    Risk,
    load_proposal,
    proposal_json_schema,
    unsupported_operations,
)

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "docs" / "proposal.schema.json"

MINIMAL = """
{"proposal_id": "p-1", "run_id": "r-1", "attempt_no": 1, "strategy": "UNIFIED_DIFF",
 "objective": "normalise usernames", "rationale": "login is case-sensitive today",
 "expected_files": ["src/users.py"], "forbidden_files": ["secrets/**"],
 "preconditions": [{"type": "FILE_HASH_MATCH", "path": "src/users.py", "value": "<sha256>"}],
 "operations": [{"type": "patch", "text": "<model output in any supported format>"},
                {"type": "direct_write", "path": "docs/users.md", "content": "...",
                 "expected_sha256": null, "allow_create": true}],
 "expected_postconditions": [{"type": "DIFF_MAX_FILES", "value": 3}, {"type": "NO_SECRET_ADDED"}],
 "verification_plan": {"profile": "unit"}, "risk": "LOW"}
"""

EVERY_FIELD: dict[str, Any] = {
    "proposal_id": "p-2",
    "run_id": "r-1",
    "attempt_no": 2,
    "strategy": "HYBRID",
    "objective": "o",
    "rationale": "r",
    "expected_files": ["src/**"],
    "forbidden_files": [".env"],
    "preconditions": [
        {"type": "FILE_HASH_MATCH", "path": "a", "value": "00"},
        {"type": "FILE_EXISTS", "path": "a"},
        {"type": "PATH_ALLOWED", "path": "a"},
        {"type": "BASE_COMMIT_MATCH", "value": "abcdef1"},
    ],
    "operations": [
        {"type": "patch", "text": "t", "format": "udiff"},
        {"type": "direct_write", "path": "a", "content": None, "allow_delete": True},
        {"type": "ast_transform", "recipe": "rename", "paths": ["src"], "params": {"n": 1}},
        {"type": "command", "profile": "npm-lock", "params": {"paths": ["a", "b"]}},
    ],
    "expected_postconditions": [
        {"type": kind}
        for kind in (
            "NO_FORBIDDEN_PATH_CHANGED",
            "NO_SECRET_ADDED",
            "NO_BINARY_CHANGED",
            "SYNTAX_VALID",
            "COMPILES",
            "TESTS_PASS",
        )
    ]
    + [{"type": "DIFF_MAX_FILES", "value": 3}, {"type": "DIFF_MAX_LINES", "value": 30}],
    "verification_plan": {"profile": "unit", "timeout_seconds": 60},
    "risk": "HIGH",
}


def _valid(source: object) -> PatchProposal:
    result = load_proposal(source)  # type: ignore[arg-type]
    assert isinstance(result, PatchProposal), result
    return result


def _invalid(source: object) -> PatchFailure:
    result = load_proposal(source)  # type: ignore[arg-type]
    assert isinstance(result, PatchFailure), result
    return result


class TestPatchProposal:
    def test_issue_minimal_example_validates(self) -> None:
        """The minimal example from the issue validates into typed parts."""
        proposal = _valid(MINIMAL)

        assert ProposalStrategy.UNIFIED_DIFF == proposal.strategy
        assert isinstance(proposal.preconditions[0], FileHashMatch)
        assert isinstance(proposal.operations[1], DirectWriteOperation)
        assert EditFormat.AUTO == proposal.operations[0].format  # type: ignore[union-attr]
        assert Risk.LOW == proposal.risk

    def test_every_field_validates(self) -> None:
        """A proposal using every variant of every union validates."""
        proposal = _valid(EVERY_FIELD)

        assert 4 == len(proposal.preconditions)
        assert 8 == len(proposal.expected_postconditions)
        assert ["patch", "direct_write", "ast_transform", "command"] == [
            op.type for op in proposal.operations
        ]

    def test_models_are_frozen(self) -> None:
        """Proposals cannot be changed after validation."""
        proposal = _valid(MINIMAL)

        with pytest.raises(ValueError):
            proposal.objective = "other"

    def test_round_trip_through_json(self) -> None:
        """Dumping to JSON and loading again gives an equal proposal."""
        proposal = _valid(EVERY_FIELD)

        assert proposal == _valid(proposal.model_dump_json())

    def test_unsupported_operations_are_refused_not_ignored(self) -> None:
        """AST-transform operations get NOT_SUPPORTED_YET; command operations run."""
        failures = unsupported_operations(_valid(EVERY_FIELD))

        assert [FailureCode.NOT_SUPPORTED_YET] == [f.code for f in failures]
        assert "operations[2]" in failures[0].message

    def test_supported_operations_pass(self) -> None:
        """Patch, direct-write and command operations are executable."""
        assert [] == unsupported_operations(_valid(MINIMAL))


class TestLoadProposal:
    def test_model_is_returned_as_is(self) -> None:
        """A PatchProposal passes through unchanged."""
        proposal = _valid(MINIMAL)

        assert proposal is load_proposal(proposal)

    def test_yaml_text(self) -> None:
        """YAML text is accepted."""
        text = yaml.safe_dump(json.loads(MINIMAL))

        assert _valid(MINIMAL) == _valid(text)

    def test_json_and_yaml_files(self, tmp_path: Path) -> None:
        """Paths to .json and .yaml files are read (as Path or str)."""
        (tmp_path / "p.json").write_text(MINIMAL, encoding="utf-8")
        (tmp_path / "p.yaml").write_text(yaml.safe_dump(json.loads(MINIMAL)), encoding="utf-8")

        assert _valid(tmp_path / "p.json") == _valid(str(tmp_path / "p.yaml"))

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing proposal file is FILE_NOT_FOUND."""
        assert FailureCode.FILE_NOT_FOUND == _invalid(tmp_path / "nope.json").code

    def test_unreadable_file(self, tmp_path: Path) -> None:
        """A file that is not UTF-8 is INVALID_PROPOSAL."""
        (tmp_path / "p.json").write_bytes(b"\xff\xfe{")

        assert FailureCode.INVALID_PROPOSAL == _invalid(tmp_path / "p.json").code

    def test_broken_syntax(self) -> None:
        """Text that is neither JSON nor YAML is INVALID_PROPOSAL."""
        failure = _invalid('{"proposal_id": [\n')

        assert FailureCode.INVALID_PROPOSAL == failure.code
        assert "neither valid JSON nor valid YAML" in failure.message

    def test_not_an_object(self) -> None:
        """A JSON list is not a proposal."""
        assert "got list" in _invalid("[1, 2]").message

    def test_errors_name_their_locations(self) -> None:
        """Validation errors list each pydantic location."""
        data = json.loads(MINIMAL)
        data["attempt_no"] = 0
        data["operations"][1]["content"] = None
        data["preconditions"][0]["type"] = "NOPE"
        data["surprise"] = True

        message = _invalid(data).message

        for location in ("attempt_no", "operations.1.direct_write", "preconditions.0", "surprise"):
            assert location in message
        assert "allow_delete" in message

    def test_delete_needs_null_content(self) -> None:
        """allow_delete with content is contradictory and refused."""
        data = json.loads(MINIMAL)
        data["operations"][1]["allow_delete"] = True

        assert "allow_delete needs content null" in _invalid(data).message

    def test_many_errors_are_bounded(self) -> None:
        """At most ten errors are spelled out."""
        data = {f"extra_{i}": i for i in range(15)}

        assert "more)" in _invalid(data).message

    @given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=4))
    def test_arbitrary_dicts_never_raise(self, data: dict[str, int]) -> None:
        """Any dict gives a proposal or a failure, never an exception."""
        assert isinstance(load_proposal(data), PatchProposal | PatchFailure)


class TestSchema:
    def test_committed_schema_is_current(self) -> None:
        """docs/proposal.schema.json equals the schema the code produces."""
        expected = schema_cli.schema_text(proposal_json_schema())

        assert expected == SCHEMA_FILE.read_text(encoding="utf-8")

    def test_schema_rejects_unknown_keys(self) -> None:
        """The schema says extra keys are not allowed."""
        schema = proposal_json_schema()

        assert False is schema["additionalProperties"]
        assert "operations" in schema["required"]  # type: ignore[operator]

    def test_schema_command_prints_schema(self) -> None:
        """`patchsmith schema` prints the committed schema and exits 0."""
        parser = argparse.ArgumentParser()
        schema_cli.register(parser.add_subparsers())
        args = parser.parse_args(["schema"])
        out = io.StringIO()

        with contextlib.redirect_stdout(out):
            code = args.func(args)

        assert 0 == code
        assert SCHEMA_FILE.read_text(encoding="utf-8") == out.getvalue()
