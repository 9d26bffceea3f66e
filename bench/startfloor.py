"""The floor under a cold `patchsmith apply --check` while its records stay dataclasses.

`bench/cli_start.py` runs this module in fresh processes, kept apart from it so that such a
process imports nothing but what it measures. Two steps:

- `probe(out, argv)` runs `patchsmith ARGV` in this process, then writes to `out` the
  standard-library modules it loaded (first line, in load order) and the shape of every
  dataclass defined by the patchsmith modules it loaded (the rest, JSON): its options and
  its fields' options.
- `floor(spec, with_dataclasses)` imports those standard-library modules and nothing else,
  then, asked to, builds a class of each shape again through `dataclasses.dataclass`, with
  the same options and fields (every annotation a string, as in patchsmith's modules, which
  use `from __future__ import annotations`). What that costs is Python's start, the library
  the check needs and the code generation of its records, with none of patchsmith's own
  code: no faster `apply --check` is possible as long as they are what it uses.
"""

from __future__ import annotations

import sys
from typing import Any

PACKAGE = "patchsmith"


def probe(out: str, argv: list[str]) -> None:
    """Run `patchsmith argv` here, then write what it loaded to `out`."""
    from patchsmith.cli import console

    console(argv)
    loaded = list(sys.modules)
    import json

    stdlib = [name for name in loaded if name.split(".")[0] in sys.stdlib_module_names]
    shapes = [
        shape_of(cls)
        for name in loaded
        if name == PACKAGE or name.startswith(PACKAGE + ".")
        for cls in defined_dataclasses(sys.modules[name])
    ]
    with open(out, "w", encoding="utf-8") as file:
        file.write(" ".join(stdlib) + "\n" + json.dumps(shapes))


def defined_dataclasses(module: object) -> list[type]:
    """The dataclasses `module` defines (not the ones it imports)."""
    name = getattr(module, "__name__", "")
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == name
        and "__dataclass_fields__" in value.__dict__
    ]


def shape_of(cls: type) -> dict[str, Any]:
    """A dataclass's options and its fields', enough to build one like it."""
    import dataclasses

    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    fields = []
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            default = "value"
        elif field.default_factory is not dataclasses.MISSING:
            default = "factory"
        else:
            default = "none"
        fields.append(
            {
                "name": field.name,
                "default": default,
                "init": field.init,
                "repr": field.repr,
                "compare": field.compare,
                "hash": field.hash,
                "kw_only": field.kw_only,
            }
        )
    return {
        "name": cls.__qualname__,
        "init": params.init,
        "repr": params.repr,
        "eq": params.eq,
        "order": params.order,
        "unsafe_hash": params.unsafe_hash,
        "frozen": params.frozen,
        "slots": "__slots__" in cls.__dict__,
        "match_args": "__match_args__" in cls.__dict__,
        "fields": fields,
    }


def build(shape: dict[str, Any]) -> type:
    """A new dataclass of `shape`: the same options and fields, annotated `"object"`."""
    import dataclasses

    annotations: dict[str, str] = {}
    namespace: dict[str, Any] = {"__module__": __name__, "__qualname__": shape["name"]}
    for field in shape["fields"]:
        annotations[field["name"]] = "object"
        options = {key: field[key] for key in ("init", "repr", "compare", "hash", "kw_only")}
        if field["default"] == "value":
            options["default"] = None
        elif field["default"] == "factory":
            options["default_factory"] = tuple
        namespace[field["name"]] = dataclasses.field(**options)
    namespace["__annotations__"] = annotations
    cls = type(shape["name"].rpartition(".")[2], (), namespace)
    return dataclasses.dataclass(  # type: ignore[call-overload,no-any-return]
        cls,
        init=shape["init"],
        repr=shape["repr"],
        eq=shape["eq"],
        order=shape["order"],
        unsafe_hash=shape["unsafe_hash"],
        frozen=shape["frozen"],
        match_args=shape["match_args"],
        slots=shape["slots"],
    )


def read_spec(spec: str) -> tuple[list[str], str]:
    """A probe's standard-library modules, and its dataclasses' shapes as JSON text (read
    with no import, so that the floor loads nothing the check did not)."""
    with open(spec, encoding="utf-8") as file:
        return file.readline().split(), file.read()


def floor(spec: str, with_dataclasses: bool) -> int:
    """Import the probed standard-library modules, then build the dataclasses if asked;
    the number of classes built."""
    modules, shapes = read_spec(spec)
    for name in modules:
        try:
            __import__(name)
        except ImportError:  # a module only its own platform or build provides
            continue
    if not with_dataclasses:
        return 0
    import json  # among the modules above: the check loads it

    built = json.loads(shapes)
    for shape in built:
        build(shape)
    return len(built)


def main(argv: list[str]) -> None:
    """`probe OUT ARGS...` or `floor SPEC [--dataclasses]`."""
    if argv[0] == "probe":
        probe(argv[1], argv[2:])
    else:
        floor(argv[1], "--dataclasses" in argv[2:])


if __name__ == "__main__":
    main(sys.argv[1:])
