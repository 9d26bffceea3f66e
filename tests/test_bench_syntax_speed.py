"""`bench/syntax_speed.py` on small inputs: its edits pass or are refused as it says, and
both ways of judging them agree."""

from __future__ import annotations

import ast

from bench import syntax_speed


class TestSyntaxSpeedBench:
    def test_generated_file_is_python_of_the_size_asked(self) -> None:
        text = syntax_speed.generated(2_000)

        ast.parse(text)
        assert 2_000 <= text.count("\n") < 2_100

    def test_edits_keep_or_break_the_file(self) -> None:
        text = syntax_speed.generated(500)
        first = syntax_speed.edited("a.py", text, 0)
        broken = syntax_speed.edited("a.py", first, 1, breaking=True)

        ast.parse(first)
        assert first.count("\n") == text.count("\n") + 1
        assert broken != first

    def test_measure_agrees_every_way(self) -> None:
        """The three columns judge the same edit; a passing and a refused one."""
        text = syntax_speed.generated(600)
        passing = syntax_speed.measure(syntax_speed.Case("p", "a.py", text), 1)
        refused = syntax_speed.measure(syntax_speed.Case("r", "a.py", text, breaking=True), 1)

        assert 0 == passing[3] and 1 == refused[3]
        assert min(passing[:3]) > 0

    def test_javascript_and_declaration_files(self) -> None:
        js = "".join(f"function f{n}(x) {{\n  return x + {n};\n}}\n" for n in range(20))
        dts = "".join(f"export declare function f{n}(x: number): number;\n" for n in range(20))

        assert "let benchValue0;" in syntax_speed.edited("a.js", js, 0)
        assert "let benchValue0: number;" in syntax_speed.edited("a.ts", dts, 0)
        assert 0 == syntax_speed.measure(syntax_speed.Case("js", "a.js", js), 1)[3]
