"""How long `patchsmith.apply` takes per case, end to end: parse, locate, guards, durable commit.

Run: `python bench/apply_speed.py [CORPUS] [--limit N] [--repeat N]` (default corpus
`../shared/corpus/public.jsonl.gz`).

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
- `check`: every guard on, no record, dry run (no commit, no fsync).

Then the guards alone, on the staged changes of every case (no I/O); the row `syntax only,
old text seen` has each change's old text parsed first, untimed, as when the change before
wrote it (the syntax guard then re-parses only what changed). Figures vary by machine and
disk: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / ".." / "shared" / "corpus" / "public.jsonl.gz"

from patchsmith.attempt.api import apply  # noqa: E402
from patchsmith.guards import GUARDS, GuardContext, run_guards  # noqa: E402

try:
    from patchsmith.runtime.syntax import forget_verdicts
except ImportError:  # an older tree, timed for comparison: it caches no verdicts

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


def time_configs(
    cases: list[Case], repeat: int, scratch: Path
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per configuration, each case's median wall time and median CPU time (this process);
    configurations alternate case by case, in rotating order, so that the machine's load
    weighs on all of them alike."""
    names = list(CONFIGS)
    per_case: dict[str, list[float]] = {name: [] for name in names}
    cpu_per_case: dict[str, list[float]] = {name: [] for name in names}
    live = scratch / "live"
    live.mkdir()
    used_workspace(live)
    for number, case in enumerate(cases):
        samples: dict[str, list[float]] = {name: [] for name in names}
        cpu_samples: dict[str, list[float]] = {name: [] for name in names}
        for attempt in range(repeat):
            shift = (number + attempt) % len(names)
            for name in names[shift:] + names[:shift]:
                if name == "full, long-lived":
                    root = live
                    fresh_files(case, root)
                else:
                    root = scratch / f"c{number}-{attempt}"
                    root.mkdir()
                    materialise(case, root)
                    used_workspace(root)
                # every configuration parses this case's texts: none may reuse another's
                # verdicts (a long-lived caller keeps only its own, of other files)
                forget_verdicts()
                cpu = time.process_time_ns()
                start = time.perf_counter_ns()
                CONFIGS[name](str(case["patch"]), root)
                samples[name].append((time.perf_counter_ns() - start) / 1e6)
                cpu_samples[name].append((time.process_time_ns() - cpu) / 1e6)
                if root != live:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="time only the first N cases")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (median taken)")
    args = parser.parse_args(argv)
    if not args.corpus.exists():
        sys.stderr.write(f"corpus not found: {args.corpus}\n")
        return 2
    cases = load(args.corpus)[: args.limit]
    scratch = Path(tempfile.mkdtemp(prefix="apply-speed-"))
    try:
        warm = scratch / "warm"
        warm.mkdir()
        materialise(cases[0], warm)
        for run in CONFIGS.values():  # imports, grammar loading, first store creation
            run(str(cases[0]["patch"]), warm)
        print(f"# apply() speed, {datetime.date.today().isoformat()}")
        print(
            f"\n{platform.platform()}, Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
            f"{len(cases)} cases of {args.corpus.name}, {args.repeat} run(s) each; "
            f"temp dir {scratch.parent}\n"
        )
        print("| configuration | median ms | p99 ms | max ms | median CPU ms |")
        print("| --- | ---: | ---: | ---: | ---: |")
        walls, cpus = time_configs(cases, args.repeat, scratch)
        for name, values in walls.items():
            print(f"{row(name, values)} {statistics.median(cpus[name]):.2f} |", flush=True)
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
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
