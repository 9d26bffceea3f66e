"""How long one `patchsmith apply --check` takes in a fresh process, beside `git apply --check`.

Run: `python bench/cli_start.py [--runs N] [--cpu K] [--importtime] [--against DIR]`.

An agent that shells out to patchsmith pays the interpreter's start, the imports and the
work on every edit. This bench times the bundled example (`examples/greeting`: a model's
reply with prose, a fence and a sloppy two-hunk diff) in fresh processes, pinned to one
core, beside `git apply --check` of the same change (as an exact diff) and `python -c pass`
(the floor any Python tool pays), all in the same run and taking turns, so the machine's
load weighs on every row alike. Wall time is what the caller waits; CPU time (user + system
of the child) is less sensitive to other jobs on a shared machine.

The package is byte-compiled first, as an installed package is: a checkout run with
PYTHONDONTWRITEBYTECODE would otherwise compile every module on every start. The first
(untimed) run of each command also fills the per-user cache, as any earlier call would.

`--importtime` adds one `python -X importtime` run of `apply --check`: the self time of the
imports grouped by package, and which heavy dependencies were loaded at all.

Two floor rows show what no `apply --check` can go under while its records are dataclasses
(`bench/startfloor.py`): a process that imports the standard-library modules a check loads
and nothing else, and one that also builds a dataclass of the same shape as each of the
check's (same options, same fields), with none of patchsmith's own code.

`--against DIR` adds a before/after pair in the same rotation: `python -m patchsmith apply
--check` with the package of another checkout (`DIR/src`, e.g. a `git worktree` of main, or
`git archive main src | tar -x -C DIR`) and with this one, both byte-compiled.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import startfloor  # noqa: E402

EXAMPLE = ROOT / "examples" / "greeting"
HEAVY = (
    "pydantic",
    "sqlite3",
    "tree_sitter",
    "detect_secrets",
    "requests",
    "yaml",
    "libcst",
    "ast_grep_py",
    "rich",
    "packaging",
    "pathspec",
    "mcp",
)
"""Dependencies a cold start should load only when the command uses them."""

FLOOR_STDLIB = "floor: the standard library a check loads"
FLOOR_CLASSES = "floor: that, and its dataclasses built again"

Command = tuple[str, list[str], Path | None, dict[str, str] | None]
"""Name, argv, working directory, environment (`None`: this process's)."""


def patchsmith_command() -> list[str]:
    """The installed console script beside this interpreter, else what it runs."""
    script = Path(sys.executable).with_name("patchsmith")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "patchsmith"]


def prepare(scratch: Path) -> tuple[Path, Path]:
    """A copy of the example's workspace, and the exact diff of its change for `git apply`."""
    workspace = scratch / "workspace"
    shutil.copytree(EXAMPLE / "workspace", workspace)
    from patchsmith.attempt.api import apply

    reply = (EXAMPLE / "model-reply.md").read_text(encoding="utf-8")
    report = apply(reply, workspace, check=True, record=False)
    if not report.ok or not report.diff:
        raise SystemExit(f"the example does not apply: {report.status}")
    patch = scratch / "exact.diff"
    patch.write_text(report.diff, encoding="utf-8")
    return workspace, patch


def check_args(workspace: Path) -> list[str]:
    """`patchsmith`'s arguments for the timed check of the example."""
    return ["apply", str(EXAMPLE / "model-reply.md"), "-C", str(workspace), "--check"]


_FLOOR = [
    sys.executable,
    "-c",
    # through an import, so the module's bytecode is cached as the package's is
    f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
    "import startfloor; startfloor.main(sys.argv[1:])",
]


def probe_floor(scratch: Path, workspace: Path) -> tuple[Path, int]:
    """What a check loads (`bench/startfloor.py`), and how many dataclasses that is."""
    spec = scratch / "floor.spec"
    run_once([*_FLOOR, "probe", str(spec), *check_args(workspace)], None)
    return spec, len(json.loads(startfloor.read_spec(str(spec))[1]))


def commands(
    workspace: Path, patch: Path, against: Path | None = None, floor: Path | None = None
) -> list[Command]:
    cli = patchsmith_command()
    args = check_args(workspace)
    check = [*cli, *args]
    table: list[Command] = [
        ("python -c pass", [sys.executable, "-c", "pass"], None, None),
        (
            "git apply --check (exact diff)",
            ["git", "apply", "--check", str(patch)],
            workspace,
            None,
        ),
        ("patchsmith --version", [*cli, "--version"], None, None),
        ("patchsmith apply --check", check, None, None),
        ("patchsmith apply --check --no-record", [*check, "--no-record"], None, None),
        ("patchsmith apply --check --json", [*check, "--json"], None, None),
    ]
    if floor is not None:
        table.append((FLOOR_STDLIB, [*_FLOOR, "floor", str(floor)], None, None))
        table.append((FLOOR_CLASSES, [*_FLOOR, "floor", str(floor), "--dataclasses"], None, None))
    if against is not None:
        module = [sys.executable, "-m", "patchsmith", *args]
        before = {**os.environ, "PYTHONPATH": str(against / "src")}
        table.append(
            (f"before: -m patchsmith apply --check ({against.name})", module, None, before)
        )
        table.append(("after: -m patchsmith apply --check (this tree)", module, None, None))
    return table


def run_once(
    argv: list[str], cwd: Path | None, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of `argv` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def time_commands(table: list[Command], runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per command, the wall and CPU times of `runs` runs; commands take turns, in rotation."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, *_ in table}
    for _, argv, cwd, env in table:  # warm the page cache and git's index before timing
        run_once(argv, cwd, env)
    for number in range(runs):
        shift = number % len(table)
        for name, argv, cwd, env in table[shift:] + table[:shift]:
            wall, cpu = run_once(argv, cwd, env)
            times[name][0].append(wall)
            times[name][1].append(cpu)
    return times


def import_profile(argv: list[str]) -> tuple[list[tuple[str, float]], list[str], float]:
    """Self time of the imports by package (ms), the heavy packages loaded, and the total."""
    rest = argv[1:] if argv[0] == sys.executable else argv  # the console script is Python too
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *rest], capture_output=True, text=True
    )
    by_package: Counter[str] = Counter()
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if found is None:
            continue
        name = found.group(2)
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "patchsmith" else parts[0]
        by_package[key] += int(found.group(1))
    loaded = sorted(
        {k for k in by_package if k in HEAVY}
        | {h for h in HEAVY for k in by_package if k.startswith(h + ".")}
    )
    total = sum(by_package.values()) / 1000
    return [(k, v / 1000) for k, v in by_package.most_common(15)], loaded, total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed runs per command")
    parser.add_argument("--cpu", type=int, default=None, help="the core to pin to (default: last)")
    parser.add_argument("--importtime", action="store_true", help="add the import profile")
    parser.add_argument(
        "--against", type=Path, default=None, help="another checkout to time beside this one"
    )
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        core = args.cpu if args.cpu is not None else cores[-1]
        os.sched_setaffinity(0, {core})  # children inherit it: every run on one core
        pinned = f"pinned to core {core}"
    else:  # pragma: no cover - macOS and Windows cannot pin
        pinned = "not pinned"
    # (recipe fixtures are data, not modules: no bytecode beside them)
    for tree in (ROOT, *([args.against] if args.against else [])):
        compileall.compile_dir(tree / "src" / "patchsmith", quiet=1, rx=re.compile(r"fixtures"))
    scratch = Path(tempfile.mkdtemp(prefix="cli-start-"))
    try:
        workspace, patch = prepare(scratch)
        spec, classes = probe_floor(scratch, workspace)
        table = commands(workspace, patch, args.against, spec)
        load_before = os.getloadavg()[0]
        times = time_commands(table, args.runs)
        load_after = os.getloadavg()[0]
        floor = statistics.median(times["python -c pass"][0])
        print(f"# cold start, {datetime.datetime.now(datetime.UTC).isoformat(timespec='minutes')}")
        print(
            f"\n{platform.platform()}, {platform.processor() or platform.machine()}, "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs ({pinned}); "
            f"{args.runs} runs per command; load average {load_before:.1f} before, "
            f"{load_after:.1f} after\n"
        )
        print(
            "| command | median wall ms | p90 wall ms | median CPU ms | wall × `python -c pass` |"
        )
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, (walls, cpus) in times.items():
            median = statistics.median(walls)
            print(
                f"| {name} | {median:.1f} | {percentile(walls, 0.9):.1f} "
                f"| {statistics.median(cpus):.1f} | {median / floor:.1f} |"
            )
        check_cpu = statistics.median(times["patchsmith apply --check"][1])
        pass_cpu = statistics.median(times["python -c pass"][1])
        floor_cpu = statistics.median(times[FLOOR_CLASSES][1])
        print(
            f"\nIn CPU time: `apply --check` {check_cpu / pass_cpu:.1f}× `python -c pass`; "
            f"the floor with the check's {classes} dataclasses {floor_cpu / pass_cpu:.1f}×, "
            f"which leaves {check_cpu - floor_cpu:.1f} ms for all of patchsmith's own code."
        )
        if args.importtime:
            check = next(argv for name, argv, *_ in table if name == "patchsmith apply --check")
            groups, loaded, total = import_profile(check)
            print(f"\n`python -X importtime` of `apply --check`: {total:.1f} ms of imports")
            print(f"heavy dependencies loaded: {', '.join(loaded) or 'none'}\n")
            print("| package | self ms |")
            print("| --- | ---: |")
            for name, ms in groups:
                print(f"| {name} | {ms:.1f} |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
