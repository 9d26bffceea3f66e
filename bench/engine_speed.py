"""How fast `apply_hunks` is, beside llm-diff-patcher 0.2.1 timed in one long-lived node process.

Run: `python bench/engine_speed.py [--repeat N] [--limit N] [--no-node]`.

Tables: per-case median and p99 over `../shared/parity/parity_apply.json` and over the single-file
`udiff` cases of `../shared/corpus/public.jsonl.gz`, for both modes and for the reference (timed
inside node with `process.hrtime.bigint()`, so the pipe is excluded), with the ratio to the
reference; then default mode on synthetic files of 1k/10k/100k lines x 1/10/100 hunks, on the
exact path (clean hunks) and the fuzzy path (one dropped or altered context line per hunk).
A case's time is the median of its repetitions; each case is timed in every implementation in
turn, so that load from other processes weighs on all alike. Figures vary by machine: compare
ratios from one run.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared"
sys.path.insert(0, str(ROOT))

from tests.oracle.node_reference import NodeReference, OracleUnavailable  # noqa: E402

from patchsmith.engine import HunkResult, apply_hunks  # noqa: E402

ApplyFn = Callable[[str, str], HunkResult]
SLOW_NS = 500_000_000
"""A call this slow is timed once: repeating it would not change the picture."""


@dataclass(frozen=True)
class Case:
    """One timing input: a file's text and the model's diff for it."""

    name: str
    source: str
    diff: str


@dataclass(frozen=True)
class Summary:
    """Per-case times (ns) of one implementation over one set of cases."""

    label: str
    times: tuple[int, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else math.nan

    @property
    def p99(self) -> float:
        if not self.times:
            return math.nan
        ordered = sorted(self.times)
        return ordered[max(math.ceil(0.99 * len(ordered)) - 1, 0)]


def engines() -> dict[str, ApplyFn]:
    """`apply_hunks` in each mode."""

    def mode(name: str) -> ApplyFn:
        return lambda source, diff: apply_hunks(source, diff, mode=name)

    return {"default": mode("default"), "compat": mode("compat")}


def header() -> str:
    """Date, CPU, Python and node versions: the figures depend on all of them."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = "absent"
    if shutil.which("node"):
        node = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return (
        f"# patchsmith engine speed  {now}\n"
        f"# CPU: {cpu}  Python: {platform.python_version()} ({platform.python_implementation()})"
        f"  node: {node}"
    )


def parity_cases() -> list[Case]:
    """Every parity_apply.json record."""
    path = SHARED / "parity" / "parity_apply.json"
    if not path.is_file():
        print(f"(skipped: {path.relative_to(ROOT)} is absent)")
        return []
    records = json.loads(path.read_text(encoding="utf-8"))
    return [Case(r["name"], r["source"], r["diff"]) for r in records]


def corpus_cases() -> list[Case]:
    """The udiff cases of public.jsonl.gz that touch exactly one existing file."""
    path = SHARED / "corpus" / "public.jsonl.gz"
    if not path.is_file():
        print(f"(skipped: {path.relative_to(ROOT)} is absent)")
        return []
    cases = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["format"] == "udiff" and len(record["files"]) == 1:
                (source,) = record["files"].values()
                cases.append(Case(record["id"], source, record["patch"]))
    return cases


def time_python(apply: ApplyFn, case: Case, repeat: int) -> int:
    """Median ns of `repeat` calls, after one warm-up call (itself the answer past 0.5 s)."""
    start = time.perf_counter_ns()
    apply(case.source, case.diff)
    warm_up = time.perf_counter_ns() - start
    if warm_up > SLOW_NS:
        return warm_up
    runs = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        apply(case.source, case.diff)
        runs.append(time.perf_counter_ns() - start)
    return int(statistics.median(runs))


def time_node(reference: NodeReference, case: Case, repeat: int) -> int:
    """Median ns of `repeat` runs measured inside node, after one warm-up run."""
    return int(statistics.median(reference.time(case.source, case.diff, repeat + 1).ns[1:]))


def _ms(ns: float) -> str:
    return "n/a" if math.isnan(ns) else f"{ns / 1e6:.3f}"


def _us(ns: float) -> str:
    return "n/a" if math.isnan(ns) else f"{ns / 1e3:.1f}"


def _ratio(ns: float, base_ns: float) -> str:
    if math.isnan(ns) or math.isnan(base_ns):
        return "n/a"
    return f"{ns / base_ns:6.2f}x"


def case_table(
    title: str,
    cases: Sequence[Case],
    apply_by_mode: Mapping[str, ApplyFn | None],
    reference: NodeReference | None,
    repeat: int,
) -> None:
    """Print median and p99 per implementation over `cases`, with the ratio to the reference."""
    if not cases:
        return
    # Case by case, every implementation in turn: a burst of load from other processes then
    # slows all of them alike, and the ratios stay fair.
    times: dict[str, list[int]] = {mode: [] for mode, apply in apply_by_mode.items() if apply}
    reference_times: list[int] = []
    for case in cases:
        for mode, apply in apply_by_mode.items():
            if apply is not None:
                times[mode].append(time_python(apply, case, repeat))
        if reference is not None:
            reference_times.append(time_node(reference, case, repeat))
    summaries = [
        Summary(f"patchsmith {mode}", tuple(times[mode]))
        if apply is not None
        else Summary(f"patchsmith {mode} (not built yet)", ())
        for mode, apply in apply_by_mode.items()
    ]
    base = None
    if reference is not None:
        base = Summary("llm-diff-patcher 0.2.1", tuple(reference_times))
        summaries.append(base)
    print(f"\n## {title}: {len(cases)} cases, median of {repeat} runs each")
    print(
        f"{'implementation':38} {'median µs':>10} {'p99 µs':>10} {'median/ref':>11} {'p99/ref':>9}"
    )
    base_median = base.median if base else math.nan
    base_p99 = base.p99 if base else math.nan
    for summary in summaries:
        print(
            f"{summary.label:38} {_us(summary.median):>10} {_us(summary.p99):>10}"
            f" {_ratio(summary.median, base_median):>11} {_ratio(summary.p99, base_p99):>9}"
        )


def synthetic_file(lines: int) -> list[str]:
    """Distinct code-like lines, each ending in LF."""
    return [f"    value_{i} = compute({i}, {i % 7})  # step {i % 13}\n" for i in range(lines)]


def synthetic_diff(contents: Sequence[str], hunks: int, fuzzy: bool) -> str:
    """`hunks` evenly spaced one-line replacements with 3 lines of context each side.

    With `fuzzy`, each hunk misquotes one context line: alternately dropped and altered.
    """
    out = ["--- a/big.py\n", "+++ b/big.py\n"]
    step = len(contents) // (hunks + 1)
    for number in range(hunks):
        at = (number + 1) * step
        before = [" " + line for line in contents[at - 3 : at]]
        after = [" " + line for line in contents[at + 1 : at + 4]]
        if fuzzy and number % 2 == 0:
            del before[1]
        elif fuzzy:
            before[1] = before[1].replace("compute", "computed")
        body = [*before, "-" + contents[at], "+" + contents[at].replace("compute", "recompute")]
        body += after
        old_count = sum(1 for line in body if line[0] in " -")
        out.append(f"@@ -{at - 2},{old_count} +{at - 2},{old_count} @@\n")
        out.extend(body)
    return "".join(out)


def scaling_table(apply: ApplyFn | None, repeat: int, sizes: Iterable[int]) -> None:
    """Print default mode's median time per synthetic file size and hunk count."""
    print("\n## default mode scaling: median ms (exact path / fuzzy path)")
    if apply is None:
        print("(skipped: default mode is not built yet)")
        return
    counts = (1, 10, 100)
    print(f"{'lines':>8} " + " ".join(f"{f'{n} hunks':>22}" for n in counts))
    for size in sizes:
        contents = synthetic_file(size)
        source = "".join(contents)
        cells = []
        for count in counts:
            times = []
            for fuzzy in (False, True):
                case = Case("synthetic", source, synthetic_diff(contents, count, fuzzy))
                applied = apply(case.source, case.diff)
                note = "" if applied.applied == count else f"[{applied.applied}/{count}]"
                times.append(f"{_ms(time_python(apply, case, repeat))}{note}")
            cells.append(" / ".join(times))
        print(f"{size:>8} " + " ".join(f"{cell:>22}" for cell in cells))
    print("[a/b]: only a of b hunks applied (refusals are timed too)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument(
        "--limit", type=int, default=0, help="use only the first N cases of each set"
    )
    parser.add_argument("--no-node", action="store_true", help="skip the reference timings")
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="synthetic file sizes in lines"
    )
    args = parser.parse_args(argv)
    print(header())
    apply_by_mode = engines()
    reference: NodeReference | None = None
    if not args.no_node:
        try:
            reference = NodeReference.start()
        except OracleUnavailable as why:
            print(f"(reference timings skipped: {why})")
    try:
        for title, cases in (
            ("parity_apply.json", parity_cases()),
            ("public.jsonl.gz udiff, single file", corpus_cases()),
        ):
            chosen = cases[: args.limit] if args.limit else cases
            case_table(title, chosen, apply_by_mode, reference, args.repeat)
        sizes = [int(size) for size in args.sizes.split(",") if size]
        scaling_table(apply_by_mode["default"], max(1, min(args.repeat, 3)), sizes)
    finally:
        if reference is not None:
            reference.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
