"""A small Python project with a pytest profile, for the verify workflow's tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

PY = json.dumps(sys.executable)

CALC = b"def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
TEST_CALC = (
    b"from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    b"def test_known_bug():\n    assert add(0, 0) == 1\n"
)
TEST_OTHER = b"def test_other():\n    assert True\n"

PROFILES = f"""
[verify.pytest]
argv = [{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={{report}}"]
parser = "pytest"
kind = "test"
targeted = true
timeout_seconds = 120

[verify.lint]
argv = [{PY}, "-c", "pass"]
kind = "lint"

[verify.compile]
argv = [{PY}, "-m", "compileall", "-q", "pkg"]
kind = "build"
""".encode()


@pytest.fixture(name="project")
def _project(tmp_path: Path) -> Path:
    """pkg/calc.py, tests importing it (one test fails already), and the profiles."""
    return make_tree(
        tmp_path / "proj",
        {
            "pkg/__init__.py": b"",
            "pkg/calc.py": CALC,
            "tests/__init__.py": b"",
            "tests/test_calc.py": TEST_CALC,
            "tests/test_other.py": TEST_OTHER,
            "patchsmith.toml": PROFILES,
        },
    )


def git_commit_all(root: Path) -> None:
    """Make `root` a git repository whose HEAD holds its files."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
    }
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        subprocess.run(argv, cwd=root, check=True, env=env, capture_output=True)
