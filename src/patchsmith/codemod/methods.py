"""`MethodPattern`: a Java method as `declaring.Type method(argTypes)` (OpenRewrite's matcher).

`com.acme.ids.LegacyIdGenerator generate()` is the method without parameters;
`generate(java.lang.String)` the one taking a string (a `java.lang` type may be written
by its simple name); `*` stands for any one argument type and `..` for any number of
them (`generate(..)`, `format(java.lang.String, ..)`). Parameter types are compared
erased (`java.util.List`, not `List<String>`), arrays as `int[]`, varargs `T...` as `T[]`;
a nested type as `pkg.Outer.Inner` (`pkg.Outer$Inner` is read the same).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANY", "ANY_NUMBER", "MethodPattern", "parse_method_pattern"]

ANY = "*"
ANY_NUMBER = ".."

_PRIMITIVES = frozenset(("boolean", "byte", "char", "short", "int", "long", "float", "double"))
_JAVA_LANG = frozenset(
    (
        "Object",
        "String",
        "CharSequence",
        "Boolean",
        "Byte",
        "Character",
        "Short",
        "Integer",
        "Long",
        "Float",
        "Double",
        "Number",
        "Class",
        "Iterable",
        "Runnable",
        "Throwable",
        "Exception",
        "RuntimeException",
        "StringBuilder",
        "Enum",
        "Void",
    )
)
"""`java.lang` types a pattern may name by their simple name (as OpenRewrite allows)."""


@dataclass(frozen=True)
class MethodPattern:
    """A declaring type, a method name and the parameter types (`None`: not written, any)."""

    declaring: str
    name: str
    params: tuple[str, ...]

    @property
    def any_arity(self) -> bool:
        return ANY_NUMBER in self.params

    def fits_arity(self, count: int) -> bool:
        """Whether a call with `count` arguments can match (all a syntactic reading can tell)."""
        fixed = len([p for p in self.params if p != ANY_NUMBER])
        return count >= fixed if self.any_arity else count == fixed

    def matches(self, declaring: str, name: str, params: tuple[str, ...] | list[str]) -> bool:
        """Whether the method `declaring.name(params)` (qualified, erased types) is this one."""
        return (
            declaring == self.declaring
            and name == self.name
            and _fit(self.params, tuple(p.replace("$", ".") for p in params))
        )

    def __str__(self) -> str:
        return f"{self.declaring} {self.name}({', '.join(self.params)})"


def _fit(pattern: tuple[str, ...], actual: tuple[str, ...]) -> bool:
    if not pattern:
        return not actual
    head, rest = pattern[0], pattern[1:]
    if head == ANY_NUMBER:
        return any(_fit(rest, actual[skip:]) for skip in range(len(actual) + 1))
    if not actual:
        return False
    return (head == ANY or head == actual[0]) and _fit(rest, actual[1:])


def parse_method_pattern(value: str) -> MethodPattern:
    """`pkg.Class method(argTypes)` as a `MethodPattern`; ValueError for any other shape."""
    expected = f"expected 'package.Class method(argTypes)', got {value!r}"
    declaring, _, rest = value.strip().partition(" ")
    rest = rest.strip()
    if not rest.endswith(")") or "(" not in rest:
        raise ValueError(expected)
    name, _, args = rest[:-1].partition("(")
    name = name.strip()
    declaring = declaring.replace("$", ".")
    if (
        "." not in declaring
        or not all(p.isidentifier() for p in declaring.split("."))
        or not name.isidentifier()
    ):
        raise ValueError(expected)
    params = tuple(_param(a.strip(), expected) for a in args.split(",")) if args.strip() else ()
    return MethodPattern(declaring, name, params)


def _param(text: str, expected: str) -> str:
    if text in (ANY, ANY_NUMBER):
        return text
    dims = ""
    while text.endswith(("[]", "...")):
        text = text[:-2].rstrip() if text.endswith("[]") else text[:-3].rstrip()
        dims += "[]"
    text = text.replace("$", ".")
    if not text or not all(p.isidentifier() for p in text.split(".")):
        raise ValueError(expected)
    if "." not in text and text not in _PRIMITIVES:
        if text not in _JAVA_LANG:
            raise ValueError(f"{expected}: write parameter type {text!r} fully qualified")
        text = f"java.lang.{text}"
    return text + dims
