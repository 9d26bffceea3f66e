"""Mutation evidence for the engine: plant one fault at a time, see which test layer notices.

Run: `python bench/mutate_engine.py [--only ID,...] [--first-kill] [--out docs/verification.md]`.

Each mutation is a literal one-place rewrite of an engine file. For each, the tree (`src/`,
`tests/`, `pyproject.toml`) is copied to a temporary directory beside a link to `../shared`, the
mutation is written into the copy (the real tree is never edited), and every test layer is run
there with the copy's `src/` first on the import path. A layer kills the mutant when pytest
reports a failure or error, or runs past the timeout. The results go to `docs/verification.md`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = "src/patchsmith/engine"
TIMEOUT_S = 600
NO_TESTS_COLLECTED = 5


@dataclass(frozen=True)
class Mutation:
    """Replace `old` (which must occur exactly once) with `new` in `path`."""

    id: str
    path: str
    what: str
    old: str
    new: str
    note: str = ""
    """Why it may survive the pipeline-level layers, and the test that kills it."""


@dataclass(frozen=True)
class Layer:
    """A group of test files, run together."""

    name: str
    patterns: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    marker: str = ""
    """A pytest `-m` expression selecting tests inside the files (hypothesis marks `@given`)."""

    def files(self, root: Path) -> list[str]:
        found: set[str] = set()
        for pattern in self.patterns:
            found.update(str(p.relative_to(root)) for p in root.glob(pattern))
        for pattern in self.exclude:
            found.difference_update(str(p.relative_to(root)) for p in root.glob(pattern))
        return sorted(found)


class Verdict(StrEnum):
    """What one layer did with one mutant."""

    KILLED = "killed"
    ERROR = "error"
    TIMEOUT = "timeout"
    SURVIVED = "survived"
    NOT_RUN = "not run"


LAYERS = (
    Layer("parity", ("tests/engine/test_parity_*.py",)),
    Layer(
        "unit", ("tests/engine/test_*.py",), ("tests/engine/test_parity_*.py",), "not hypothesis"
    ),
    Layer(
        "property", ("tests/engine/test_*.py",), ("tests/engine/test_parity_*.py",), "hypothesis"
    ),
    Layer("oracle", ("tests/oracle/test_oracle.py",)),
)

_C = f"{ENGINE}/compat.py"
_J = f"{ENGINE}/_js.py"
_D = f"{ENGINE}/jsdiff.py"
_M = f"{ENGINE}/dmp.py"
_T = f"{ENGINE}/textlines.py"
_L = f"{ENGINE}/locate.py"
_S = f"{ENGINE}/splice.py"
_H = f"{ENGINE}/hunks.py"
_I = f"{ENGINE}/indent.py"
_E = f"{ENGINE}/exact.py"
_Z = f"{ENGINE}/lazy.py"

MUTATIONS = (
    Mutation(
        "C01",
        _C,
        "short-context threshold 10 -> 9",
        "_SHORT_CONTEXT = 10\n",
        "_SHORT_CONTEXT = 9\n",
    ),
    Mutation(
        "C02",
        _C,
        "refuse a repeated short match only past 2 occurrences",
        "content.count(before) > 1",
        "content.count(before) > 2",
    ),
    Mutation(
        "C03",
        _C,
        "hunk line length in code points, not UTF-16 units",
        "        if utf16_len(line) < 2:\n            op, content",
        "        if len(line) < 2:\n            op, content",
    ),
    Mutation(
        "C04",
        _C,
        "blank-line preprocessor loses its final newline",
        '    return js_trim(text) + "\\n"',
        "    return js_trim(text)",
    ),
    Mutation(
        "C05",
        _C,
        "blank-line-stripping retries never run",
        "        if strip:\n            texts = (",
        "        if False:\n            texts = (",
    ),
    Mutation(
        "C06",
        _C,
        "search and replace replaces every occurrence",
        "    return replace_first(original, search, replace)",
        "    return original.replace(search, replace)",
    ),
    Mutation(
        "C07",
        _C,
        "new-lines-explicit line-loss limit 0.66 -> 0.5",
        "len(before_lines) * 0.66",
        "len(before_lines) * 0.5",
    ),
    Mutation(
        "C08",
        _C,
        "new-lines-explicit keeps a rebuilt text shorter than 10 units",
        "    if not rebuilt or utf16_len(js_trim(rebuilt)) < _SHORT_CONTEXT:",
        "    if not rebuilt:",
    ),
    Mutation(
        "C09",
        _C,
        "partial hunk tries following context first",
        "for use_preceding in range(len(preceding), -1, -1):",
        "for use_preceding in range(len(preceding) + 1):",
    ),
    Mutation(
        "C10",
        _C,
        "no empty trailing section after a final change",
        '    if current_op != " ":\n        sections.append([])',
        "    pass",
    ),
    Mutation(
        "C11",
        _C,
        "fenced block keeps hunks only for + lines",
        '        if op in ("-", "+"):\n            keeper = True',
        '        if op == "+":\n            keeper = True',
    ),
    Mutation(
        "C12",
        _C,
        "file-header split keeps the blank line before ---",
        'hunk = hunk[:-3] if len(hunk) >= 3 and hunk[-3] == "\\n" else hunk[:-2]',
        "hunk = hunk[:-2]",
    ),
    Mutation(
        "C13",
        _C,
        "model text never counts as starting with file headers",
        '    return first.startswith("--- ") and rest.partition("\\n")[0].startswith("+++ ")',
        "    return False",
    ),
    Mutation(
        "C14",
        _C,
        "hunk sections treat any other first character as context",
        'ops.append("x" if op in ("-", "+") else " " if op == "\\n" else op)',
        'ops.append("x" if op in ("-", "+") else " ")',
    ),
    Mutation(
        "C15",
        _C,
        "back-diff walks one line less before giving up",
        "        if index > line_count:\n            return None",
        "        if index >= line_count:\n            return None",
        "unreachable through the pipeline (every hunk line ends in a newline, so the walk never"
        ' passes the end); killed by a direct test: `directly_apply_back_diff("a\\n",'
        ' [" a\\n", " b\\n"]) == "a\\nb\\n"` and `... [" a\\n", " b\\n",'
        ' " c\\n"]) is None`',
    ),
    Mutation(
        "C16",
        _C,
        "prose before the first @@ is kept",
        "    if at > 0:\n        diff = diff[at:]",
        "    if at > 0:\n        pass",
    ),
    Mutation(
        "J01",
        _J,
        "UTF-16 length counts code points",
        "    return len(text) + sum(1 for char in text if ord(char) >= _ASTRAL)",
        "    return len(text)",
    ),
    Mutation(
        "J02",
        _J,
        "trim uses Python's whitespace set",
        "    return text.strip(JS_WHITESPACE)",
        "    return text.strip()",
    ),
    Mutation(
        "J03",
        _J,
        "line split ignores CRLF",
        '_LINE_BREAK = re.compile(r"\\r?\\n")',
        '_LINE_BREAK = re.compile(r"\\n")',
    ),
    Mutation(
        "J04",
        _J,
        "charAt indexes code points",
        '    return units[index] if 0 <= index < len(units) else ""',
        '    return text[index] if 0 <= index < len(text) else ""',
    ),
    Mutation(
        "D01",
        _D,
        "Myers result keeps insertions before removals",
        "components[pos - 1], components[pos] = components[pos], components[pos - 1]",
        "pass",
    ),
    Mutation(
        "D02",
        _D,
        "formatter accepts repeated change types",
        "        if first.type == second.type:\n            return None",
        "        if first.type == second.type:\n            break",
    ),
    Mutation(
        "D03",
        _D,
        "formatter gives the first common run trailing context",
        "        after = post_context if index > 0 else 0",
        "        after = post_context",
    ),
    Mutation(
        "D04",
        _D,
        "hunk header start ignores an empty side",
        "        a_start = self.aoff + (1 if alen else 0)",
        "        a_start = self.aoff + 1",
    ),
    Mutation(
        "M01",
        _M,
        "line diff drops blank lines inside a run",
        '            if i < len(pieces) - 1 or piece != "":',
        '            if piece != "":',
    ),
    Mutation(
        "M02",
        _M,
        "no semantic cleanup",
        "    dmp.diff_cleanupSemantic(diffs)\n",
        "",
    ),
    Mutation(
        "M03",
        _M,
        "semantic lossless prefers leading whitespace",
        "                    if score >= best_score:",
        "                    if score > best_score:",
    ),
    Mutation(
        "M04",
        _M,
        "line codes for text1 are unlimited",
        "        chars1 = munge(text1, _TEXT1_MAX_LINES)",
        "        chars1 = munge(text1, _MAX_LINES)",
    ),
    Mutation(
        "X01",
        _T,
        "default: new lines always get LF",
        '    return "\\r\\n" if endings.count("\\r\\n") > endings.count("\\n") else "\\n"',
        '    return "\\n"',
    ),
    Mutation(
        "X02",
        _T,
        "default: CR of a CRLF line kept in its content",
        '        contents = [c[:-1] if c.endswith("\\r") else c for c in contents]',
        "        contents = list(contents)",
    ),
    Mutation(
        "X03",
        _L,
        "default: an ambiguous exact match takes the first place",
        "            if not options.require_unique:",
        "            if True:",
    ),
    Mutation(
        "X04",
        _S,
        "default: splice drops context lines and keeps removed ones",
        "        if ln.op is Op.CONTEXT:\n            take(at)",
        "        if ln.op is Op.REMOVE:\n            take(at)",
    ),
    Mutation(
        "X05",
        _H,
        "default: already-applied when the new lines occur anywhere",
        "    return len(found) == 1",
        "    return len(found) >= 1",
    ),
    Mutation(
        "X06",
        _L,
        "default: partial context tolerates two altered context lines",
        "    if altered > (1 if sum(usable) >= 3 else 0):",
        "    if altered > 2:",
    ),
    Mutation(
        "X07",
        _I,
        "default: a tab/space swap passes as a relative-indent prefix",
        "        if len(set(remove + add)) > 1:",
        "        if False:",
    ),
    Mutation(
        "X08",
        _L,
        "default: normalised lines go stale after a hunk is spliced in",
        "            keys[start:end] = key.lines(region)",
        "            pass",
    ),
    Mutation(
        "E01",
        _E,
        "exact path: a block found twice is taken at its first place",
        '        if found >= 0 or text.find("\\n" + wanted, at + 1) >= 0:\n            return -2',
        "        if False:\n            return -2",
    ),
    Mutation(
        "E02",
        _E,
        "exact path: line numbers far from the one exact place are ignored",
        "            if abs(start - hint) > TIE_DISTANCE and not _no_rival(",
        "            if False and not _no_rival(",
    ),
    Mutation(
        "E03",
        _E,
        "exact path: no already-applied check (new text present elsewhere)",
        "        if new_text.strip() and new_text in text:\n            return None",
        "        if False:\n            return None",
    ),
    Mutation(
        "E04",
        _E,
        "exact path: a missing final newline is added",
        "    if no_eol and text:\n        text = text[: -len(eol)]",
        "    if False:\n        text = text[: -len(eol)]",
    ),
    Mutation(
        "E05",
        _E,
        "exact path: a file mixing CRLF and LF counts as CRLF",
        '    if "\\r" in rest or "\\n" in rest:\n        return None',
        '    if "\\r" in rest:\n        return None',
    ),
    Mutation(
        "E06",
        _E,
        "exact path: later hunks' line numbers not shifted by earlier ones",
        "        shift += len(new) - len(old)",
        "        shift += 0",
        "equivalent in results: a later hunk's line number then looks far from its exact place,"
        " so the fast path checks for a rival it need not (and hands back when one may exist);"
        " the line-based path gives the same answer. Only speed changes",
    ),
    Mutation(
        "E07",
        _E,
        "exact path: the rival window starts at the named line, not 20 lines above",
        "    first = max(hint - TIE_DISTANCE, 0)",
        "    first = max(hint, 0)",
    ),
    Mutation(
        "E08",
        _E,
        "exact path: a refused hunk is never checked for being already applied",
        "    return any(line.rstrip() not in text for line in sides.new[:_LOOKED_FOR])",
        "    return True",
    ),
    Mutation(
        "R01",
        _L,
        "refusal pre-test: a removed line present does not keep stale context possible",
        "    if any(line.strip() for line in removed):\n        return False",
        "    if False:\n        return False",
    ),
    Mutation(
        "R02",
        _L,
        "refusal pre-test: every non-blank line counts as absent",
        "    return bool(key) and not _line_with_key(text, key)",
        "    return bool(key)",
    ),
    Mutation(
        "R03",
        _L,
        "refusal pre-test: partial context refused with one line missing, not two",
        "        if missing >= 2:\n            return True",
        "        if missing >= 1:\n            return True",
    ),
    Mutation(
        "Z01",
        _Z,
        "lazy merge: a tail anchor's witnesses are not moved up a line",
        "            witnesses = [w - 1 for w in witnesses",
        "            witnesses = [w for w in witnesses",
    ),
    Mutation(
        "Z02",
        _Z,
        "lazy merge: a block end settles a chunk whose anchor occurs twice after it",
        "    later = ambiguous.starts(floor=stretch, limit=2)\n    if len(later) != 1:",
        "    later = ambiguous.starts(floor=stretch, limit=1)\n    if len(later) != 1:",
    ),
)


@dataclass(frozen=True)
class Outcome:
    """One mutant: where it was planted and each layer's verdict."""

    mutation: Mutation
    line: int | None
    verdicts: tuple[tuple[str, Verdict], ...]

    @property
    def killers(self) -> list[str]:
        killing = (Verdict.KILLED, Verdict.ERROR, Verdict.TIMEOUT)
        return [
            name if verdict is Verdict.KILLED else f"{name} ({verdict.value})"
            for name, verdict in self.verdicts
            if verdict in killing
        ]


def _copy_tree(into: Path) -> Path:
    tree = into / "main"
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache", "*.pyc")
    for part in ("src", "tests"):
        shutil.copytree(ROOT / part, tree / part, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", tree / "pyproject.toml")
    shared = (ROOT / ".." / "shared").resolve()
    if shared.is_dir():
        (into / "shared").symlink_to(shared)
    return tree


def _plant(tree: Path, mutation: Mutation) -> int | None:
    """Write the mutation into the copy; return its 1-based line, None if it does not apply."""
    target = tree / mutation.path
    if not target.is_file():
        return None
    text = target.read_text(encoding="utf-8")
    if text.count(mutation.old) != 1:
        return None
    target.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
    return text[: text.index(mutation.old)].count("\n") + 1


@dataclass(frozen=True)
class Suite:
    """A layer's test files in this tree, less the tests that already fail unmutated."""

    layer: Layer
    files: tuple[str, ...]
    deselected: tuple[str, ...] = ()


def _environment(tree: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(tree / "src"), PYTHONDONTWRITEBYTECODE="1")


def _pytest(tree: Path, suite: Suite, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    command += suite.files
    if suite.layer.marker:
        command += ["-m", suite.layer.marker]
    for test in suite.deselected:
        command += ["--deselect", test]
    return subprocess.run(
        command, cwd=tree, env=_environment(tree), capture_output=True, text=True, timeout=TIMEOUT_S
    )


def _run_suite(tree: Path, suite: Suite) -> Verdict:
    try:
        done = _pytest(tree, suite, "-x")
    except subprocess.TimeoutExpired:
        return Verdict.TIMEOUT
    if done.returncode == 0:
        return Verdict.SURVIVED
    if done.returncode == 1:
        return Verdict.KILLED
    if done.returncode == NO_TESTS_COLLECTED:
        return Verdict.NOT_RUN
    return Verdict.ERROR


def _failing_tests(tree: Path, suite: Suite) -> tuple[str, ...] | None:
    """Node ids of the tests that fail unmutated; None if the suite cannot even be collected."""
    try:
        done = _pytest(tree, suite, "-rfE")
    except subprocess.TimeoutExpired:
        return None
    if done.returncode not in (0, 1):
        return None
    failed = []
    for line in done.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            failed.append(line.split(" ", 1)[1].split(" - ", 1)[0])
    return tuple(failed)


def _check_isolation(tree: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import patchsmith; print(patchsmith.__file__)"],
        cwd=tree,
        env=_environment(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    if not Path(done.stdout.strip()).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"the copy does not import its own src/: {done.stdout.strip()}")


@dataclass(frozen=True)
class Baseline:
    """Each layer on the unmutated tree: usable suites, and why the others are not used."""

    suites: tuple[Suite, ...]
    unusable: tuple[tuple[str, str], ...]


def baseline() -> Baseline:
    """Run every layer unmutated; deselect tests that already fail, drop what cannot run."""
    suites: list[Suite] = []
    unusable: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="patchsmith-mutant-") as scratch:
        tree = _copy_tree(Path(scratch))
        _check_isolation(tree)
        for layer in LAYERS:
            suite = Suite(layer, tuple(layer.files(ROOT)))
            verdict = _run_suite(tree, suite) if suite.files else Verdict.NOT_RUN
            if verdict is Verdict.SURVIVED:
                suites.append(suite)
                continue
            if verdict is Verdict.NOT_RUN:
                unusable.append((layer.name, "no tests"))
                continue
            failing = _failing_tests(tree, suite)
            if failing is None:
                unusable.append((layer.name, f"{verdict.value} before any mutation"))
                continue
            trimmed = Suite(layer, suite.files, failing)
            if _run_suite(tree, trimmed) is Verdict.SURVIVED:
                suites.append(trimmed)
            else:
                unusable.append((layer.name, "flaky before any mutation"))
    return Baseline(tuple(suites), tuple(unusable))


def run_mutant(mutation: Mutation, suites: Sequence[Suite], first_kill: bool) -> Outcome | None:
    """Plant `mutation` in a fresh copy and run the usable layers; None if it no longer applies."""
    with tempfile.TemporaryDirectory(prefix="patchsmith-mutant-") as scratch:
        tree = _copy_tree(Path(scratch))
        line = _plant(tree, mutation)
        if line is None:
            return None
        verdicts: list[tuple[str, Verdict]] = []
        killed = False
        for suite in suites:
            if killed and first_kill:
                verdicts.append((suite.layer.name, Verdict.NOT_RUN))
                continue
            verdict = _run_suite(tree, suite)
            killed = killed or verdict in (Verdict.KILLED, Verdict.ERROR, Verdict.TIMEOUT)
            verdicts.append((suite.layer.name, verdict))
        return Outcome(mutation, line, tuple(verdicts))


def render(
    outcomes: Sequence[Outcome],
    skipped: Sequence[Mutation],
    base: Baseline,
    first_kill: bool,
) -> str:
    """docs/verification.md: what was planted, where, and what noticed."""
    now = datetime.datetime.now().astimezone().isoformat(timespec="minutes")
    out = [
        "## Mutation evidence",
        "",
        f"Generated by `python bench/mutate_engine.py` on {now}. Each row is one fault planted",
        "in a temporary copy of the tree (never the real one); a layer *kills* the mutant when",
        "its tests fail (or error, or time out) with the fault in place."
        + (" Layers after the first kill were not run (`--first-kill`)." if first_kill else ""),
        "",
        "### Test layers",
        "",
        "| layer | files | unmutated run |",
        "| --- | --- | --- |",
    ]
    for suite in base.suites:
        listed = ", ".join(f"`{f.removeprefix('tests/')}`" for f in suite.files)
        if suite.layer.marker:
            listed += f" with `-m '{suite.layer.marker}'`"
        state = "passes"
        if suite.deselected:
            state += f" once {len(suite.deselected)} already-failing tests are deselected"
        out.append(f"| {suite.layer.name} | {listed} | {state} |")
    out += [f"| {name} | - | not used: {why} |" for name, why in base.unusable]
    survivors = [o for o in outcomes if not o.killers]
    killed = len(outcomes) - len(survivors)
    out += [
        "",
        f"### Mutants: {killed} of {len(outcomes)} killed",
        "",
        "| id | mutation | location | killed by |",
        "| --- | --- | --- | --- |",
    ]
    for outcome in outcomes:
        m = outcome.mutation
        killers = ", ".join(outcome.killers) or "**SURVIVED**"
        out.append(
            f"| {m.id} | {m.what} | `{m.path.removeprefix('src/')}:{outcome.line}` | {killers} |"
        )
    if skipped:
        out += ["", "Not planted (the code they target has changed since they were written):", ""]
        out += [f"- {m.id} `{m.path}`: {m.what}" for m in skipped]
    if survivors:
        out += ["", "### Survivors", ""]
        out += [
            f"- {o.mutation.id}: {o.mutation.what}"
            + (f": {o.mutation.note}" if o.mutation.note else "")
            for o in survivors
        ]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", default="", help="comma-separated mutation ids")
    parser.add_argument("--first-kill", action="store_true", help="stop at the first killing layer")
    parser.add_argument("--out", default=str(ROOT / "docs" / "verification.md"))
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.id in args.only.split(",")]
    if args.list:
        for m in chosen:
            text = (ROOT / m.path).read_text(encoding="utf-8") if (ROOT / m.path).is_file() else ""
            state = "ok" if text.count(m.old) == 1 else "DOES NOT APPLY"
            print(f"{m.id}  {m.path}: {m.what}  [{state}]")
        return 0
    base = baseline()
    print(
        "baseline: "
        + ", ".join(f"{x.layer.name} ({len(x.deselected)} deselected)" for x in base.suites)
        + "".join(f"; {name} not used: {why}" for name, why in base.unusable),
        flush=True,
    )
    outcomes: list[Outcome] = []
    skipped: list[Mutation] = []
    for mutation in chosen:
        started = time.monotonic()
        outcome = run_mutant(mutation, base.suites, args.first_kill)
        if outcome is None:
            skipped.append(mutation)
            print(f"{mutation.id}: not planted (target text changed)", flush=True)
            continue
        outcomes.append(outcome)
        verdicts = " ".join(f"{n}={v.value}" for n, v in outcome.verdicts)
        print(f"{mutation.id}: {verdicts}  ({time.monotonic() - started:.0f}s)", flush=True)
    write_section(Path(args.out), render(outcomes, skipped, base, args.first_kill))
    print(f"wrote {args.out}")
    return 1 if any(not o.killers for o in outcomes) else 0


BEGIN = (
    "<!-- mutation:begin (generated by bench/mutate_engine.py; edits inside are overwritten) -->"
)
END = "<!-- mutation:end -->"


def write_section(path: Path, section: str) -> None:
    """Put `section` between the markers in `path`, keeping the rest of the document."""
    block = f"{BEGIN}\n{section.rstrip()}\n{END}"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN.split(" (")[0] in text and END in text:
        head = text[: text.index(BEGIN.split(" (")[0])]
        tail = text[text.index(END) + len(END) :]
        text = head + block + tail
    else:
        text = "# Engine verification\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
