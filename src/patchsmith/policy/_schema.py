"""pydantic models of the policy's tables, made from the dataclasses in `patchsmith.policy`.

The dataclasses are the one definition of the policy: their fields, types, defaults and
docstrings, with each field's constraints in its `metadata` (keyword arguments of
pydantic's `Field`). This module turns each into a pydantic model of the same name, once
per process, and validates with it: a policy file's table, or the values a `Policy(...)`
was made with that are not the defaults. So the messages, the error locations
(`guards.secretz`) and the JSON Schema are pydantic's, as when the tables were pydantic
models, while a workspace without a policy file never imports pydantic
(docs/decisions/0027).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

__all__ = ["dumped", "model_of", "validated_fields", "validated_table"]

T = TypeVar("T")

_CONFIG = ConfigDict(extra="forbid", frozen=True)


def _patterns_compile(
    check: Callable[[tuple[str, ...]], None],
) -> Callable[[type[BaseModel], tuple[str, ...]], tuple[str, ...]]:
    """The validator of a table's pattern fields; the table says how to check them, so this
    module needs no import of the tables (they import it, to validate)."""

    def _patterns_compile(cls: type[BaseModel], patterns: tuple[str, ...]) -> tuple[str, ...]:
        check(patterns)
        return patterns

    return _patterns_compile


@dataclass(frozen=True)
class _Schema:
    """A table's pydantic model, and which of its fields hold nested tables (and of what type)."""

    model: type[BaseModel]
    nested: dict[str, type]


_SCHEMAS: dict[type, _Schema] = {}
"""Made once per table: a `Policy(...)` in a loop validates without rebuilding anything."""


def model_of(table: type) -> type[BaseModel]:
    """The pydantic model of the dataclass `table`: same name, fields, defaults, docstring."""
    return _schema(table).model


def _schema(table: type) -> _Schema:
    if table in _SCHEMAS:
        return _SCHEMAS[table]
    hints = typing.get_type_hints(table)
    definitions: dict[str, Any] = {}
    nested: dict[str, type] = {}
    for spec in dataclasses.fields(table):
        hint = hints[spec.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            inner = model_of(hint)
            definitions[spec.name] = (inner, Field(default=inner()))
            nested[spec.name] = hint
            continue
        options: dict[str, Any] = {"default": spec.default, **spec.metadata}
        if hint is bool:
            options["strict"] = True  # TOML has real booleans: `1` or `"yes"` is a mistake
        definitions[spec.name] = (hint, Field(**options))
    validators: dict[str, Any] = {}
    patterns: tuple[str, ...] = getattr(table, "PATTERN_FIELDS", ())
    if patterns:
        check = _patterns_compile(table.check_patterns)  # type: ignore[attr-defined]
        validators["_patterns_compile"] = field_validator(*patterns)(check)
    model: type[BaseModel] = create_model(
        table.__name__,
        __config__=_CONFIG,
        __doc__=table.__doc__,
        __module__=table.__module__,
        __validators__=validators,
        **definitions,
    )
    _SCHEMAS[table] = _Schema(model, nested)
    return _SCHEMAS[table]


def validated_table(table: type[T], data: object) -> T:
    """The dataclass `table` made from the mapping `data`; `ValidationError` if it cannot be."""
    return typing.cast(T, _converted(model_of(table).model_validate(data), table))


def validated_fields(table: type, given: Mapping[str, object]) -> dict[str, object]:
    """`given` (field name to value, as passed to `table(...)`) validated and converted.

    A nested table that already is its dataclass was validated when it was made, so it
    is kept as it is; anything else (a mapping, a list, a string for an enum) is checked
    by the model and converted to the field's type.
    """
    schema = _schema(table)
    kept = {n: v for n, v in given.items() if isinstance(v, schema.nested.get(n, ()))}
    checked = schema.model.model_validate({n: v for n, v in given.items() if n not in kept})
    converted = {n: _value(schema, n, getattr(checked, n)) for n in given if n not in kept}
    return {**kept, **converted}


def dumped(table: Any, *, mode: Literal["python", "json"]) -> dict[str, Any]:
    """The fields of the dataclass `table` as a dict (nested tables as dicts)."""
    fields: dict[str, Any] = dataclasses.asdict(table)
    if mode == "python":
        return fields
    return model_of(type(table)).model_validate(fields).model_dump(mode=mode)


def _converted(model: BaseModel, table: type) -> object:
    """The dataclass `table` holding the validated `model`'s values."""
    schema = _schema(table)
    return table(**{n: _value(schema, n, getattr(model, n)) for n in type(model).model_fields})


def _value(schema: _Schema, name: str, value: object) -> object:
    # A nested model becomes its table's dataclass (the field's type); the rest is kept.
    if name in schema.nested and isinstance(value, BaseModel):
        return _converted(value, schema.nested[name])
    return value
