"""How long `patchsmith.apply` takes per case, end to end: parse, locate, guards, durable commit.

Run: `python bench/apply_speed.py [CORPUS] [--limit N] [--category C] [--repeat N] [--pin CPU]
[--before SRC]`
(default corpus `../shared/corpus/public.jsonl.gz`).

Each case's files are written to a fresh temporary directory (whose audit store and journal
directory already exist, as in any workspace used before), then one `apply()` on it is
timed: everything `apply` does (policy lookup, parsing, locating, the guards, the fsynced
commit, the audit record). A case's time is the median of its repetitions; configurations
take turns case by case. The table gives the median and p99 over cases for each
configuration:

- `full`: the workspace's default policy (every guard on) and recording on, as shipped;
- `full, long-lived`: the same in one workspace used case after case by one process (an
  agent loop or a server): the previous case's files are removed and this case's written,
  and the store, its connection and the parsers' verdicts carry over;
- `no record`: every guard on, no audit record;
- `no syntax`: every guard but syntax, no record;
- `no guards`: every guard off, no record (what apply cost before the guards existed);
- `no guards, long-lived`: that in a long-lived process of its own workspace: the floor
  of the transaction alone (parse, locate, stage, the fsynced commit) once nothing is
  opened for the first time;
- `check`: every guard on, no record, dry run (no commit, no fsync);
- `git apply (lenient)`: the peer, `git apply --recount --ignore-whitespace -C1` of the same
  text in a fresh copy of the case's files, one process per call as `bench/peers.py` runs
  it (its process start included; a case git cannot apply still counts, it ran). Its CPU
  column is the child's. The `÷ git` columns divide each row's median and p99 by this
  row's.

A call in a new workspace keeps its store's connection open, as `apply` does for the next
call; after its timing, that connection is closed (untimed, its cost printed below the
table), so the long-lived rows keep theirs (a thread keeps four) and no call pays for
closing another's.

With `--before SRC` (the `src/` folder of another patchsmith tree), every configuration is
also timed on that tree, in one long-lived worker process, taking its turn case by case
with the others (rows `before: ...`): a before/after comparison under the same load.
`--pin CPU` keeps this process, its worker and every git on one CPU.

Then the guards alone, on the staged changes of every case (no I/O); the row `syntax only,
old text seen` has each change's old text parsed first, untimed, as when the change before
wrote it (the syntax guard then re-parses only what changed). Figures vary by machine and
disk: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / ".." / "shared" / "corpus" / "public.jsonl.gz"
sys.path.insert(0, str(ROOT / "bench"))

from gitapply import LOOSE_OPTIONS, git_apply  # noqa: E402

from patchsmith.attempt.api import apply  # noqa: E402
from patchsmith.guards import GUARDS, GuardContext, run_guards  # noqa: E402

try:
    from patchsmith.runtime.syntax import forget_verdicts
except ImportError:  # pragma: no cover - an older tree, timed for comparison: no verdicts kept

    def forget_verdicts() -> None:
        pass


from patchsmith.policy import GuardSwitches, Policy  # noqa: E402
from patchsmith.runtime.change import FileChange  # noqa: E402
from patchsmith.runtime.workspace import Workspace  # noqa: E402
from patchsmith.store import Store  # noqa: E402

ALL_OFF = GuardSwitches(**{g.NAME: False for g in GUARDS})

Case = dict[str, object]
Run = Callable[[str, Path], object]

CONFIGS: dict[str, Run] = {
    "full": lambda text, root: apply(text, root),
    "full, long-lived": lambda text, root: apply(text, root),
    "no record": lambda text, root: apply(text, root, record=False, policy=Policy()),
    "no syntax": lambda text, root: apply(
        text, root, record=False, policy=Policy(guards=GuardSwitches(syntax=False))
    ),
    "no guards": lambda text, root: apply(text, root, record=False, policy=Policy(guards=ALL_OFF)),
    "no guards, long-lived": lambda text, root: apply(
        text, root, record=False, policy=Policy(guards=ALL_OFF)
    ),
    "check": lambda text, root: apply(text, root, record=False, policy=Policy(), check=True),
}


def load(path: Path) -> list[Case]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def materialise(case: Case, root: Path) -> None:
    files = case["files"]
    assert isinstance(files, dict)
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", errors="surrogateescape", newline="")


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return ordered[index]


def used_workspace(root: Path) -> None:
    """Make `root` a workspace used before: its store and its journal directory exist
    (first-use creation of the database is not what a single apply costs)."""
    Store.open(root / ".patchsmith").close()
    Workspace(root).ensure_journal_root()


def fresh_files(case: Case, root: Path) -> None:
    """The long-lived workspace with only `case`'s files (its `.patchsmith/` kept)."""
    for entry in root.iterdir():
        if entry.name == ".patchsmith":
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    materialise(case, root)


GIT = "git apply (lenient)"
BEFORE = "before: "


def time_one(name: str, patch: str, root: Path) -> tuple[float, float]:
    """Wall and CPU milliseconds of configuration `name` on `root` in this process (for
    `GIT`, the child's CPU)."""
    # every configuration parses this case's texts: none may reuse another's verdicts
    # (a long-lived caller keeps only its own, of other files)
    forget_verdicts()
    if name == GIT:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        _, seconds, _ = git_apply(patch, root, LOOSE_OPTIONS)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
        return seconds * 1000, cpu * 1000
    cpu_ns = time.process_time_ns()
    start = time.perf_counter_ns()
    CONFIGS[name](patch, root)
    wall = (time.perf_counter_ns() - start) / 1e6
    cpu = (time.process_time_ns() - cpu_ns) / 1e6
    if not name.endswith("long-lived"):
        closing = close_store(root)
        if name == "full":
            CLOSES.append(closing)
    return wall, cpu


CLOSES: list[float] = []
"""Milliseconds `close_store` took after each `full` call, in this process."""


def close_store(root: Path) -> float:
    """Close the store connection a call in `root` kept open (untimed in its row): a new
    workspace's connection would otherwise push the long-lived one out of the four a
    thread keeps, and its close (a checkpoint of the store's log, with its fsyncs) would
    be paid inside some later call of another configuration."""
    start = time.perf_counter_ns()
    # A tree older than `close_shared(state_dir)` cannot close one store alone: there, the
    # long-lived rows still lose theirs to newer workspaces, as they did.
    with contextlib.suppress(TypeError):
        Store.close_shared(Path(os.path.realpath(root)) / ".patchsmith")
    return (time.perf_counter_ns() - start) / 1e6


class Before:
    """Another patchsmith tree (`src`), timed in one long-lived worker process of this script."""

    def __init__(self, src: Path) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(ROOT)]))
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def _ask(self, request: dict[str, str]) -> dict[str, float]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer: dict[str, float] = json.loads(self.process.stdout.readline())
        return answer

    def used_workspace(self, root: Path) -> None:
        """`used_workspace(root)` by that tree (its store, its schema)."""
        self._ask({"config": "", "patch": "", "root": str(root)})

    def time(self, name: str, patch: str, root: Path) -> tuple[float, float]:
        answer = self._ask({"config": name, "patch": patch, "root": str(root)})
        return answer["wall"], answer["cpu"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def worker() -> int:
    """`--worker`: time the configurations asked on stdin, one JSON line each, in this tree."""
    import patchsmith

    sys.stderr.write(f"worker: patchsmith from {Path(patchsmith.__file__).parent}\n")
    for line in sys.stdin:
        request = json.loads(line)
        if not request["config"]:
            used_workspace(Path(request["root"]))
            wall = cpu = 0.0
        else:
            wall, cpu = time_one(request["config"], request["patch"], Path(request["root"]))
        sys.stdout.write(json.dumps({"wall": wall, "cpu": cpu}) + "\n")
        sys.stdout.flush()
    return 0


def prepare(name: str, case: Case, scratch: Path, tag: str, before: Before | None) -> Path:
    """The directory `name` runs `case` in: the long-lived workspace with only this case's
    files, or a fresh one (a used workspace for patchsmith, a bare copy for git)."""
    if name.endswith("long-lived"):
        root = live_root(scratch, name)
        fresh_files(case, root)
        return root
    root = scratch / tag
    root.mkdir()
    materialise(case, root)
    if name.startswith(BEFORE):
        assert before is not None
        before.used_workspace(root)
    elif name != GIT:
        used_workspace(root)
    return root


def live_root(scratch: Path, name: str) -> Path:
    """The workspace a long-lived configuration uses case after case."""
    return scratch / ("live-" + "".join(char for char in name if char.isalnum()))


def time_configs(
    cases: list[Case], repeat: int, scratch: Path, before: Before | None = None
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per configuration, each case's median wall time and median CPU time; configurations
    alternate case by case, in rotating order, so that the machine's load weighs on all of
    them alike."""
    names = [*CONFIGS, GIT]
    if before is not None:
        names += [BEFORE + name for name in CONFIGS]
    per_case: dict[str, list[float]] = {name: [] for name in names}
    cpu_per_case: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        if name.endswith("long-lived"):
            live_root(scratch, name).mkdir()
            if name.startswith(BEFORE):
                assert before is not None
                before.used_workspace(live_root(scratch, name))
            else:
                used_workspace(live_root(scratch, name))
    for number, case in enumerate(cases):
        samples: dict[str, list[float]] = {name: [] for name in names}
        cpu_samples: dict[str, list[float]] = {name: [] for name in names}
        patch = str(case["patch"])
        for attempt in range(repeat):
            shift = (number + attempt) % len(names)
            for name in names[shift:] + names[:shift]:
                root = prepare(name, case, scratch, f"c{number}-{attempt}", before)
                if name.startswith(BEFORE):
                    assert before is not None
                    wall, cpu = before.time(name.removeprefix(BEFORE), patch, root)
                else:
                    wall, cpu = time_one(name, patch, root)
                samples[name].append(wall)
                cpu_samples[name].append(cpu)
                if not name.endswith("long-lived"):
                    shutil.rmtree(root)
        for name in names:
            per_case[name].append(statistics.median(samples[name]))
            cpu_per_case[name].append(statistics.median(cpu_samples[name]))
    return per_case, cpu_per_case


def staged_changes(cases: list[Case], scratch: Path) -> list[tuple[FileChange, ...]]:
    from patchsmith.engine.model import EngineOptions
    from patchsmith.formats import parse_edits
    from patchsmith.runtime.intake import stage_script
    from patchsmith.runtime.transaction import Transaction

    staged = []
    for number, case in enumerate(cases):
        root = scratch / f"g{number}"
        root.mkdir()
        materialise(case, root)
        workspace = Workspace(root)
        with Transaction(workspace) as tx:
            stage_script(
                parse_edits(str(case["patch"])), workspace, tx, options=EngineOptions.default()
            )
            staged.append(tx.changes)
        shutil.rmtree(root)
    return staged


def seen_before(changes: Sequence[FileChange]) -> None:
    """Parse each change's old text as the syntax guard would have when an earlier change
    wrote it (a caller's second edit of a file): its tree or outline is kept."""
    from patchsmith.runtime.diffstat import text_of
    from patchsmith.runtime.syntax import changed_problems, changed_python_error

    for change in changes:
        old = text_of(change.old_bytes, change.old_text)
        if old is None:
            continue
        if change.path.lower().endswith((".py", ".pyi")):
            changed_python_error(None, old)
        else:
            changed_problems(change.path, None, old)


def time_guards(
    staged: list[tuple[FileChange, ...]], policy: Policy, *, seen: bool = False
) -> list[float]:
    ctx = GuardContext(policy)
    per_case = []
    for changes in staged:
        forget_verdicts()
        if seen:
            seen_before(changes)
        start = time.perf_counter_ns()
        run_guards(changes, ctx)
        per_case.append((time.perf_counter_ns() - start) / 1e6)
    return per_case


def row(name: str, values: Sequence[float]) -> str:
    return (
        f"| {name} | {statistics.median(values):.2f} | {percentile(values, 0.99):.2f} "
        f"| {max(values):.2f} |"
    )


def speed_table(walls: dict[str, list[float]], cpus: dict[str, list[float]]) -> list[str]:
    """One row per configuration: median, p99, max, median CPU, and median and p99 ÷ git's."""
    git_median = statistics.median(walls[GIT])
    git_p99 = percentile(walls[GIT], 0.99)
    lines = [
        "| configuration | median ms | p99 ms | max ms | median CPU ms "
        "| median ÷ git | p99 ÷ git |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, values in walls.items():
        median = statistics.median(values)
        p99 = percentile(values, 0.99)
        lines.append(
            f"{row(name, values)} {statistics.median(cpus[name]):.2f} "
            f"| {median / git_median:.2f}× | {p99 / git_p99:.2f}× |"
        )
    return lines


def warm_up(case: Case, scratch: Path, before: Before | None) -> None:
    """Imports, grammar loading, first store creation: once per configuration and tree."""
    patch = str(case["patch"])
    for tree in ("", BEFORE) if before is not None else ("",):
        for name in CONFIGS:
            warm = scratch / f"warm-{len(tree)}-{name.replace(' ', '').replace(',', '')}"
            warm.mkdir()
            materialise(case, warm)
            if tree:
                assert before is not None
                before.time(name, patch, warm)
            else:
                CONFIGS[name](patch, warm)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="time only the first N cases")
    parser.add_argument(
        "--category",
        action="append",
        default=None,
        help="time only cases of this category (repeatable), e.g. hallucinated-context",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (median taken)")
    parser.add_argument("--pin", type=int, default=None, help="run on this CPU only")
    parser.add_argument(
        "--before", type=Path, default=None, help="the src/ of another tree, timed alongside"
    )
    parser.add_argument("--no-guards-table", action="store_true", help="skip the guards alone")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker()
    if not args.corpus.exists():
        sys.stderr.write(f"corpus not found: {args.corpus}\n")
        return 2
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})  # the worker and every git inherit it
    cases = [
        c for c in load(args.corpus) if args.category is None or c["category"] in args.category
    ]
    cases = cases[: args.limit]
    if not cases:
        sys.stderr.write("no case of the corpus is in the categories asked for\n")
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="apply-speed-"))
    before = Before(args.before.resolve()) if args.before is not None else None
    try:
        warm_up(cases[0], scratch, before)
        Store.close_shared()  # the warm-up's workspaces keep no connection into the timing
        print(f"# apply() speed, {datetime.date.today().isoformat()}")
        pinned = f"pinned to CPU {args.pin}, " if args.pin is not None else ""
        print(
            f"\n{platform.platform()}, Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, {pinned}load average {os.getloadavg()[0]:.1f}; "
            f"{len(cases)} cases of {args.corpus.name}, {args.repeat} run(s) each; "
            f"temp dir {scratch.parent}"
            + (f"; before: {args.before}" if args.before is not None else "")
            + "\n"
        )
        walls, cpus = time_configs(cases, args.repeat, scratch, before)
        print("\n".join(speed_table(walls, cpus)))
        print(
            f"\nclosing the store a `full` call opened (after its timing): median "
            f"{statistics.median(CLOSES):.2f} ms, p99 {percentile(CLOSES, 0.99):.2f} ms"
        )
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}", flush=True)
        if args.no_guards_table:
            return 0
        staged = staged_changes(cases, scratch)
        print("\nguards alone, on the staged changes (no I/O):\n")
        print("| guards | median ms | p99 ms | max ms |")
        print("| --- | ---: | ---: | ---: |")
        print(row("all", time_guards(staged, Policy())))
        print(
            row("all but syntax", time_guards(staged, Policy(guards=GuardSwitches(syntax=False))))
        )
        only_syntax = GuardSwitches(**{g.NAME: g.NAME == "syntax" for g in GUARDS})
        print(row("syntax only", time_guards(staged, Policy(guards=only_syntax))))
        print(
            row(
                "syntax only, old text seen",
                time_guards(staged, Policy(guards=only_syntax), seen=True),
            )
        )
        only_secrets = GuardSwitches(**{g.NAME: g.NAME == "secrets" for g in GUARDS})
        print(row("secrets only", time_guards(staged, Policy(guards=only_secrets))))
    finally:
        if before is not None:
            before.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
