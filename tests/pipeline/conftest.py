"""Workspaces and a scripted model's reading of repair messages, for the repair loop's tests."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

CALC = b"""def add(a, b):
    return a + b


def scale(values, factor):
    result = []
    for value in values:
        result.append(value * factor)
    return result


def total(values):
    result = 0
    for value in values:
        result += value
    return result
"""

STATS = b"""def mean(values):
    if not values:
        return 0
    return sum(values) / len(values)
"""

TEST_STATS = b"""from stats import mean


def test_mean():
    assert mean([1, 2]) == 1.5


def test_mean_of_nothing():
    assert mean([]) == 0
"""

PROFILES = f"""
[verify.tests]
argv = [{json.dumps(sys.executable)}, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "--junitxml={{report}}"]
parser = "pytest"
kind = "test"
timeout_seconds = 120
""".encode()


@pytest.fixture(name="calc")
def _calc(tmp_path: Path) -> Path:
    """A workspace holding calc.py (two loops that look alike)."""
    return make_tree(tmp_path / "calc", {"calc.py": CALC})


@pytest.fixture(name="stats")
def _stats(tmp_path: Path) -> Path:
    """stats.py, its tests (passing), and a `tests` verification profile."""
    return make_tree(
        tmp_path / "stats",
        {"stats.py": STATS, "tests/test_stats.py": TEST_STATS, "patchsmith.toml": PROFILES},
    )


_NUMBERED = re.compile(r"^\s*(\d+) \| ?(.*)$")


def excerpt_lines(feedback: str) -> dict[int, str]:
    """The numbered lines of every excerpt in a repair message, by line number."""
    found = {}
    for line in feedback.splitlines():
        match = _NUMBERED.match(line)
        if match:
            found[int(match.group(1))] = match.group(2)
    return found
