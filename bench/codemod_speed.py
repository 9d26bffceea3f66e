"""How a recipe run compares with plain `ast-grep scan` of the same rule, on a generated tree.

Run: `python bench/codemod_speed.py [--files N] [--every K] [--repeat R]` (default 10,000 files,
one in 10 matching, best of 3). The trees go where `tempfile` puts them (`TMPDIR`); the
header says how long creating one small file takes there, since a commit creates one temp
file per changed file and some folders (a sandbox's watched `/tmp`) pay 50x the usual for it.

A tree of N small Python test modules is generated in a temporary directory (a git-like
layout of packages, 30 lines each; every K-th file holds `self.assertEqual(...)` calls).
Then, in one run, taking turns:

- `ast-grep scan`: the rule alone, one `ast-grep scan --inline-rules ... --json=stream` over the
  tree (what a user would run by hand to see the matches);
- `recipe dry run`: `run_recipe(..., apply=False, record=False)`: file selection, the same scan,
  the replacements in memory, the idempotency re-run, the per-file guards, staging and every
  guard of the default policy, the diff;
- `recipe apply`: `apply=True` with the audit record: the idempotency re-run, staging, every
  guard, the journalled commit (backups in one pack, temps made durable as a batch) and the
  record (each on a copy of the tree of its own);
- `recipe apply, fsync off`: the same with `os.fsync` and the batch `syncfs` made no-ops, in
  this process only: what the recipe machinery costs apart from the disk's durability.

Every copy is made and flushed before the first timing and removed after the last, the two
applies take turns going first, and the disk is flushed after each: making or removing tens
of thousands of files, or leaving another run's writes unflushed, slows whatever runs next.

Imports (`--imports`, on its own): a deprecation recipe (`datetime.utcnow()` →
`datetime.now(timezone.utc)` adding `from datetime import timezone`, its module-style twin, and
`assertEquals` → `assertEqual`) run as a dry run on a real package, with and without its
`imports:` section, taking turns, best of `--repeat`. The package's source distribution
(`--package`, default boto 2.49.0: 721 `.py` files) is fetched once with `pip download --no-deps
--no-binary :all:` into `--cache` (default `$XDG_CACHE_HOME/patchsmith-bench`) and unpacked there.
Target: with imports ≤ 2× without.

Memory: each size in `--sizes` is run in a fresh interpreter (a dry run), and its peak resident
memory is reported beside the tree's size; a flat column means memory does not grow with the
number of files. Prints markdown tables; compare ratios from one run, not absolute times.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

RULE = "self.assertEqual($A, $B)"
RECIPE = f"""\
recipe_id: bench-assert-equal
language: python
summary: assertEqual to assert
operations:
  - type: ast_grep_rule
    id: assert-equal
    rule: {{pattern: "{RULE}"}}
    fix: "assert $A == $B"
"""

MATCHING = """\
import unittest


class Test{n}(unittest.TestCase):
    def test_values(self):
        self.assertEqual(compute({n}), {n})
        self.assertEqual(len(items({n})), 3)

    def test_more(self):
        value = compute({n}) + 1
        self.assertEqual(value, {n} + 1)
"""

PLAIN = """\
import unittest


class Test{n}(unittest.TestCase):
    def test_values(self):
        assert compute({n}) == {n}
        assert len(items({n})) == 3

    def test_more(self):
        value = compute({n}) + 1
        assert value == {n} + 1
"""

FILLER = "".join(f"\n\ndef helper_{i}(x):\n    return x * {i} + 1\n" for i in range(6))


def generate(root: Path, files: int, every: int) -> None:
    """`files` modules in packages of 100; every `every`-th one matches the rule."""
    for n in range(files):
        folder = root / "src" / f"pkg{n // 100:03d}" / "tests"
        folder.mkdir(parents=True, exist_ok=True)
        body = (MATCHING if n % every == 0 else PLAIN).format(n=n)
        (folder / f"test_mod{n:05d}.py").write_text(body + FILLER, encoding="utf-8")


def ast_grep_alone(root: Path) -> float:
    from patchsmith.codemod.backends.astgrep import ast_grep_binary

    binary = ast_grep_binary()
    assert binary is not None, "ast-grep is not installed"
    rule = f"id: r\nlanguage: python\nrule: {{pattern: '{RULE}'}}\nfix: 'assert $A == $B'\n"
    started = time.perf_counter()
    done = subprocess.run(
        [binary, "scan", "--inline-rules", rule, "--json=stream", "."],
        cwd=root,
        capture_output=True,
        check=True,
    )
    elapsed = time.perf_counter() - started
    assert done.stdout.count(b"\n") > 0
    return elapsed


def creation_cost(folder: Path, count: int = 500) -> float:
    """Microseconds to create (and fill) one small file in `folder`: a commit creates one per
    changed file, and on some file systems or sandboxed folders that costs 50x the usual."""
    probe = folder / "creation-probe"
    probe.mkdir()
    started = time.perf_counter()
    for n in range(count):
        (probe / f"f{n}").write_bytes(b"x" * 500)
    elapsed = time.perf_counter() - started
    shutil.rmtree(probe)
    return elapsed / count * 1e6


def fresh_copy(tree: Path, copy: Path) -> None:
    """Copy the tree for an apply, and flush it: a commit makes its batch durable with one
    `syncfs`, which would otherwise also pay for writing out the bench's own copy."""
    shutil.copytree(tree, copy)
    os.sync()


def recipe_run(root: Path, *, apply: bool, fsync: bool = True) -> tuple[float, int]:
    from patchsmith.codemod import parse_recipe, run_recipe
    from patchsmith.codemod.recipe import Recipe
    from patchsmith.runtime import atomic

    recipe = parse_recipe(RECIPE)
    assert isinstance(recipe, Recipe)
    real_fsync, real_syncfs = os.fsync, atomic._sync_filesystem
    if not fsync:
        # a large batch is flushed with one syncfs(2), not an fsync per file: both go
        os.fsync = lambda _fd: None
        atomic._sync_filesystem = lambda _path: True
    try:
        started = time.perf_counter()
        report = run_recipe(recipe, root, apply=apply, record=apply)
        elapsed = time.perf_counter() - started
    finally:
        os.fsync, atomic._sync_filesystem = real_fsync, real_syncfs
    assert report.ok and not report.errors, report.to_text(diffs=False)
    return elapsed, report.files_changed


def peak_memory(files: int, every: int) -> tuple[float, int]:
    """Peak RSS (MiB) of a fresh interpreter doing one dry run over a tree of `files`."""
    code = (
        "import sys, resource, tempfile, pathlib; "
        f"sys.path.insert(0, {str(ROOT / 'bench')!r}); "
        "import codemod_speed as b; "
        "root = pathlib.Path(tempfile.mkdtemp(prefix='patchsmith-bench-')); "
        f"b.generate(root, {files}, {every}); "
        "import gc; gc.collect(); "
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
        "t, n = b.recipe_run(root, apply=False); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, n); "
        "import shutil; shutil.rmtree(root)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    peak_kib, changed = out.stdout.split()
    return int(peak_kib) / 1024, int(changed)


IMPORTS_RECIPE = """\
recipe_id: bench-utcnow
language: python
summary: deprecated naive-UTC datetime calls to timezone-aware ones
operations:
  - type: ast_grep_rule
    id: utcnow
    rule: {pattern: datetime.utcnow()}
    fix: datetime.now(timezone.utc)
  - type: ast_grep_rule
    id: utcnow-module
    rule: {pattern: datetime.datetime.utcnow()}
    fix: datetime.datetime.now(datetime.timezone.utc)
  - type: ast_grep_rule
    id: utcfromtimestamp
    rule: {pattern: datetime.utcfromtimestamp($T)}
    fix: "datetime.fromtimestamp($T, timezone.utc)"
  - type: ast_grep_rule
    id: assert-equals
    rule: {pattern: $X.assertEquals($$$A)}
    fix: $X.assertEqual($$$A)
"""
IMPORTS_SECTION = "imports:\n  add: [from datetime import timezone]\n"


PIP_DOWNLOAD = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
PIP_DOWNLOAD += ["--no-binary", ":all:"]


def fetch_package(spec: str, cache: Path) -> Path:
    """The unpacked source distribution of `spec` (`name==version`), fetched once into `cache`."""
    cache.mkdir(parents=True, exist_ok=True)
    name, _, version = spec.partition("==")
    unpacked = [p for p in cache.glob(f"{name}-{version or '*'}") if p.is_dir()]
    if unpacked:
        return unpacked[0]
    subprocess.run(
        [*PIP_DOWNLOAD, "--dest", str(cache), spec],
        check=True,
    )
    archive = next(cache.glob(f"{name}-{version or '*'}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return next(p for p in cache.glob(f"{name}-{version or '*'}") if p.is_dir())


IMPORT_LINE = re.compile(
    r"^\+(?:from datetime import .*\btimezone\b.*|\s+timezone,?\s*(?:#.*)?)$", re.M
)
FREE_USE = re.compile(r"^\+(?!from |import ).*(?<![\w.])timezone\.utc\b", re.M)


def imports_counted(diffs: list[str]) -> tuple[int, int]:
    """Files whose diff adds `timezone` to an import, and how many of them add no free use
    of it (an unused import: must be 0)."""
    given = [d for d in diffs if IMPORT_LINE.search(d)]
    return len(given), sum(1 for d in given if not FREE_USE.search(d))


def imports_run(root: Path, *, with_imports: bool) -> tuple[float, int, tuple[int, int]]:
    """Seconds for a dry run of the import recipe over `root`, files changed, and the
    imports it added (files given one, those of them that do not use it)."""
    from patchsmith.codemod import parse_recipe, run_recipe
    from patchsmith.codemod.recipe import Recipe

    recipe = parse_recipe(IMPORTS_RECIPE + (IMPORTS_SECTION if with_imports else ""))
    assert isinstance(recipe, Recipe)
    started = time.perf_counter()
    report = run_recipe(recipe, root, apply=False, record=False)
    elapsed = time.perf_counter() - started
    assert report.ok and not report.errors, report.to_text(diffs=False)
    return elapsed, report.files_changed, imports_counted([f.diff for f in report.files])


def compare_imports(root: Path, repeat: int) -> dict[str, float | int]:
    """Best-of-`repeat` seconds with and without the import step, taking turns."""
    with_: list[float] = []
    without: list[float] = []
    changed = added = unused = 0
    for turn in range(repeat):
        for flag in (True, False) if turn % 2 == 0 else (False, True):
            seconds, changed, counted = imports_run(root, with_imports=flag)
            (with_ if flag else without).append(seconds)
            if flag:
                added, unused = counted
    files = sum(1 for _ in root.rglob("*.py"))
    return {
        "files": files,
        "changed": changed,
        "added": added,
        "unused": unused,
        "without": min(without),
        "with": min(with_),
        "ratio": min(with_) / min(without),
    }


def imports_table(package: str, result: dict[str, float | int]) -> str:
    return (
        f"| package | .py files | changed | given `timezone` | unused | "
        f"without imports (s) | with imports (s) | ratio | target |\n"
        f"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        f"| {package} | {result['files']} | {result['changed']} | {result['added']} | "
        f"{result['unused']} | "
        f"{result['without']:.2f} | {result['with']:.2f} | {result['ratio']:.2f} | ≤ 2 |"
    )


def main_imports(args: argparse.Namespace) -> None:
    root = fetch_package(args.package, Path(args.cache))
    result = compare_imports(root, args.repeat)
    print(
        f"# codemod imports — {datetime.date.today()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, best of {args.repeat}, dry runs\n"
    )
    print(imports_table(args.package, result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--imports", action="store_true", help="only the import-step comparison")
    parser.add_argument("--package", default="boto==2.49.0")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "patchsmith-bench"
    parser.add_argument("--cache", default=str(cache))
    args = parser.parse_args()
    if args.imports:
        main_imports(args)
        return

    work = Path(tempfile.mkdtemp(prefix="patchsmith-bench-"))
    try:
        creation = creation_cost(work)
        tree = work / "tree"
        generate(tree, args.files, args.every)
        alone: list[float] = []
        dry: list[float] = []
        applied: list[float] = []
        no_fsync: list[float] = []
        changed = 0
        # Every copy an apply needs is made (and flushed) before anything is timed, and all
        # are removed after: making or removing ten thousand files leaves the disk busy for a
        # while, which would slow whatever ran next.
        copies = [
            (work / f"copy{turn}-synced", work / f"copy{turn}-unsynced")
            for turn in range(args.repeat)
        ]
        for pair in copies:
            for copy in pair:
                fresh_copy(tree, copy)
        for turn, (synced_copy, unsynced_copy) in enumerate(copies):
            alone.append(ast_grep_alone(tree))
            seconds, changed = recipe_run(tree, apply=False)
            dry.append(seconds)
            # The two applies take turns going first, and the disk is flushed after each: a
            # commit's one `syncfs` would otherwise also write out what the run before left.
            for synced in (True, False) if turn % 2 == 0 else (False, True):
                copy = synced_copy if synced else unsynced_copy
                seconds, _ = recipe_run(copy, apply=True, fsync=synced)
                (applied if synced else no_fsync).append(seconds)
                os.sync()
    finally:
        shutil.rmtree(work)

    base = min(alone)
    print(
        f"# codemod speed — {datetime.date.today()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {args.files} files ({args.files // args.every} matching, "
        f"{changed} changed), best of {args.repeat}; trees in {work.parent} (set TMPDIR to move "
        f"them), where creating a small file takes {creation:.0f} µs\n"
    )
    print("| run | seconds | × ast-grep alone | target |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| `ast-grep scan` (the rule alone) | {base:.2f} | 1.00 | |")
    print(f"| recipe dry run | {min(dry):.2f} | {min(dry) / base:.2f} | ≤ 1.5 |")
    print(
        f"| recipe apply (guards, re-run, commit, record) | {min(applied):.2f} | "
        f"{min(applied) / base:.2f} | ≤ 3 |"
    )
    print(f"| recipe apply, fsync off | {min(no_fsync):.2f} | {min(no_fsync) / base:.2f} | |")
    print()
    print("| files | changed | peak memory of a dry run (MiB) |")
    print("| ---: | ---: | ---: |")
    for size in (int(s) for s in args.sizes.split(",")):
        peak, changed_here = peak_memory(size, args.every)
        print(f"| {size} | {changed_here} | {peak:.0f} |")
    _ = resource  # the memory probe runs in child interpreters


if __name__ == "__main__":
    main()
