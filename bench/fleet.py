"""Fleet runs: the local pool against Dask on a LocalCluster, over generated repositories.

Run: `python bench/fleet.py [--repos N] [--workers W] [--sample S]` (default 200 repositories,
2 workers, 20 repositories for the in-process baseline). Needs `distributed`
(`pip install patchsmith[fleet]`, part of the dev extra).

N small git repositories are generated (tests/fleet/sample.py: Python packages whose tests use
`self.assertEqual` and relatives, JavaScript packages with `new Buffer(...)`, and some whose
policy refuses the change), then `unittest-to-assert` runs over them:

- `in-process`: `run_unit` on the first S repositories, one after the other, in this process
  (imports already paid): what one repository costs on its own, checkout included;
- `local`, `dask` (one repository per task) and both with `--batch 10`: `run_fleet` in a
  fresh interpreter per configuration, with W workers (the Dask ones on a LocalCluster on
  127.0.0.1, one process per worker).

For each: wall time, throughput, the worker time per repository (wall x workers / N), the
overhead per repository over the in-process cost, and the peak memory of the whole process
tree (driver, cluster and worker children, summed, sampled every 50 ms from /proc). Every
run must give the same result for every repository. Prints markdown tables, then the
projection for 10,000 repositories. Compare ratios from one run, not absolute times.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

RECIPE = "unittest-to-assert"


def _tree_rss(pid: int) -> int:
    """Resident memory of `pid` and all its descendants, in bytes (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent, pages = int(fields[1]), int(fields[21])
        children.setdefault(parent, []).append(int(entry))
        rss[int(entry)] = pages * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        total += rss.get(current, 0)
        stack.extend(children.get(current, []))
    return total


def _measured(argv: list[str]) -> tuple[dict[str, object], int]:
    """Run `argv` (which prints one JSON line) and sample its process tree's memory."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    done.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed with {process.returncode}")
    return json.loads(out.strip().splitlines()[-1]), peak


def _one(args: argparse.Namespace) -> None:
    """Child mode: one fleet run; print its outcomes and time as JSON."""
    from patchsmith.fleet import run_fleet

    started = time.perf_counter()
    summary = run_fleet(
        RECIPE,
        args.listing,
        runs_dir=args.runs,
        run_id=args.run_id,
        executor=args.executor,
        workers=args.workers,
        batch=args.batch,
    )
    wall = time.perf_counter() - started
    assert summary.ok, summary.errors
    print(
        json.dumps(
            {
                "wall": wall,
                "counts": summary.counts,
                "outcomes": [r.outcome() for r in summary.results],
                "unit_seconds": sum(r.seconds for r in summary.results) / len(summary.results),
            }
        )
    )


def _baseline(folder: Path, sample: int) -> float:
    """Mean seconds of one repository's unit in this process (imports paid beforehand)."""
    from patchsmith.fleet import RepoSpec, WorkUnit, resolve_change, run_unit

    change = resolve_change(RECIPE)
    assert not hasattr(change, "code"), change
    work = folder / "baseline-work"
    units = [
        WorkUnit(RepoSpec(str(p), str(p)), change, str(work))  # type: ignore[arg-type]
        for p in sorted(folder.glob("repo*"))[:sample]
    ]
    run_unit(units[0])  # warm: imports, ast-grep's first start
    started = time.perf_counter()
    for unit in units:
        run_unit(unit)
    return (time.perf_counter() - started) / len(units)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--listing", help=argparse.SUPPRESS)
    parser.add_argument("--runs", help=argparse.SUPPRESS)
    parser.add_argument("--run-id", help=argparse.SUPPRESS)
    parser.add_argument("--executor", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _one(args)
        return

    from tests.fleet.sample import make_fleet

    with tempfile.TemporaryDirectory(prefix="patchsmith-bench-fleet-") as tmp:
        folder = Path(tmp) / "fleet"
        started = time.perf_counter()
        listing = make_fleet(folder, args.repos)
        made = time.perf_counter() - started
        baseline = _baseline(folder, args.sample)
        configs = [
            ("local", "local", 1),
            ("local batch 10", "local", 10),
            ("dask", "dask", 1),
            ("dask batch 10", "dask", 10),
        ]
        rows = []
        outcomes = None
        for name, executor, batch in configs:
            argv = [sys.executable, __file__, "--one", "--listing", str(listing)]
            argv += ["--runs", str(Path(tmp) / "runs"), "--run-id", name.replace(" ", "-")]
            argv += ["--executor", executor, "--workers", str(args.workers)]
            argv += ["--batch", str(batch)]
            result, peak = _measured(argv)
            if outcomes is None:
                outcomes = result["outcomes"]
            identical = result["outcomes"] == outcomes
            wall = float(result["wall"])  # type: ignore[arg-type]
            per_repo = wall * args.workers / args.repos
            rows.append((name, wall, per_repo, peak, identical, result["counts"]))

    print(f"## Fleet run: {RECIPE} over {args.repos} generated repositories\n")
    print(
        f"{datetime.date.today()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {args.workers} workers; repositories generated in {made:.1f}s; "
        f"counts {rows[0][5]}.\n"
    )
    print(
        "| executor | wall (s) | throughput (repo/s) | worker time per repo (s) | "
        "overhead per repo (s) | peak memory (MB) | same results |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    print(
        f"| in-process, serial ({args.sample} repos) | {baseline * args.sample:.1f} | "
        f"{1 / baseline:.2f} | {baseline:.3f} | 0 | - | - |"
    )
    for name, wall, per_repo, peak, identical, _ in rows:
        print(
            f"| {name} | {wall:.1f} | {args.repos / wall:.2f} | {per_repo:.3f} | "
            f"{per_repo - baseline:.3f} | {peak / 2**20:.0f} | {'yes' if identical else 'NO'} |"
        )
    best = min(per_repo for _, _, per_repo, *_ in rows)
    print("\n## Projection: 10,000 repositories (from the best measured worker time per repo)\n")
    print("| workers | hours | repositories per hour |")
    print("| ---: | ---: | ---: |")
    for workers in (2, 8, 32, 128):
        hours = 10_000 * best / workers / 3600
        print(f"| {workers} | {hours:.2f} | {workers * 3600 / best:,.0f} |")


if __name__ == "__main__":
    main()
