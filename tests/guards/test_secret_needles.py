"""The secret prefilter's needles: a pattern is skipped only for a line it cannot match."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchsmith.runtime import secrets, usercache

# assembled at run time so that no scanner flags this file itself
AWS = "AKIA" + "Q3EGRT5X2ZK7WPLM"
SHAPES = (AWS, "ghp_", "xoxb-1-", "SG.", "://user:pw@host", "eyJ", "AccountKey=", "-us1", ":")


def each_pattern_matches(line: str) -> bool:
    """The reference: any denylist pattern, compiled on its own, found in `line`."""
    return any(re.compile(p, f).search(line) for p, f in secrets._denylist_sources())


@pytest.mark.parametrize("index", range(len(secrets._denylist_sources())))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_pattern_holds_one_of_its_needles(index: int, data: st.DataObject) -> None:
    """Strings each plugin pattern matches (padded either side) always pass the prefilter."""
    pattern, flags = secrets._denylist_sources()[index]
    needles = secrets._prefilter()[index][0]
    padding = st.text(alphabet="aZ09_-.:/@=\"' +\t", max_size=12)
    bare = data.draw(st.from_regex(re.compile(pattern, flags)))
    for line in (bare, data.draw(padding) + bare + data.draw(padding)):
        if not re.compile(pattern, flags).search(line):
            continue  # the padding broke an anchor
        if line.isascii() and needles:
            assert any(n in line.lower() for n in needles), (needles, line)
        assert secrets._may_hold_secret(line), line


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(SHAPES),
    st.text(alphabet="aZ09_-.:/@=\"' +ſK", max_size=40),
    st.text(alphabet="aZ09_-.:/@=\"' +", max_size=40),
)
def test_same_answer_as_every_pattern(shape: str, before: str, after: str) -> None:
    """Around credential shapes, their fragments and non-ASCII text: the same verdict."""
    for line in (before + shape + after, before + shape[: len(shape) // 2] + after):
        assert each_pattern_matches(line) == secrets._may_hold_secret(line), line


@pytest.mark.parametrize(
    ("pattern", "flags", "needles"),
    [
        ("abc[0-9]+xyzw", 0, ("xyzw",)),
        ("(?:ABIA|ACCA)[0-9]{4}", 0, ("bia", "cca")),  # the shared A is factored out
        ("(?:key|)=", 0, ("=",)),
        ("(?:key|)[0-9]", 0, ()),
        ("(?:tok){1,3}|x", 0, ("tok", "x")),
        ("(?:tok){0,3}[0-9]", 0, ()),
        ("(?:tok){1,3}[0-9]", 0, ("tok",)),
        ("\u212aey[0-9]", re.IGNORECASE, ("ey",)),
        ("[ab]c", 0, ("c",)),
        ("(?=secret)x", 0, ("x",)),
    ],
)
def test_needles_are_what_every_match_must_hold(
    pattern: str, flags: int, needles: tuple[str, ...]
) -> None:
    """Literal runs, each alternative of a branch, repeats of one or more; never a non-ASCII
    letter (the Kelvin sign matches `k` under IGNORECASE); `()` when nothing is required."""
    assert needles == secrets._needles(pattern, flags)


def test_a_line_with_no_needle_compiles_no_pattern() -> None:
    """Ordinary code lines compile next to nothing; the full alternation is not built."""
    secrets._denylist_pattern.cache_clear()

    for line in ("def greet(name):", '    return f"Hello, {name}"', "x = 1"):
        assert not secrets._may_hold_secret(line)

    assert secrets._denylist_pattern.cache_info().currsize <= 1  # `.` in none, `:` in one


def test_a_non_ascii_line_is_tested_against_every_pattern() -> None:
    """Under IGNORECASE `ſ` matches `s`: a non-ASCII line skips no pattern."""
    line = 'awſ_key = "' + "A1b2" * 10 + '"'  # "aws" ignoring case, yet not "aws" lowered

    assert each_pattern_matches(line)
    assert "aws" not in line.lower()
    assert secrets._may_hold_secret(line)


class TestNeedleCache:
    @pytest.fixture(autouse=True)
    def _cache(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        monkeypatch.setenv(usercache.CACHE_ENV, str(tmp_path / "cache"))
        secrets._prefilter.cache_clear()
        secrets._denylist_pattern.cache_clear()
        yield
        secrets._prefilter.cache_clear()
        secrets._denylist_pattern.cache_clear()

    def test_needles_are_kept_and_read_back(self, tmp_path: Path) -> None:
        """The first process parses the patterns; later ones read the needles."""
        first = secrets._prefilter()
        secrets._prefilter.cache_clear()

        assert first == secrets._prefilter()
        assert 1 == len(list((tmp_path / "cache").glob("secret-needles-*.json")))

    def test_a_damaged_entry_is_found_again(self, tmp_path: Path) -> None:
        """An entry of the wrong shape or length is not trusted: the needles are parsed again."""
        expected = secrets._prefilter()
        (entry,) = (tmp_path / "cache").glob("secret-needles-*.json")
        wrong = [json.dumps([[""]] * len(expected)), json.dumps([[1]] * len(expected)), "[[]]"]
        for damaged in ['{"not": "a list"}', "not json", *wrong]:
            entry.write_text(damaged, encoding="utf-8")
            secrets._prefilter.cache_clear()

            assert expected == secrets._prefilter()
