"""Property: the clean rendering of `a -> b` in every format, applied to a workspace holding `a`,
gives exactly `b` (or, where the format cannot say where the edit goes, a clean refusal)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from tests.render_formats import RENDERERS
from tests.strategies import edits, texts
from tests.workspace_snapshot import snapshot_tree

from patchsmith.attempt.api import apply
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus

# Refusals allowed when a rendering leaves the place of an edit open: every rendering here is
# made unique against the file by exact comparison, but the engine also matches tolerantly
# (whitespace, punctuation), under which two places may look alike.
# Refusals a clean rendering may still earn: the old lines occur twice, or the
# new lines already sit around them (a first and a second application look alike).
_AMBIGUOUS = {FailureCode.AMBIGUOUS_MATCH, FailureCode.ALREADY_APPLIED}

# Read automatically, a fenced file much shorter than the file on disk is a bare region
# (docs/lazy.md): the round trip names the whole-file format, as a caller who means it does.
_EXPLICIT_FORMAT = {"whole_file": "whole_file"}


@contextmanager
def _workspace(a: str) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="roundtrip-"))
    try:
        (root / "f.txt").write_bytes(a.encode("utf-8"))
        yield root
    finally:
        shutil.rmtree(root)


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A real edit of a file, or two unrelated files with the same newline style."""
    if draw(st.booleans()):
        edit = draw(edits())
        return edit.source, edit.target
    a = draw(texts())
    b = draw(texts())
    newline = "\r\n" if "\r\n" in a else "\n"
    return a, b.replace("\r\n", "\n").replace("\n", newline)


def _indented(text: str) -> bool:
    return any(line[:1] in (" ", "\t") and line.strip() for line in text.splitlines())


def _check(name: str, a: str, b: str) -> None:
    text = RENDERERS[name](a, b)
    assume(text is not None and a != b)
    assert text is not None
    with _workspace(a) as root:
        before = snapshot_tree(root)

        report = apply(text, root, format=_EXPLICIT_FORMAT.get(name, "auto"))

        if report.status is ApplyStatus.APPLIED:
            assert {"f.txt": b.encode("utf-8")} == snapshot_tree(root).files(), text
        else:
            assert before == snapshot_tree(root)
            allowed = set(_AMBIGUOUS)
            if a.strip() and not b.strip():
                allowed.add(FailureCode.EMPTY_WRITE)  # policy: blanking a file needs a delete
            if name == "whole_file":
                allowed.add(FailureCode.LARGE_REMOVAL)  # a whole file dropping most of one
            assert {e.code for e in report.errors} <= allowed, (text, report.errors)


class TestRoundTrip:
    @pytest.mark.parametrize("name", sorted(RENDERERS))
    @given(pair=_pairs())
    @example(pair=("a\nb\nc\n", "a\nB\nc\n"))
    @example(pair=("a\r\nb\r\n", "a\r\nb\r\nc\r\n"))
    @example(pair=("x\ny\nz", "x\nY\nz"))
    @example(pair=("same\nsame\nsame\n", "same\nother\nsame\n"))
    def test_rendering_applies_to_target(self, name: str, pair: tuple[str, str]) -> None:
        """Applying the format's rendering of a -> b to a gives exactly b, or a clean refusal."""
        _check(name, *pair)

    @given(pair=_pairs())
    def test_auto_read_whole_file_is_the_file_or_a_region_of_it(
        self, pair: tuple[str, str]
    ) -> None:
        """Read automatically, a fenced file lands whole or as one region; never anything else."""
        a, b = pair
        text = RENDERERS["whole_file"](a, b)
        assume(text is not None and a != b)
        assert text is not None
        with _workspace(a) as root:
            before = snapshot_tree(root)

            report = apply(text, root)

            if report.status is ApplyStatus.APPLIED:
                result = (root / "f.txt").read_bytes().decode("utf-8")
                assert result == b or b.rstrip("\r\n") in result, text
            else:
                assert before == snapshot_tree(root)

    @pytest.mark.parametrize("name", sorted(RENDERERS))
    def test_every_renderer_expresses_a_plain_edit(self, name: str) -> None:
        """Each renderer expresses a one-line change of an LF file (the property is not empty)."""
        text = RENDERERS[name]("a\nb\nc\n", "a\nB\nc\n")

        assert text is not None
        with _workspace("a\nb\nc\n") as root:
            assert ApplyStatus.APPLIED == apply(text, root).status
            assert b"a\nB\nc\n" == (root / "f.txt").read_bytes()

    @pytest.mark.parametrize("name", ["udiff", "apply_patch", "search_replace"])
    @pytest.mark.parametrize(
        ("a", "b"),
        [
            pytest.param(
                "a\nb\nc\nd\ne\n\tf\n", "    w\na\nb\nc\nd\ne\n\tf\n", id="spaces-in-tabs"
            ),
            pytest.param(" \t@\n", " \t@\n \t@\n", id="copy-of-mixed-line"),
        ],
    )
    def test_exact_match_keeps_added_indentation(self, name: str, a: str, b: str) -> None:
        """Lines added by an exactly matching edit keep the indentation the edit gives them."""
        text = RENDERERS[name](a, b)

        assert text is not None
        with _workspace(a) as root:
            apply(text, root)

            assert b.encode() == (root / "f.txt").read_bytes()
