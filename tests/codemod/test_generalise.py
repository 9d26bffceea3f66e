"""`recipe new`'s rule: the call that changed, its carried-over arguments as metavariables."""

from __future__ import annotations

import pytest

from patchsmith.codemod.generalise import generalised_rule


@pytest.mark.parametrize(
    ("suffix", "before", "after", "rule"),
    [
        (
            ".py",
            "x = 1\ntotal = compute(a, b)  # c\n",
            "x = 1\ntotal = calculate(a, b)  # c\n",
            ("compute($$$ARGS)", "calculate($$$ARGS)"),
        ),
        (
            ".py",
            "t = compute(a, b)\n",
            "t = compute(b, a, strict=True)\n",
            ("compute($ARG1, $ARG2)", "compute($ARG2, $ARG1, strict=True)"),
        ),
        (
            ".java",
            'class A { void f() { long id = LegacyIdGenerator.generate("p"); } }\n',
            'class A { void f() { long id = IdGenerator.nextId("p"); } }\n',
            ("LegacyIdGenerator.generate($$$ARGS)", "IdGenerator.nextId($$$ARGS)"),
        ),
        (
            ".js",
            "const b = new Buffer(size);\n",
            "const b = Buffer.alloc(size);\n",
            ("new Buffer($$$ARGS)", "Buffer.alloc($$$ARGS)"),
        ),
        (".py", "go()\n", "go(1)\n", ("go()", "go(1)")),
    ],
)
def test_the_call_that_changed(suffix: str, before: str, after: str, rule: tuple[str, str]) -> None:
    """The smallest call holding the change, arguments carried over as metavariables."""
    assert rule == generalised_rule(suffix, before, after)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x = 1\n", "x = 2\n"),  # no call holds the change
        ("f(a)\n", "f(a)\n"),  # no change
        ("f(a\n", "g(a\n"),  # does not parse
        ("f(a)\ng(b)\n", "h(a)\nk(b)\n"),  # two calls changed: no single one holds it
    ],
)
def test_none_without_one_call(before: str, after: str) -> None:
    """`None` (the caller keeps the changed lines) when no single parsed call holds it."""
    assert generalised_rule(".py", before, after) is None


def test_unknown_language_is_none() -> None:
    """A suffix no grammar reads gives no rule."""
    assert generalised_rule(".cobol", "f(a)\n", "g(a)\n") is None
