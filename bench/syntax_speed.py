"""How long the syntax guard takes on one local edit: the whole file parsed, or only the change.

Run: `python bench/syntax_speed.py [--quick] [--repeat N] [CORPUS]` (default corpus
`../shared/corpus/public.jsonl.gz`; `--quick` leaves out the 1M-line file).

Files: the corpus's largest Python, JavaScript and TypeScript files, and generated Python
files of 100k and 1M lines (classes and functions, ~30 lines a block). Each gets two clean
local edits (a statement written before a `return` in the middle of the file), and the
100k-line file one breaking edit as well. Three timings of `SyntaxGuard.check`, taking turns:

- `whole`: the change's old text never seen by this process (its verdicts forgotten) and
  the first-sight check off (`FIRST_SIGHT` out of reach): the guard parses the whole new
  text, as every change was judged before;
- `first sight`: the old text never seen, the check on: Python finds the cuts around the
  edit by scanning the old text and parses the rows between them, in both texts
  (docs/decisions/0049); tree-sitter files are parsed whole, as in `whole`;
- `changed only`: the old text is the new text of the change before, which was parsed
  whole (so its outline is kept): Python re-parses the statements around the edit,
  tree-sitter parses incrementally from the kept tree (docs/decisions/0043).

Each row gives the median over `--repeat` runs (one run for the 1M-line file) and the
ratio; the whole run is in one process, so the ratios compare.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / ".." / "shared" / "corpus" / "public.jsonl.gz"

from patchsmith.formats.script import Action  # noqa: E402
from patchsmith.guards import GuardContext  # noqa: E402
from patchsmith.guards.syntax import SyntaxGuard  # noqa: E402
from patchsmith.policy import Policy  # noqa: E402
from patchsmith.runtime import syntax  # noqa: E402
from patchsmith.runtime.change import FileChange  # noqa: E402
from patchsmith.runtime.syntax import forget_verdicts  # noqa: E402

_BLOCK = '''class Widget{n}(Base):
    """Widget number {n}."""

    limit = {n}

    def __init__(self, size: int = {n}) -> None:
        self.size = size
        self.items = [i * {n} for i in range(size) if i % 3]

    @property
    def area(self) -> int:
        return self.size * {n}

    def describe(self, *, verbose: bool = False) -> str:
        if verbose:
            return f"widget {n}: {{self.size}}"
        try:
            value = self.items[{n} % len(self.items)]
        except (IndexError, ZeroDivisionError):
            value = None
        return str(value)


def helper_{n}(a, b={n}):
    return {{"a": a, "b": b, "sum": a + b}}


'''

_RETURN = re.compile(r"^([ \t]+)return\b[^\n]*[^\n,(\[{\\]$", re.M)
"""An indented one-line `return`: a statement may be written before it."""
_TOP = re.compile(r"^()(?:export|declare|interface|function|class) ", re.M)
"""A top-level declaration (of a TypeScript declaration file)."""


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    text: str
    breaking: bool = False


def generated(lines: int) -> str:
    parts: list[str] = []
    count = 0
    n = 0
    while count < lines:
        block = _BLOCK.format(n=n)
        parts.append(block)
        count += block.count("\n")
        n += 1
    return "".join(parts)


def largest(corpus: Path, suffixes: tuple[str, ...]) -> tuple[str, str] | None:
    best: tuple[str, str] | None = None
    with gzip.open(corpus, "rt", encoding="utf-8") as handle:
        for line in handle:
            for name, text in json.loads(line)["files"].items():
                if name.endswith(suffixes) and (best is None or len(text) > len(best[1])):
                    best = (name, text)
    return best


def edited(path: str, text: str, which: int, *, breaking: bool = False) -> str:
    """`text` with a statement written before the `which`-th indented `return` after its
    middle (or, in a file without one, before a top-level declaration)."""
    found = [m for m in _RETURN.finditer(text) if m.start() >= len(text) // 2]
    if not found:
        found = [m for m in _TOP.finditer(text) if m.start() >= len(text) // 2]
    match = found[which]
    indent = match.group(1)
    if path.endswith(".py"):
        statement = "bench_value = (1,\n" if breaking else f"bench_value_{which} = {which}\n"
    else:
        typed = ": number" if path.endswith(".ts") else ""
        statement = "const benchValue = (1;\n" if breaking else f"let benchValue{which}{typed};\n"
    return text[: match.start()] + indent + statement + text[match.start() :]


def change(path: str, old: str, new: str) -> FileChange:
    return FileChange(
        path=path,
        action=Action.UPDATE,
        old_path=path,
        old_bytes=None,
        new_bytes=new.encode(),
        old_text=old,
        new_text=new,
    )


def timed(guard: SyntaxGuard, path: str, old: str, new: str) -> tuple[float, int]:
    start = time.perf_counter_ns()
    failures = guard.check([change(path, old, new)], GuardContext(Policy()))
    return (time.perf_counter_ns() - start) / 1e6, len(failures)


def measure(case: Case, repeat: int) -> tuple[float, float, float, int]:
    """Median ms of the guard on the second edit: the whole file parsed, at first sight,
    and only the change (the old text parsed before); and how many failures."""
    guard = SyntaxGuard()
    whole: list[float] = []
    sight: list[float] = []
    changed: list[float] = []
    refused = set()
    first = edited(case.path, case.text, 0)
    second = edited(case.path, first, 1, breaking=case.breaking)
    on = syntax.FIRST_SIGHT
    for _ in range(repeat):
        forget_verdicts()  # nothing of this file seen, no first-sight check: parsed whole
        syntax.FIRST_SIGHT = sys.maxsize
        try:
            ms, failures = timed(guard, case.path, first, second)
        finally:
            syntax.FIRST_SIGHT = on
        whole.append(ms)
        refused.add(failures)
        forget_verdicts()  # nothing of this file seen: the first-sight check
        ms, failures = timed(guard, case.path, first, second)
        sight.append(ms)
        refused.add(failures)
        forget_verdicts()
        syntax.FIRST_SIGHT = sys.maxsize  # the edit before, parsed whole (untimed)
        try:
            _, failures = timed(guard, case.path, case.text, first)
        finally:
            syntax.FIRST_SIGHT = on
        assert failures == 0, f"{case.name}: the first edit should pass"
        ms, failures = timed(guard, case.path, first, second)
        changed.append(ms)
        refused.add(failures)
    assert len(refused) == 1, f"{case.name}: the three ways gave different verdicts"
    medians = (statistics.median(whole), statistics.median(sight), statistics.median(changed))
    return (*medians, refused.pop())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--quick", action="store_true", help="leave out the 1M-line file")
    parser.add_argument("--repeat", type=int, default=5, help="runs per row (median taken)")
    args = parser.parse_args(argv)
    cases: list[tuple[Case, int]] = []
    if args.corpus.exists():
        for label, suffixes in (
            ("Python", (".py",)),
            ("JavaScript", (".js",)),
            ("TypeScript", (".ts",)),
        ):
            found = largest(args.corpus, suffixes)
            if found is not None:
                cases.append((Case(f"corpus's largest {label}: {found[0]}", *found), args.repeat))
    else:
        sys.stderr.write(f"corpus not found: {args.corpus} (generated files only)\n")
    big = generated(100_000)
    cases.append((Case("generated Python, 100k lines", "big.py", big), args.repeat))
    cases.append(
        (Case("generated Python, 100k lines, breaking edit", "big.py", big, True), args.repeat)
    )
    if not args.quick:
        cases.append((Case("generated Python, 1M lines", "huge.py", generated(1_000_000)), 1))
    print(f"# syntax guard speed, {datetime.date.today().isoformat()}")
    print(
        f"\n{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| file | lines | KB | verdict | whole ms | first sight ms | changed only ms "
        "| whole / first sight | whole / changed |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for case, repeat in cases:
        whole, sight, changed, refused = measure(case, repeat)
        verdict = "refused" if refused else "passes"
        print(
            f"| {case.name} | {case.text.count(chr(10)):,} | {len(case.text.encode()) // 1024:,} "
            f"| {verdict} | {whole:.2f} | {sight:.2f} | {changed:.2f} | {whole / sight:.1f}× "
            f"| {whole / changed:.1f}× |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
