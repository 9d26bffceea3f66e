"""The policy's tables are frozen dataclasses that pydantic validates (docs/decisions/0027).

What the tables promise: the defaults need no validation (so no pydantic), any other
value is validated and converted by pydantic exactly as when the tables were pydantic
models (same messages, locations and JSON Schema), and a policy file's table goes
through the same validation.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.policy import (
    DependencyMode,
    DependencyPolicy,
    GuardSwitches,
    LicencePolicy,
    OwnershipMode,
    OwnershipPolicy,
    Policy,
    ReviewPolicy,
    StrategyCheck,
    load_policy,
)
from patchsmith.policy._schema import model_of

TABLES = (GuardSwitches, ReviewPolicy, DependencyPolicy, LicencePolicy, OwnershipPolicy, Policy)


def _modules_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    found: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _errors(exc: ValidationError) -> list[tuple[str, str]]:
    return [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in exc.errors()]


class TestDefaults:
    def test_defaults_load_no_pydantic(self, tmp_path: Path) -> None:
        """`Policy()`, its tables and a workspace without a policy file never import pydantic."""
        code = (
            "from patchsmith.policy import Policy, load_policy\n"
            f"assert load_policy({str(tmp_path)!r}) == Policy()\n"
        )
        modules = _modules_after(code)

        assert [] == [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")]
        assert "patchsmith.policy._schema" not in modules

    def test_a_policy_file_is_validated_by_pydantic(self, tmp_path: Path) -> None:
        """A table that sets something goes through the pydantic model."""
        (tmp_path / "patchsmith.toml").write_text("[policy]\nmax_files = 2\n", encoding="utf-8")
        code = f"from patchsmith.policy import load_policy\nload_policy({str(tmp_path)!r})"

        assert "pydantic" in _modules_after(code)

    def test_an_empty_table_is_the_defaults_without_pydantic(self, tmp_path: Path) -> None:
        """`[policy]` with nothing in it is the defaults; nothing to validate."""
        (tmp_path / "patchsmith.toml").write_text("[policy]\n", encoding="utf-8")
        code = f"from patchsmith.policy import load_policy\nload_policy({str(tmp_path)!r})"

        assert "pydantic" not in _modules_after(code)

    @pytest.mark.parametrize("table", TABLES, ids=lambda t: t.__name__)
    def test_defaults_equal_the_models_defaults(self, table: type[Any]) -> None:
        """Each table's defaults are what its pydantic model validates `{}` into."""
        assert table() == table.model_validate({})
        assert table().model_dump(mode="json") == model_of(table)().model_dump(mode="json")


class TestConstruction:
    def test_other_values_are_validated(self) -> None:
        """A value that breaks a constraint raises pydantic's ValidationError, as before."""
        with pytest.raises(ValidationError) as caught:
            Policy(max_files=-1)

        assert [("max_files", "Input should be greater than or equal to 0")] == _errors(
            caught.value
        )
        assert "1 validation error for Policy" in str(caught.value)

    def test_values_are_converted_to_the_fields_types(self) -> None:
        """Lists become tuples, strings enums, mappings nested tables."""
        policy = Policy(
            include=["src/**"],  # type: ignore[arg-type]
            strategy_check="refuse",  # type: ignore[arg-type]
            guards={"syntax": False},  # type: ignore[arg-type]
            dependencies={"mode": "report", "allowed": ["a"]},  # type: ignore[arg-type]
        )

        assert ("src/**",) == policy.include
        assert StrategyCheck.REFUSE is policy.strategy_check
        assert GuardSwitches(syntax=False) == policy.guards
        assert DependencyPolicy(mode=DependencyMode.REPORT, allowed=("a",)) == policy.dependencies

    def test_booleans_are_strict(self) -> None:
        """`1` is not `true`: a switch must be a boolean."""
        with pytest.raises(ValidationError, match="Input should be a valid boolean"):
            GuardSwitches(syntax=1)  # type: ignore[arg-type]

    def test_a_nested_table_of_the_wrong_type_is_refused(self) -> None:
        """A table where another is expected names the one expected."""
        with pytest.raises(ValidationError, match="instance of GuardSwitches"):
            Policy(guards=ReviewPolicy())  # type: ignore[arg-type]

    def test_a_bad_pattern_is_a_validation_error(self) -> None:
        """A pattern the pattern library cannot compile is refused, naming it."""
        with pytest.raises(ValidationError, match=r"bad pattern '\[z-a\]'"):
            Policy(forbidden=("ok/", "[z-a]"))

    def test_tables_are_frozen_and_hashable(self) -> None:
        """A policy is a value: it cannot change after it is made, and it can be a key."""
        policy = Policy(max_files=3)

        with pytest.raises(dataclasses.FrozenInstanceError):
            policy.max_files = 4  # type: ignore[misc]
        assert {policy: 1}[Policy(max_files=3)] == 1

    def test_an_unknown_keyword_is_a_type_error(self) -> None:
        """Made in code, an unknown field is Python's TypeError (a policy file's gets a
        message naming the key, below)."""
        with pytest.raises(TypeError, match="max_filez"):
            Policy(max_filez=3)  # type: ignore[call-arg]

    def test_model_copy_replaces_and_validates(self) -> None:
        """`model_copy(update=...)` (kept from the pydantic tables) replaces fields."""
        policy = Policy(max_files=3)

        assert 5 == policy.model_copy(update={"max_files": 5}).max_files
        with pytest.raises(ValidationError):
            policy.model_copy(update={"max_files": -5})

    @given(
        st.fixed_dictionaries(
            {},
            optional={
                "include": st.lists(st.sampled_from(["src/**", "*.py", "docs/"]), max_size=3),
                "max_files": st.one_of(st.none(), st.integers(0, 50)),
                "max_file_bytes": st.integers(1, 10**9),
                "record": st.booleans(),
                "strategy_check": st.sampled_from([s.value for s in StrategyCheck]),
                "guards": st.dictionaries(
                    st.sampled_from([f.name for f in dataclasses.fields(GuardSwitches)]),
                    st.booleans(),
                ),
                "review": st.fixed_dictionaries(
                    {}, optional={"max_lost_comments": st.one_of(st.none(), st.integers(0, 9))}
                ),
                "ownership": st.fixed_dictionaries(
                    {},
                    optional={
                        "owner": st.lists(st.sampled_from(["@a", "@b/c"]), max_size=2),
                        "mode": st.sampled_from([m.value for m in OwnershipMode]),
                    },
                ),
            },
        )
    )
    def test_a_table_round_trips(self, table: dict[str, Any]) -> None:
        """Validated from a mapping, dumped as JSON, validated again: the same policy,
        equal to the one made from the same values in code."""
        policy = Policy.model_validate(table)

        assert policy == Policy.model_validate(policy.model_dump(mode="json"))
        assert policy == Policy(**table)
        assert isinstance(policy.guards, GuardSwitches)
        assert isinstance(policy.review, ReviewPolicy)


class TestSchema:
    @pytest.mark.parametrize("table", TABLES, ids=lambda t: t.__name__)
    def test_the_model_mirrors_the_dataclass(self, table: type[Any]) -> None:
        """Same name, same fields in the same order, same docstring, no extra keys."""
        model = model_of(table)
        schema = table.model_json_schema()

        assert table.__name__ == model.__name__ == schema["title"]
        assert [f.name for f in dataclasses.fields(table)] == list(model.model_fields)
        assert table.__doc__ == schema["description"]
        assert schema["additionalProperties"] is False

    def test_the_schema_keeps_its_constraints(self) -> None:
        """Each field's constraints come from its metadata."""
        properties = Policy.model_json_schema()["properties"]

        assert 1 == properties["max_file_bytes"]["minimum"]
        assert {"minimum": 0, "type": "integer"} in properties["max_files"]["anyOf"]
        review = Policy.model_json_schema()["$defs"]["ReviewPolicy"]["properties"]
        assert 0 == review["min_changed_lines"]["minimum"]


class TestPolicyFiles:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("[policy]\nmax_filez = 3\n", "max_filez: Extra inputs are not permitted"),
            ("[policy.guards]\nsecretz = false\n", "guards.secretz: Extra inputs are not"),
            ("[policy.guards]\nsyntax = 1\n", "guards.syntax: Input should be a valid boolean"),
            ('[policy]\nforbidden = "x"\n', "forbidden: Input should be a valid tuple"),
            ('[policy.ownership]\nmode = "x"\n', "ownership.mode: Input should be 'refuse' or"),
            ('[policy]\ninclude = ["[z-a]"]\n', "include: Value error, bad pattern '[z-a]'"),
        ],
    )
    def test_messages_name_the_key(self, tmp_path: Path, text: str, message: str) -> None:
        """INVALID_POLICY names the key and says what is wrong, in pydantic's words."""
        (tmp_path / "patchsmith.toml").write_text(text, encoding="utf-8")

        failure = load_policy(tmp_path)

        assert isinstance(failure, PatchFailure)
        assert FailureCode.INVALID_POLICY is failure.code
        assert message in failure.message

    def test_a_file_gives_the_dataclasses(self, tmp_path: Path) -> None:
        """What a file describes is the same frozen dataclasses code makes."""
        (tmp_path / "pyproject.toml").write_text(
            '[tool.patchsmith.policy]\nforbidden = ["a/"]\n'
            "[tool.patchsmith.policy.licence]\nheader_lines = 3\n",
            encoding="utf-8",
        )

        policy = load_policy(tmp_path)

        assert Policy(forbidden=("a/",), licence=LicencePolicy(header_lines=3)) == policy
        assert isinstance(policy, Policy) and isinstance(policy.licence, LicencePolicy)
