"""Worst-case inputs from the adversarial review (issue 7): time and peak memory per case.

Run: `python bench/adversarial.py [--only NAME...] [--out docs/performance.md]`.

Each case runs in a fresh Python subprocess: it builds its workspace and model text in a
temporary directory, then calls the public API once (`patchsmith.apply`, or
`patchsmith.propose` for proposals) and reports the call's wall time and the process's
peak resident memory (`ru_maxrss`, which includes building the input). The budget for
every case is 2 s and 512 MB; a case over budget is marked. With `--out`, the table
replaces the part of that file between the `adversarial:begin`/`adversarial:end` markers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME_BUDGET_S = 2.0
MEMORY_BUDGET_MB = 512

# Every case is a Python snippet run in a child process; it defines `root` (a workspace
# directory to fill) and `call()` (the one timed API call). `ws(files)` writes files.
_PRELUDE = """
import resource, sys, tempfile, time, json
from pathlib import Path
sys.path.insert(0, {src!r})
import patchsmith
from patchsmith.attempt.api import apply
from patchsmith.attempt.propose import propose
root = Path(tempfile.mkdtemp(prefix="adversarial-"))
def ws(files):
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
"""

_EPILOGUE = """
warm = "--- a/warm.txt\\n+++ b/warm.txt\\n@@ -1 +1 @@\\n-a\\n+b\\n"
apply(warm, tempfile.mkdtemp(), record=False)  # imports and caches, not timed
started = time.perf_counter()
report = call()
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
codes = sorted({e.code.value for e in report.errors})
print(json.dumps({"seconds": elapsed, "peak_mb": peak, "status": report.status.value,
                  "codes": codes}))
"""


@dataclass(frozen=True)
class Case:
    name: str
    what: str
    body: str


CASES = (
    Case(
        "56 MB file, one changed line",
        "a 56 MB `.py` file; the size limit refuses it before it is read or parsed",
        """
        line = "x_value = compute(1, 2, 3)  # padding text to make the lines long enough\\n"
        ws({"big.py": "first = 1\\n" + line * (56 * 1024 * 1024 // len(line))})
        diff = "--- a/big.py\\n+++ b/big.py\\n@@ -1,1 +1,1 @@\\n-first = 1\\n+first = 2\\n"
        def call(): return apply(diff, root, record=False)
        """,
    ),
    Case(
        "20 MB line in a hunk",
        "a hunk whose removed line is 20 MB long, against a small file",
        """
        ws({"a.py": "x = 1\\n"})
        diff = "--- a/a.py\\n+++ b/a.py\\n@@ -1 +1 @@\\n-" + "x" * 20_000_000 + "\\n+y\\n"
        def call(): return apply(diff, root, record=False)
        """,
    ),
    Case(
        "20k hunks, one file",
        "20,000 one-line hunks applied to a 60,000-line file",
        """
        ws({"big.txt": "".join(f"line {i}\\n" for i in range(60_000))})
        diff = "--- a/big.txt\\n+++ b/big.txt\\n" + "".join(
            f"@@ -{i * 3 + 1} +{i * 3 + 1} @@\\n-line {i * 3}\\n+LINE {i * 3}\\n"
            for i in range(20_000))
        def call(): return apply(diff, root, record=False)
        """,
    ),
    Case(
        "20k file sections",
        "20,000 `---`/`+++` sections (1 MB) naming files that do not exist",
        """
        ws({"a.py": "x = 1\\n"})
        diff = "".join(f"--- a/f{i}.py\\n+++ b/f{i}.py\\n@@ -1 +1 @@\\n-x\\n+y\\n"
                       for i in range(20_000))
        def call(): return apply(diff, root, record=False)
        """,
    ),
    Case(
        "100k fences",
        "100,000 markdown fence lines and nothing else",
        """
        ws({"a.py": "x = 1\\n"})
        text = "```\\n```\\n" * 50_000
        def call(): return apply(text, root, record=False)
        """,
    ),
    Case(
        "10k fenced whole files",
        "10,000 path lines each followed by a fenced file (40k fence lines in all)",
        """
        ws({"a.py": "x = 1\\n"})
        text = "".join(f"f{i}.py\\n```python\\nx = {i}\\n```\\n" for i in range(10_000))
        def call(): return apply(text, root, record=False, check=True)
        """,
    ),
    Case(
        "repetitive SEARCH block",
        "a 19 KB SEARCH of repeated lines whose REPLACE reorders them (was cubic)",
        """
        search = "a = 1\\nb = 2\\n" * 800
        replace = "b = 2\\na = 1\\nc = 3\\n" * 800
        ws({"m.py": "x = 0\\n" + search + "y = 0\\n"})
        text = f"m.py\\n<<<<<<< SEARCH\\n{search}=======\\n{replace}>>>>>>> REPLACE\\n"
        def call(): return apply(text, root, record=False)
        """,
    ),
    Case(
        "repetitive SEARCH, no match",
        "a 2,000-line SEARCH of repeated lines that matches nowhere (fuzzy search bounded)",
        """
        body = "".join("    x = 1\\n" if i % 3 else "    y = 2\\n" for i in range(2000))
        ws({"m.py": "def f():\\n" + body})
        search = "def f():\\n" + body.replace("y = 2", "y = 3", 1) + "    z = 9\\n"
        text = (f"m.py\\n<<<<<<< SEARCH\\n{search}=======\\n"
                f"{search.replace('z = 9', 'z = 8')}>>>>>>> REPLACE\\n")
        def call(): return apply(text, root, record=False)
        """,
    ),
    Case(
        "deep JSON to apply",
        "100,000 nested `[` given to `apply` (tool-call detection)",
        """
        ws({"a.py": "x = 1\\n"})
        def call(): return apply("[" * 100_000, root, record=False)
        """,
    ),
    Case(
        "deep JSON proposal",
        "100,000 nested `[` given to `propose`",
        """
        ws({"a.py": "x = 1\\n"})
        def call(): return propose("[" * 100_000, root, record=False)
        """,
    ),
    Case(
        "lone surrogate path",
        "a str_replace call whose path holds `\\ud800`",
        """
        ws({"a.py": "x = 1\\n"})
        call_text = ('{"command": "str_replace", "path": "a\\\\ud800.py", '
                     '"old_str": "x", "new_str": "y"}')
        def call(): return apply(call_text, root, record=True)
        """,
    ),
    Case(
        "path-less hunk, 3,000 files",
        "a hunk without file names in a workspace of 3,000 files, one of them 3 MB",
        """
        files = {f"pkg{i % 30}/m{i}.py": f"def f{i}():\\n    return {i}\\n" for i in range(3000)}
        files["big/data.py"] = "# filler line for size\\n" * 130_000
        files["pkg0/target.py"] = "def target():\\n    value = 1\\n    return value\\n"
        ws(files)
        diff = "@@ @@\\n def target():\\n-    value = 1\\n+    value = 2\\n     return value\\n"
        def call(): return apply(diff, root, record=False)
        """,
    ),
    Case(
        "elision across functions",
        "`...` after `def foo():` whose only completion is in the next function (refused)",
        """
        funcs = "".join(f"def f{i}():\\n    a = {i}\\n    return 0\\n\\n\\n" for i in range(2000))
        ws({"m.py": "def foo():\\n    a = 1\\n    return 0\\n\\n\\n" + funcs
            + "def bar():\\n    return 1\\n"})
        text = ("m.py\\n<<<<<<< SEARCH\\ndef foo():\\n    ...\\n    return 1\\n=======\\n"
                "def foo():\\n    ...\\n    return 2\\n>>>>>>> REPLACE\\n")
        def call(): return apply(text, root, record=False)
        """,
    ),
    Case(
        "1,000-chunk lazy snippet",
        "a 2.2 MB `.js` file (110,000 lines) edited by a 1,000-chunk lazy snippet whose chunks "
        "start and end with lines (`}`, blank) that occur 22,000 times",
        """
        blocks = "".join(f"function fn_{i}(alpha, beta) {{\\n  const value = compute(alpha, "
                         f"beta, {i});\\n  return value + {i};\\n}}\\n\\n" for i in range(22_000))
        ws({"m.js": blocks})
        chunks = "".join(f"// ... existing code ...\\n}}\\n\\nfunction fn_{i}(alpha, beta) {{\\n"
                         f"  const value = compute(alpha, beta, {i}) + 1;\\n"
                         f"  return value + {i};\\n}}\\n\\n" for i in range(1, 22_000, 22))
        text = "m.js\\n```js\\n" + chunks + "// ... existing code ...\\n```\\n"
        def call(): return apply(text, root, record=False)
        """,
    ),
    Case(
        "line numbers vs exact match",
        "trailing spaces at the named lines, an exact copy far away: AMBIGUOUS_MATCH",
        """
        pad = "".join(f"def h{i}():\\n    return {i}\\n\\n\\n" for i in range(5000))
        ws({"m.py": "def load_a(p):\\n    data = read(p)   \\n    return parse(data)\\n\\n\\n"
            + pad + "def load_b(p):\\n    data = read(p)\\n    return parse(data)\\n"})
        diff = ("--- a/m.py\\n+++ b/m.py\\n@@ -2,2 +2,2 @@\\n     data = read(p)\\n"
                "-    return parse(data)\\n+    return parse(data, strict=True)\\n")
        def call(): return apply(diff, root, record=False)
        """,
    ),
    Case(
        "YAML alias bomb, config recipe dry run",
        "nine levels of nine aliases (under 500 bytes, 387 million nodes expanded) in a file a "
        "`config_key_rename` recipe reads: skipped as an alias bomb before it is built",
        """
        lines = ['spec: {serviceAccount: x}', 'a: &a ["lol","lol","lol","lol","lol","lol","lol"]']
        for prev, name in zip("abcdefgh", "bcdefghi"):
            lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        ws({"deploy.yaml": "\\n".join(lines) + "\\n"})
        from patchsmith.codemod.recipe import parse_recipe
        recipe = parse_recipe("recipe_id: r\\nlanguage: yaml\\nsummary: s\\noperations:\\n"
                              "  - {type: config_key_rename, from: spec.serviceAccount, "
                              "to: serviceAccountName}\\n")
        def call(): return patchsmith.run_recipe(recipe, root)
        """,
    ),
)


@dataclass(frozen=True)
class Measure:
    case: Case
    seconds: float
    peak_mb: float
    outcome: str

    @property
    def within(self) -> bool:
        return self.seconds < TIME_BUDGET_S and self.peak_mb < MEMORY_BUDGET_MB


def run_case(case: Case) -> Measure:
    script = _PRELUDE.format(src=str(ROOT / "src")) + textwrap.dedent(case.body) + _EPILOGUE
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return Measure(case, float("nan"), float("nan"), f"crashed: {tail}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    outcome = result["status"] + (f" ({', '.join(result['codes'])})" if result["codes"] else "")
    return Measure(case, result["seconds"], result["peak_mb"], outcome)


def table(measures: list[Measure]) -> str:
    lines = [
        f"Run {datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')} on "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}; "
        f"budget {TIME_BUDGET_S:g} s and {MEMORY_BUDGET_MB} MB per case.",
        "",
        "| case | input | outcome | seconds | peak MB | within budget |",
        "| --- | --- | --- | ---: | ---: | :---: |",
    ]
    for m in measures:
        lines.append(
            f"| {m.case.name} | {m.case.what} | {m.outcome} | {m.seconds:.2f} | "
            f"{m.peak_mb:.0f} | {'yes' if m.within else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def _write(out: Path, body: str) -> None:
    begin = "<!-- adversarial:begin (generated by bench/adversarial.py; edits inside are lost) -->"
    end = "<!-- adversarial:end -->"
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = f"{head}{begin}\n{body}{end}{tail}"
    else:
        text = f"{text.rstrip()}\n\n{begin}\n{body}{end}\n"
    out.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="run cases whose name has this")
    parser.add_argument("--out", type=Path, help="write the table into this Markdown file")
    args = parser.parse_args(argv)
    measures = []
    for case in CASES:
        if args.only and not any(word in case.name for word in args.only):
            continue
        measure = run_case(case)
        print(
            f"{case.name:32} {measure.seconds:6.2f} s {measure.peak_mb:7.0f} MB  {measure.outcome}",
            flush=True,
        )
        measures.append(measure)
    body = table(measures)
    if args.out is not None:
        _write(args.out, body)
    else:
        print(body)
    return 0 if all(m.within for m in measures) else 1


if __name__ == "__main__":
    sys.exit(main())
