"""Generated fleets: small git repositories of Python and JavaScript packages.

Shared by the fleet tests and `bench/fleet.py`. Repository `i` is deterministic in `i`:
- every fifth one (i % 5 == 4) is a JavaScript package with `new Buffer(...)` calls
  (no match for `unittest-to-assert`: a no-op);
- every seventh Python one allows one changed line in its policy (refused);
- the rest are Python packages whose tests use `self.assertEqual` and relatives.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["git_init", "make_fleet", "make_repo"]

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "fleet",
    "GIT_AUTHOR_EMAIL": "fleet@example.invalid",
    "GIT_COMMITTER_NAME": "fleet",
    "GIT_COMMITTER_EMAIL": "fleet@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

_PY_MODULE = '''\
"""Package {n}: small helpers."""


def add(a, b):
    return a + b


def scale(values, factor={n}):
    return [v * factor for v in values]
'''

_PY_TEST = """\
import unittest

from pkg{n}.core import add, scale


class CoreTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add({n}, 1), {n1})
        self.assertTrue(add(1, 1) == 2)

    def test_scale(self):
        self.assertEqual(scale([1, 2]), [{n}, {n2}])
        self.assertIsNotNone(scale([]))
"""

_JS_MODULE = """\
'use strict';

module.exports = function encode{n}(text) {{
  var data = new Buffer(text + '', 'utf8');
  return Buffer.concat([data, new Buffer('{n}')]);
}};
"""

_PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["src"]
"""

_POLICY = """\
[policy]
max_changed_lines = 1
"""


def git_init(root: Path) -> str:
    """Make `root` a git repository with one commit of its files; returns the commit id."""
    env = {**os.environ, **_GIT_ENV}

    def run(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    run("init", "--quiet", "--initial-branch=main")
    run("add", "--all")
    run("commit", "--quiet", "--no-gpg-sign", "-m", "initial")
    return run("rev-parse", "HEAD")


def make_repo(root: Path, n: int) -> Path:
    """Write repository number `n` at `root` and commit it."""
    root.mkdir(parents=True)
    if n % 5 == 4:
        (root / "package.json").write_text(f'{{"name": "pkg{n}", "version": "1.0.0"}}\n')
        (root / "index.js").write_text(_JS_MODULE.format(n=n))
    else:
        package = root / "src" / f"pkg{n}"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "core.py").write_text(_PY_MODULE.format(n=n))
        tests = root / "tests"
        tests.mkdir()
        (tests / "test_core.py").write_text(_PY_TEST.format(n=n, n1=n + 1, n2=2 * n))
        # the src layout on pytest's path: the tests really run (and pass) in a checkout
        (root / "pyproject.toml").write_text(_PYPROJECT)
        if n % 7 == 6:
            (root / "patchsmith.toml").write_text(_POLICY)
    git_init(root)
    return root


def make_fleet(folder: Path, count: int) -> Path:
    """`count` repositories under `folder`, and `folder/repos.txt` listing them (relative)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for n in range(count):
        make_repo(folder / f"repo{n:04d}", n)
        lines.append(f"repo{n:04d}")
    listing = folder / "repos.txt"
    listing.write_text("# generated fleet\n" + "\n".join(lines) + "\n")
    return listing
