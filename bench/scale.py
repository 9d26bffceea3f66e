"""How `patchsmith.apply()` scales: file size × number of hunks, time and peak memory.

Run: `python bench/scale.py [--quick] [--lines N,..] [--hunks N,..] [--before SRC] [--out FILE]`.

Each cell runs in a fresh Python subprocess. The child writes one text file of L lines
(unique, code-like lines of ~36 bytes), changes every (L / H)-th line, renders the exact
unified diff of that change (hunks of 3 context lines, as `diff -u` makes them), and calls
`patchsmith.apply()` once on it with every guard on, a durable commit and the audit record
(the policy's file-size limit is raised to fit the largest file). The apply is timed
alone; then the same reply is applied again to a fresh copy under `tracemalloc`, whose peak
is the memory the call allocated (the file and the reply, built before, are not counted).
A cell whose hunks would overlap (fewer than 8 lines apart) is skipped.

Two more cases feed `apply()` a 50 MB reply: one that is a diff rewriting a 1.4M-line file
in one hunk, and one that is 50 MB of prose with no edit in it. The table prints the growth
ratios between neighbouring cells: time and memory should grow no faster than the input
(×10 lines or ×10 hunks should cost at most about ×10).

With `--out`, the tables replace the part of that file between the `scale:begin` and
`scale:end` markers. `--lines` and `--hunks` measure only those rows and columns (the
slow 1M-line row alone: `--lines 1000000 --no-huge`). With `--before SRC` (the `src/`
folder of another patchsmith tree), every cell is measured with that tree too, the two
runs of a cell one after the other (which goes first alternates), and a before/after
table is printed: a comparison under the same load.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINES = (1_000, 10_000, 100_000, 1_000_000)
HUNKS = (1, 10, 100, 1_000)
QUICK_LINES = (1_000, 10_000, 100_000)
MIN_SPACING = 8
"""Hunks closer than this would share context lines (diff -u merges them)."""

_CHILD = """
import difflib, gc, json, resource, shutil, sys, tempfile, time, tracemalloc
from pathlib import Path
sys.path.insert(0, {src!r})
import patchsmith
from patchsmith.policy import Policy

lines, hunks = {lines}, {hunks}
policy = Policy(max_file_bytes=1 << 31)

def workspace(text):
    root = Path(tempfile.mkdtemp(prefix="scale-"))
    (root / "data.txt").write_text(text)
    return root

old = [f"value_{{i:07d}} = compute({{i}}, {{i % 97}})  # row\\n" for i in range(lines)]
new = list(old)
step = lines // hunks
for k in range(hunks):
    i = k * step + step // 2
    new[i] = old[i].replace("compute", "recompute")
reply = "".join(difflib.unified_diff(old, new, "a/data.txt", "b/data.txt", n=3))
text = "".join(old)
del new
warm = workspace("a\\n")
patchsmith.apply("--- a/data.txt\\n+++ b/data.txt\\n@@ -1 +1 @@\\n-a\\n+b\\n", warm)
first, second = workspace(text), workspace(text)
gc.collect()
started = time.perf_counter()
report = patchsmith.apply(reply, first, policy=policy)
elapsed = time.perf_counter() - started
assert report.status.value == "applied", [e.message for e in report.errors]
del report
gc.collect()
tracemalloc.start()
again = patchsmith.apply(reply, second, policy=policy)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({{"seconds": elapsed, "peak_mb": peak / 2**20,
                  "reply_mb": len(reply) / 2**20, "file_mb": len(text) / 2**20,
                  "hunks": reply.count("\\n@@ "), "status": again.status.value}}))
for root in (warm, first, second):
    shutil.rmtree(root)
"""

_HUGE = """
import gc, json, shutil, sys, tempfile, time, tracemalloc
from pathlib import Path
sys.path.insert(0, {src!r})
import patchsmith
from patchsmith.policy import Policy

kind = {kind!r}
root = Path(tempfile.mkdtemp(prefix="scale-"))
warm = Path(tempfile.mkdtemp(prefix="scale-"))
(warm / "w.txt").write_text("a\\n")
patchsmith.apply("--- a/w.txt\\n+++ b/w.txt\\n@@ -1 +1 @@\\n-a\\n+b\\n", warm)
if kind == "diff":
    count = 1_400_000
    old = [f"row {{i:07d}} old\\n" for i in range(count)]
    (root / "big.txt").write_text("".join(old))
    body = "".join(f"-{{line}}+{{line.replace('old', 'new')}}" for line in old)
    reply = f"--- a/big.txt\\n+++ b/big.txt\\n@@ -1,{{count}} +1,{{count}} @@\\n" + body
    del old, body
    policy = Policy(max_file_bytes=1 << 31)
else:
    sentence = "The quick brown fox jumps over the lazy dog, then explains why. "
    reply = (sentence * (50 * 2**20 // len(sentence)) + "\\n") * 1
    policy = None
gc.collect()
tracemalloc.start()
started = time.perf_counter()
report = patchsmith.apply(reply, root, policy=policy)
elapsed = time.perf_counter() - started
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
codes = sorted({{e.code.value for e in report.errors}})
print(json.dumps({{"seconds": elapsed, "peak_mb": peak / 2**20,
                  "reply_mb": len(reply) / 2**20, "status": report.status.value,
                  "codes": codes}}))
shutil.rmtree(root)
shutil.rmtree(warm)
"""


@dataclass(frozen=True)
class Cell:
    lines: int
    hunks: int
    seconds: float
    peak_mb: float
    reply_mb: float
    file_mb: float
    real_hunks: int


def _child(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(lines: int, hunks: int, src: Path = ROOT / "src") -> Cell | None:
    if lines // hunks < MIN_SPACING:
        return None
    data = _child(_CHILD.format(src=str(src), lines=lines, hunks=hunks))
    return Cell(
        lines,
        hunks,
        float(str(data["seconds"])),
        float(str(data["peak_mb"])),
        float(str(data["reply_mb"])),
        float(str(data["file_mb"])),
        int(str(data["hunks"])),
    )


def _fmt_lines(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1_000}k"


def _times_file(cell: Cell) -> str:
    """The peak memory as a multiple of the file's size (the target is at most 4×)."""
    return f"{cell.peak_mb / cell.file_mb:.1f}× file" if cell.file_mb > 0 else "–"


def _ratio(a: float, b: float) -> str:
    return f"×{b / a:.1f}" if a > 0 else "–"


def _growth_rows(
    cells: dict[tuple[int, int], Cell | None],
    growing: list[int],
    fixed: list[int],
    label: Callable[[int, int], str],
    *,
    grow_lines: bool,
) -> list[str]:
    """One table row per step of the `growing` axis: time and memory ratios per `fixed` value."""
    rows = []
    for small, big in pairwise(growing):
        row = [label(small, big)]
        for other in fixed:
            key_a, key_b = (
                ((small, other), (big, other)) if grow_lines else ((other, small), (other, big))
            )
            a, b = cells.get(key_a), cells.get(key_b)
            row.append(
                "–"
                if a is None or b is None
                else f"{_ratio(a.seconds, b.seconds)} / {_ratio(a.peak_mb, b.peak_mb)}"
            )
        rows.append("| " + " | ".join(row) + " |")
    return rows


def tables(
    cells: dict[tuple[int, int], Cell | None], huge: list[tuple[str, dict[str, object]]]
) -> str:
    lines_axis = sorted({k[0] for k in cells})
    hunks_axis = sorted({k[1] for k in cells})
    out = [
        f"Run {datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')} on "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}.",
        "",
        "Seconds of one `apply()` call (every guard, durable commit, audit record), then the "
        "MB it allocated at its peak (`tracemalloc`) and that peak as a multiple of the file's "
        "size:",
        "",
        "| lines (file MB) | " + " | ".join(f"{h} hunks" for h in hunks_axis) + " |",
        "| --- | " + " | ".join("---:" for _ in hunks_axis) + " |",
    ]
    for n in lines_axis:
        file_mb = next((c.file_mb for (ln, _), c in cells.items() if ln == n and c), 0.0)
        row = [f"{_fmt_lines(n)} ({file_mb:.1f})"]
        for h in hunks_axis:
            cell = cells.get((n, h))
            row.append(
                "–"
                if cell is None
                else f"{cell.seconds:.3f} s / {cell.peak_mb:.1f} MB ({_times_file(cell)})"
            )
        out.append("| " + " | ".join(row) + " |")
    out += [
        "",
        "Growth when the file is ten times longer (same hunks): time ratio / memory ratio "
        "(linear is about ×10):",
        "",
        "| lines | " + " | ".join(f"{h} hunks" for h in hunks_axis) + " |",
        "| --- | " + " | ".join("---:" for _ in hunks_axis) + " |",
    ]
    out += _growth_rows(
        cells,
        lines_axis,
        hunks_axis,
        lambda small, big: f"{_fmt_lines(small)} → {_fmt_lines(big)}",
        grow_lines=True,
    )
    out += [
        "",
        "Growth with ten times the hunks (same file): time ratio / memory ratio:",
        "",
        "| hunks | " + " | ".join(f"{_fmt_lines(n)} lines" for n in lines_axis) + " |",
        "| --- | " + " | ".join("---:" for _ in lines_axis) + " |",
    ]
    out += _growth_rows(
        cells, hunks_axis, lines_axis, lambda small, big: f"{small} → {big}", grow_lines=False
    )
    if huge:
        out += [
            "",
            "A 50 MB reply:",
            "",
            "| reply | MB | outcome | seconds | peak MB allocated |",
            "| --- | ---: | --- | ---: | ---: |",
        ]
        for what, data in huge:
            codes = data.get("codes") or []
            outcome = str(data["status"]) + (
                f" ({', '.join(str(c) for c in codes)})"
                if isinstance(codes, list) and codes
                else ""
            )
            out.append(
                f"| {what} | {float(str(data['reply_mb'])):.0f} | {outcome} | "
                f"{float(str(data['seconds'])):.2f} | {float(str(data['peak_mb'])):.0f} |"
            )
    return "\n".join(out) + "\n"


def replace_between(path: Path, text: str) -> None:
    begin = "<!-- scale:begin (generated by bench/scale.py; edits inside are lost) -->"
    end = "<!-- scale:end -->"
    document = path.read_text()
    if begin in document and end in document:
        head, rest = document.split(begin, 1)
        _, tail = rest.split(end, 1)
        document = f"{head}{begin}\n{text}{end}{tail}"
    else:
        document += f"\n{begin}\n{text}{end}\n"
    path.write_text(document)


def _counts(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part.strip())


def _shown(cell: Cell | None) -> str:
    if cell is None:
        return "skipped (hunks would overlap)"
    return (
        f"{cell.seconds:.3f} s, {cell.peak_mb:.1f} MB ({_times_file(cell)}), "
        f"reply {cell.reply_mb:.1f} MB, {cell.real_hunks} hunks"
    )


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "–"
    return f"{cell.seconds:.3f} s / {cell.peak_mb:.1f} MB ({_times_file(cell)})"


def before_after_table(
    pairs: dict[tuple[int, int], tuple[Cell | None, Cell | None]], before: Path
) -> str:
    """One row per cell: before and after, measured one after the other."""
    out = [
        f"Before (`{before}`) and after, each cell's two runs one after the other:",
        "",
        "| cell | before: seconds / peak MB (× file) | after: seconds / peak MB (× file) "
        "| time ratio | memory ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for (lines, hunks), (old, new) in pairs.items():
        if old is None or new is None:
            continue
        out.append(
            f"| {_fmt_lines(lines)} lines × {hunks} hunks | {_cell_text(old)} | "
            f"{_cell_text(new)} | {new.seconds / old.seconds:.2f}× | "
            f"{new.peak_mb / old.peak_mb:.2f}× |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="files up to 100k lines only")
    parser.add_argument("--no-huge", action="store_true", help="skip the 50 MB replies")
    parser.add_argument("--out", type=Path, help="write the tables into this markdown file")
    parser.add_argument("--lines", type=_counts, help="only these file sizes (e.g. 1000000)")
    parser.add_argument("--hunks", type=_counts, help="only these hunk counts (e.g. 1,100)")
    parser.add_argument(
        "--before", type=Path, help="also measure the src/ folder of another tree, interleaved"
    )
    args = parser.parse_args(argv)
    cells: dict[tuple[int, int], Cell | None] = {}
    pairs: dict[tuple[int, int], tuple[Cell | None, Cell | None]] = {}
    sizes = args.lines or (QUICK_LINES if args.quick else LINES)
    for lines in sizes:
        for hunks in args.hunks or HUNKS:
            if args.before is None:
                cell = measure(lines, hunks)
            else:
                if len(pairs) % 2 == 0:
                    old = measure(lines, hunks, args.before)
                    cell = measure(lines, hunks)
                else:
                    cell = measure(lines, hunks)
                    old = measure(lines, hunks, args.before)
                pairs[(lines, hunks)] = (old, cell)
                print(
                    f"{_fmt_lines(lines):>4} lines × {hunks:>4} hunks, before: {_shown(old)}",
                    flush=True,
                )
            cells[(lines, hunks)] = cell
            print(f"{_fmt_lines(lines):>4} lines × {hunks:>4} hunks: {_shown(cell)}", flush=True)
    huge: list[tuple[str, dict[str, object]]] = []
    if not args.no_huge:
        for kind, what in (
            ("diff", "one hunk rewriting every line of a 1.4M-line file"),
            ("prose", "prose with no edit in it"),
        ):
            data = _child(textwrap.dedent(_HUGE.format(src=str(ROOT / "src"), kind=kind)))
            huge.append((what, data))
            print(f"50 MB reply, {what}: {data}", flush=True)
    text = tables(cells, huge)
    print()
    print(text)
    if args.before is not None:
        print(before_after_table(pairs, args.before))
    if args.out is not None:
        replace_between(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
