"""pydantic models of the policy's tables, made from the dataclasses in `patchsmith.policy`.

The dataclasses are the one definition of the policy: their fields, types, defaults and
docstrings, with each field's constraints in its `metadata` (keyword arguments of
pydantic's `Field`). This module turns each into a pydantic model of the same name, once
per process, and validates with it: a policy file's table, or the values a `Policy(...)`
was made with that are not the defaults. So the messages, the error locations
(`guards.secretz`) and the JSON Schema are pydantic's, as when the tables were pydantic
models, while a workspace without a policy file never imports pydantic
(docs/decisions/0025).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from patchsmith.policy import PATTERN_FIELDS, Policy, check_patterns

__all__ = ["dumped", "model_of", "validated_fields", "validated_table"]

T = TypeVar("T")

_CONFIG = ConfigDict(extra="forbid", frozen=True)


def _patterns_compile(cls: type[BaseModel], patterns: tuple[str, ...]) -> tuple[str, ...]:
    check_patterns(patterns)
    return patterns


_MODELS: dict[type, type[BaseModel]] = {}


def model_of(table: type) -> type[BaseModel]:
    """The pydantic model of the dataclass `table`: same name, fields, defaults, docstring."""
    if table in _MODELS:
        return _MODELS[table]
    hints = typing.get_type_hints(table)
    definitions: dict[str, Any] = {}
    for spec in dataclasses.fields(table):
        hint = hints[spec.name]
        if dataclasses.is_dataclass(hint):
            nested = model_of(typing.cast(type, hint))
            definitions[spec.name] = (nested, Field(default=nested()))
            continue
        options: dict[str, Any] = {"default": spec.default, **spec.metadata}
        if hint is bool:
            options["strict"] = True  # TOML has real booleans: `1` or `"yes"` is a mistake
        definitions[spec.name] = (hint, Field(**options))
    validators: dict[str, Any] = {}
    if table is Policy:
        validators["_patterns_compile"] = field_validator(*PATTERN_FIELDS)(_patterns_compile)
    model: type[BaseModel] = create_model(
        table.__name__,
        __config__=_CONFIG,
        __doc__=table.__doc__,
        __module__=table.__module__,
        __validators__=validators,
        **definitions,
    )
    _MODELS[table] = model
    return model


def validated_table(table: type[T], data: object) -> T:
    """The dataclass `table` made from the mapping `data`; `ValidationError` if it cannot be."""
    return typing.cast(T, _converted(model_of(table).model_validate(data), table))


def validated_fields(table: type, given: Mapping[str, object]) -> dict[str, object]:
    """`given` (field name to value, as passed to `table(...)`) validated and converted.

    A nested table that already is its dataclass was validated when it was made, so it
    is kept as it is; anything else (a mapping, a list, a string for an enum) is checked
    by the model and converted to the field's type.
    """
    nested = {f.name: type(f.default) for f in dataclasses.fields(table) if _is_table(f.default)}
    kept = {name: v for name, v in given.items() if isinstance(v, nested.get(name, ()))}
    checked = model_of(table).model_validate({n: v for n, v in given.items() if n not in kept})
    hints = typing.get_type_hints(table)
    converted = {
        name: _value(getattr(checked, name), hints[name]) for name in given if name not in kept
    }
    return {**kept, **converted}


def dumped(table: Any, *, mode: Literal["python", "json"]) -> dict[str, Any]:
    """The fields of the dataclass `table` as a dict (nested tables as dicts)."""
    fields: dict[str, Any] = dataclasses.asdict(table)
    if mode == "python":
        return fields
    return model_of(type(table)).model_validate(fields).model_dump(mode=mode)


def _is_table(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _converted(model: BaseModel, table: type) -> object:
    """The dataclass `table` holding the validated `model`'s values."""
    hints = typing.get_type_hints(table)
    names = type(model).model_fields
    return table(**{name: _value(getattr(model, name), hints[name]) for name in names})


def _value(value: object, hint: object) -> object:
    # A nested model becomes its table's dataclass (the field's type); the rest is kept.
    if isinstance(value, BaseModel) and isinstance(hint, type):
        return _converted(value, hint)
    return value
