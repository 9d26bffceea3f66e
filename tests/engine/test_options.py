"""Each `EngineOptions` switch, on and off, and compat mode against default on known corruptions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from patchsmith.engine import EngineOptions, HunkResult, Mode, SkipReason, Strategy, apply_hunks

DEFAULT = EngineOptions.default()


def both(source: str, diff: str, **off: bool) -> tuple[HunkResult, HunkResult]:
    """The result with every switch on, then with the named switches off."""
    return apply_hunks(source, diff, options=DEFAULT), apply_hunks(
        source, diff, options=replace(DEFAULT, **off)
    )


def reasons(result: HunkResult) -> list[SkipReason | None]:
    return [o.reason for o in result.outcomes]


def strategies(result: HunkResult) -> list[Strategy | None]:
    return [o.strategy for o in result.outcomes]


class TestEngineOptions:
    def test_default_is_all_on(self) -> None:
        """Every switch is on by default."""
        assert all(vars(EngineOptions.default()).values())

    def test_compat_is_all_off(self) -> None:
        """Every switch is off in compat."""
        assert not any(vars(EngineOptions.compat()).values())

    def test_is_compat(self) -> None:
        """Only the all-off options are compat."""
        assert (True, False, False) == (
            EngineOptions.compat().is_compat,
            DEFAULT.is_compat,
            replace(EngineOptions.compat(), fuzzy_context=True).is_compat,
        )


class TestKeepLineEndings:
    def test_switch(self) -> None:
        """On: a CRLF file stays CRLF, added lines too. Off: the file comes back LF."""
        on, off = both("a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n+B2\n c\n", keep_line_endings=False)

        assert ("a\r\nB\r\nB2\r\nc\r\n", "a\nB\nB2\nc\n") == (on.text, off.text)


class TestHonourNoNewlineMarker:
    def test_switch(self) -> None:
        """On: a new-side marker drops the final newline. Off: the newline stays."""
        on, off = both(
            "a\nb\n",
            "@@\n a\n-b\n+c\n\\ No newline at end of file\n",
            honour_no_newline_marker=False,
        )

        assert ("a\nc", "a\nc\n") == (on.text, off.text)


class TestRequireUnique:
    def test_switch(self) -> None:
        """On: two equal places refuse. Off: the first is taken."""
        on, off = both("x\ny\nx\ny\n", "@@\n x\n-y\n+Y\n", require_unique=False)

        assert [SkipReason.AMBIGUOUS] == reasons(on)
        assert "x\nY\nx\ny\n" == off.text

    def test_fuzzy_switch(self) -> None:
        """Off: the first of two loosened places is taken too."""
        source = "def f():\n    x = 1\n    y = 2\n\ndef f():\n    z = 1\n    y = 2\n"
        diff = "@@\n def f():\n     q = 1\n-    y = 2\n+    y = 3\n"

        on, off = both(source, diff, require_unique=False)

        assert [SkipReason.AMBIGUOUS] == reasons(on)
        assert (
            "def f():\n    x = 1\n    y = 3\n"
            == off.text[: len("def f():\n    x = 1\n    y = 3\n")]
        )


class TestWholeLines:
    def test_switch(self) -> None:
        """On: a line that merely contains the old text is no match. Off: the substring changes."""
        on, off = both("prefix t = 1\nz\n", "@@\n-t = 1\n+t = 2\n", whole_lines=False)

        assert [SkipReason.NO_MATCH] == reasons(on)
        assert "prefix t = 2\nz\n" == off.text

    def test_fallback_that_finds_nothing(self) -> None:
        """Off: when the substring search finds nothing either, the refusal stands."""
        _, off = both("a\n", "@@\n-zzz\n+y\n", whole_lines=False)

        assert [SkipReason.NO_MATCH] == reasons(off)


class TestStripHunkEdgesOnly:
    DIFF = "@@\n \n \n a\n-b\n+B\n \n"

    def test_switch(self) -> None:
        """On: blank edges absent from the file are stripped. Off: loosened context places it."""
        on, off = both("a\nb\nc\n", self.DIFF, strip_hunk_edges_only=False)

        assert ([Strategy.DIRECT_STRIPPED], [Strategy.PARTIAL_CONTEXT]) == (
            strategies(on),
            strategies(off),
        )

    def test_off_without_fuzzy(self) -> None:
        """Off, with fuzzy context off as well: no match."""
        _, off = both("a\nb\nc\n", self.DIFF, strip_hunk_edges_only=False, fuzzy_context=False)

        assert [SkipReason.NO_MATCH] == reasons(off)


class TestIndentTolerant:
    def test_switch(self) -> None:
        """On: tab-indented hunk lines match a space file. Off: no match."""
        source = "def f():\n    a = 1\n    b = 2\n"

        on, off = both(
            source, "@@\n def f():\n \ta = 1\n-\tb = 2\n+\tb = 3\n", indent_tolerant=False
        )

        assert "def f():\n    a = 1\n    b = 3\n" == on.text
        assert [SkipReason.NO_MATCH] == reasons(off)

    def test_style_switch(self) -> None:
        """On: space-indented additions under unindented context join a tab file as tabs."""
        source = "f {\n\tx\n\ty\n\tz\n}\n"

        on, off = both(source, "@@\n }\n+g {\n+    y\n+}\n", indent_tolerant=False)

        assert (source + "g {\n\ty\n}\n", source + "g {\n    y\n}\n") == (on.text, off.text)


class TestRelativeIndent:
    DIFF = "@@\n def f(self):\n-    return 1\n+    x = 2\n+    return x\n"
    SOURCE = "class A:\n    def f(self):\n        return 1\n"
    TARGET = "class A:\n    def f(self):\n        x = 2\n        return x\n"

    def test_switch(self) -> None:
        """On: a hunk missing its class indentation is RELATIVE_INDENT. Off: columns place it."""
        on, off = both(self.SOURCE, self.DIFF, relative_indent=False)

        assert (self.TARGET, [Strategy.RELATIVE_INDENT]) == (on.text, strategies(on))
        assert [Strategy.INDENT_TOLERANT] == strategies(off)

    def test_off_with_columns_off(self) -> None:
        """Off, with column tolerance off too: no match."""
        _, off = both(self.SOURCE, self.DIFF, relative_indent=False, indent_tolerant=False)

        assert [SkipReason.NO_MATCH] == reasons(off)


class TestFoldPunctuation:
    def test_switch(self) -> None:
        """On: curly-quoted old lines match straight quotes. Off: refused."""
        on, off = both("s = 'q'\nx\n", "@@\n-s = ‘q’\n+s = 'r'\n", fold_punctuation=False)

        assert "s = 'r'\nx\n" == on.text
        assert [SkipReason.NO_MATCH] == reasons(off)


class TestWhitespaceTolerant:
    def test_switch(self) -> None:
        """On: trailing whitespace in the file is tolerated. Off: refused."""
        on, off = both("a  \nb\n", "@@\n-a\n+A\n b\n", whitespace_tolerant=False)

        assert "A\nb\n" == on.text
        assert [SkipReason.NO_MATCH] == reasons(off)


class TestFuzzyContext:
    def test_switch(self) -> None:
        """On: a dropped context line is tolerated. Off: refused."""
        source = "def f():\n    a = 1\n    b = 2\n    return b\n"
        diff = "@@\n def f():\n-    b = 2\n+    b = 3\n     return b\n"

        on, off = both(source, diff, fuzzy_context=False)

        assert "def f():\n    a = 1\n    b = 3\n    return b\n" == on.text
        assert [SkipReason.NO_MATCH] == reasons(off)


class TestLineNumberTiebreak:
    def test_switch(self) -> None:
        """On: the line number picks the second of two places. Off: ambiguous."""
        diff = "--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n x\n-y\n+Y\n"

        on, off = both("x\ny\nx\ny\n", diff, line_number_tiebreak=False)

        assert "x\ny\nx\nY\n" == on.text
        assert [SkipReason.AMBIGUOUS] == reasons(off)


class TestCompatAgainstDefault:
    @pytest.mark.parametrize(
        ("source", "diff", "compat", "default"),
        [
            pytest.param(
                "a\r\nb\r\nc\r\n",
                "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
                "a\nB\nc\n",
                "a\r\nB\r\nc\r\n",
                id="crlf-file",
            ),
            pytest.param(
                "\n\nhead\nfoo\n\n\n",
                "@@ -4,3 +4,2 @@\n \n foo\n-\n+bar\n \n",
                "head\nfoo\nbar\n",
                "\n\nhead\nfoo\nbar\n\n",
                id="whole-file-trimmed",
            ),
            pytest.param(
                "xt = 1\nt = 1\n",
                "@@ -2 +2 @@\n-t = 1\n+t = 2\n",
                "xt = 2\nt = 1\n",
                "xt = 1\nt = 2\n",
                id="substring-not-line",
            ),
            pytest.param(
                "a\nb",
                "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
                "\\ No newline at end of file\n",
                "a\nc\n",
                "a\nc",
                id="no-newline-marker-ignored",
            ),
            pytest.param(
                "class A:\n    def f(self):\n        return 1\n",
                "@@ -1,3 +1,4 @@\n def f(self):\n-    return 1\n+    x = 2\n+    return x\n",
                "class A:\n    def f(self):\n        x = 2\n    return x\n",
                "class A:\n    def f(self):\n        x = 2\n        return x\n",
                id="indentation-drift",
            ),
        ],
    )
    def test_compat_corrupts_default_is_right(
        self, source: str, diff: str, compat: str, default: str
    ) -> None:
        """The reference's known corruption happens in compat mode; default gets it right."""
        text = f"--- f\n+++ f\n{diff}"

        results = (apply_hunks(source, text, mode=Mode.COMPAT), apply_hunks(source, diff))

        assert (compat, default) == (results[0].text, results[1].text)
        assert results[1].ok

    def test_first_occurrence_ambiguity(self) -> None:
        """Compat changes the first of two equal places; default refuses and names both."""
        source = "value = 1\nother\nvalue = 1\n"
        diff = "@@\n-value = 1\n+value = 2\n"

        compat = apply_hunks(source, f"--- f\n+++ f\n{diff}", mode="compat")
        default = apply_hunks(source, diff)

        assert "value = 2\nother\nvalue = 1\n" == compat.text
        assert (source, (1, 3)) == (default.text, default.outcomes[0].candidates)
