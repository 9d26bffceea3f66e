"""Build region-unmarked omission cases from source files found on this machine.

Run: `python bench/gen_region_unmarked.py --out DIR [--per-package N]`.

`../shared/corpus/omission-public.jsonl.gz`'s `region-unmarked` cases are a bare function or
section in its new form, shown without placeholders, under half the file, whose first and
last lines are unchanged lines of the file (they were the anchors of a lazy-region case);
the intended result is the region replaced in place. That set comes from seven packages.
This generator builds the same shape from other sources, so that the thresholds of the
region merge can be chosen on one set and reported on another:

- Python: every package in this interpreter's site-packages except the public corpus's
  (click, httpx, rich, requests, markupsafe), forks of them (httpx2) and patchsmith;
- JavaScript: the packages bundled with npm (`node_modules` of the global npm);
- Java: `java.base` of a JDK's `lib/src.zip`, when one is installed.

Needs patchsmith importable (its syntax check keeps only edits after which the file still
parses, as a release's does).

For each source file (UTF-8, 45 to 3,000 lines, no CR, NUL or line over 300 characters, not
marked as generated) up
to two blocks are picked (a function, method or class: `def`/`class` by indentation,
brace blocks by their closing line), edited the way release diffs edit code (a line
changed, a line added or removed inside, a parameter added, a line appended to the body),
and shown as the new block, extended by unchanged lines above and below until its first
and last lines are unchanged, or until it reaches the start or end of the file (an `/edge`
case: its edited first or last line is the file's). A case is kept only when, as in the
public set, the region is under half of the file and its strict anchors (the shortest prefix
and suffix of its lines that occur once in the file) lie at the region's true place, but at
an edge it reaches.

Every choice comes from sha256 of the file's path and the block's line: the same machine
gives the same cases. Cases are split by source package: a package whose name hashes even
goes to the tuning half (`region-unmarked-tuning.jsonl.gz`), odd to the reporting half
(`region-unmarked-reporting.jsonl.gz`). The output holds third-party files: it is written
where `--out` says, and not meant to be committed (the tests vendor a few cases with their
provenance; see tests/data/README.md).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import random
import re
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PUBLIC_PACKAGES = frozenset(
    {"click", "httpx", "rich", "requests", "markupsafe", "axios", "commander", "patchsmith"}
)
MIN_LINES, MAX_LINES, MAX_WIDTH = 45, 3000, 300
MAX_SHARE = 0.5
"""A region is under this share of its file's lines (the public set's definition)."""

_PY_BLOCK = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+\w+")
_BRACE_BLOCK = re.compile(
    r"^(\s*)(?:(?:export\s+)?(?:async\s+)?function\b.*|"
    r"(?:public|private|protected|static|final|abstract|synchronized|\s)+"
    r"[\w<>\[\], ?]+\s+\w+\s*\(.*|"
    r"(?:async\s+)?\w+\s*\([^;]*\)\s*)\{\s*$"
)
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]{2,}\b")
_KEYWORDS = frozenset(
    [
        "def",
        "class",
        "return",
        "self",
        "None",
        "True",
        "False",
        "async",
        "await",
        "function",
        "const",
        "let",
        "var",
        "this",
        "public",
        "private",
        "protected",
        "static",
        "final",
        "void",
        "new",
        "import",
        "from",
        "for",
        "while",
        "if",
        "else",
        "elif",
        "try",
        "except",
        "finally",
        "with",
        "yield",
        "lambda",
    ]
)


@dataclass(frozen=True)
class Source:
    package: str
    path: str
    """The file's path in the case (relative, POSIX)."""
    text: str
    language: str


def python_sources() -> Iterator[Source]:
    site = Path(sysconfig.get_paths()["purelib"])
    for top in sorted(site.iterdir()):
        if not top.is_dir() or top.name.startswith(("_", ".")) or "." in top.name:
            continue
        # httpx2 and the like are forks of public packages: left out as well.
        if top.name.lower().rstrip("0123456789") in PUBLIC_PACKAGES:
            continue
        for path in sorted(top.rglob("*.py")):
            text = _readable(path.read_bytes())
            if text is not None:
                yield Source(top.name, path.relative_to(site).as_posix(), text, "python")


def javascript_sources() -> Iterator[Source]:
    root = Path("/usr/lib/node_modules/npm/node_modules")
    if not root.is_dir():
        return
    for top in sorted(root.iterdir()):
        if top.name.lower() in PUBLIC_PACKAGES or not top.is_dir():
            continue
        packages = sorted(top.iterdir()) if top.name.startswith("@") else [top]
        for package in packages:
            for path in sorted(package.rglob("*.js")):
                parts = path.relative_to(package).parts
                if "node_modules" in parts or ".min." in path.name:
                    continue
                text = _readable(path.read_bytes())
                if text is not None:
                    name = package.relative_to(root).as_posix()
                    # A path starting with `@` (a scoped package) reads as no path at all.
                    where = path.relative_to(root).as_posix().removeprefix("@")
                    yield Source(name, where, text, "javascript")


def java_sources() -> Iterator[Source]:
    jvm = Path("/usr/lib/jvm")
    archives = sorted(jvm.glob("*/lib/src.zip")) if jvm.is_dir() else []
    if not archives:
        return
    with zipfile.ZipFile(archives[-1]) as archive:
        for name in sorted(archive.namelist()):
            if not name.startswith("java.base/java/") or not name.endswith(".java"):
                continue
            text = _readable(archive.read(name))
            if text is not None:
                package = name.rsplit("/", 1)[0].replace("/", ".")
                yield Source(package, name, text, "java")


_GENERATED = re.compile(rb"(?i)code generated|@generated|do not edit|auto-?generated")


def _readable(data: bytes) -> str | None:
    """The text of a file worth an edit: as the public corpus, no generated files."""
    if b"\r" in data or b"\0" in data or _GENERATED.search(data[:2000]):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.splitlines()
    if not MIN_LINES <= len(lines) <= MAX_LINES or any(len(x) > MAX_WIDTH for x in lines):
        return None
    if not text.endswith("\n"):
        return None
    return text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(lines: list[str], language: str) -> list[tuple[int, int]]:
    """(start, end) of each function, method or class: `end` exclusive, no trailing blanks."""
    found = []
    for start, line in enumerate(lines):
        if language == "python":
            match = _PY_BLOCK.match(line)
            if not match or not line.rstrip().endswith(":"):
                continue
            end = start + 1
            depth = _indent(line)
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > depth):
                end += 1
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
        else:
            match = _BRACE_BLOCK.match(line)
            if not match or line.lstrip().startswith(("if", "for", "while", "switch", "catch")):
                continue
            depth = _indent(line)
            end = start + 1
            while end < len(lines) and not (
                _indent(lines[end]) == depth and lines[end].lstrip().startswith("}")
            ):
                end += 1
            if end == len(lines):
                continue
            end += 1
        if 4 <= end - start <= 80:
            found.append((start, end))
    return found


def _statement(line: str, language: str) -> bool:
    """A simple line inside a body: not opening or closing a block, not a decorator."""
    text = line.strip()
    if not text or text.startswith(("@", "}", "#", "//", "*", "/*")):
        return False
    return not text.endswith(("{", ":", "(", "[", ",", "\\")) and (
        language == "python" or text.endswith(";")
    )


def edit(block: list[str], language: str, rng: random.Random) -> list[str] | None:
    """The block after 1 or 2 edits of the kinds release diffs make; None if none fits."""
    new = list(block)
    closing = 0 if language == "python" else 1
    kinds = ["change", "change", "insert", "remove", "parameter", "append"]
    rng.shuffle(kinds)
    done = 0
    wanted = rng.choice((1, 1, 2))
    for kind in kinds:
        if done == wanted:
            break
        body = range(1, len(new) - closing)
        simple = [i for i in body if _statement(new[i], language)]
        if kind == "change" and simple:
            at = rng.choice(simple)
            words = [w for w in _WORD.findall(new[at]) if w not in _KEYWORDS]
            if not words:
                continue
            word = rng.choice(words)
            new[at] = re.sub(rf"\b{re.escape(word)}\b", word + "_next", new[at], count=1)
        elif kind == "insert" and simple:
            at = rng.choice(simple)
            new.insert(at + 1, _new_line(new[at], language, rng))
        elif kind == "remove" and len(simple) >= 3:
            at = rng.choice(simple)
            del new[at]
        elif kind == "parameter" and ")" in new[0]:
            head, _, tail = new[0].rpartition(")")
            extra = "extra=None" if language == "python" else "extra"
            if language == "java":
                extra = "int extra"
            joiner = "" if head.endswith("(") else ", "
            new[0] = f"{head}{joiner}{extra}){tail}"
        elif kind == "append" and simple:
            last = max(simple)
            new.insert(len(new) - closing, _new_line(new[last], language, rng))
        else:
            continue
        done += 1
    return new if done and new != block else None


def _new_line(like: str, language: str, rng: random.Random) -> str:
    indent = like[: _indent(like)]
    name = rng.choice(("state", "result", "options", "count", "value"))
    if language == "python":
        return f"{indent}_trace({name!r}, locals())"
    if language == "java":
        return f'{indent}Objects.requireNonNull({name}, "{name}");'
    return f"{indent}debug('{name}', {name});"


def _unique_prefix(file: list[str], wanted: list[str], from_end: bool) -> list[int]:
    """Where the strict anchor places `wanted` (the lazy-snippet rule): the starts of its
    shortest prefix (suffix) occurring once, or every place of the whole when none does."""
    size = len(wanted)
    for length in range(1, size + 1):
        part = wanted[size - length :] if from_end else wanted[:length]
        places = [s for s in range(len(file) - length + 1) if file[s : s + length] == part]
        if len(places) == 1:
            return [places[0] + length if from_end else places[0]]
        if not places:
            return []
    return [-1, -1]


def cases(source: Source) -> Iterator[dict[str, object]]:
    lines = source.text.splitlines()
    found = blocks(lines, source.language)
    ranked = sorted(found, key=lambda b: _digest(f"{source.path}:{b[0]}"))
    made = 0
    for start, end in ranked:
        if made == 2:
            break
        rng = random.Random(_digest(f"{source.path}:{start}:edit"))
        new_block = edit(lines[start:end], source.language, rng)
        if new_block is None:
            continue
        top, bottom = start, end
        new_region = list(new_block)
        # Unchanged lines above and below until the region starts and ends with one.
        while new_region[0] != lines[top] or rng.random() < 0.25:
            if top == 0:
                break
            top -= 1
            new_region.insert(0, lines[top])
        while new_region[-1] != lines[bottom - 1] or rng.random() < 0.25:
            if bottom == len(lines):
                break
            new_region.append(lines[bottom])
            bottom += 1
        # An edited first (last) line is kept only at the file's start (end): as in the public
        # set, where a region running to the end of the file needed no anchor there.
        at_top = new_region[0] != lines[top]
        at_end = new_region[-1] != lines[bottom - 1]
        if (at_top and top > 0) or (at_end and bottom < len(lines)) or (at_top and at_end):
            continue
        if len(new_region) >= MAX_SHARE * len(lines):
            continue
        if not at_top and _unique_prefix(lines, new_region, from_end=False) != [top]:
            continue
        if not at_end and _unique_prefix(lines, new_region, from_end=True) != [bottom]:
            continue
        if any(line.strip() and line.strip() in ("...", "// ...", "# ...") for line in new_region):
            continue
        expected = lines[:top] + new_region + lines[bottom:]
        if not _parses(source, "\n".join(expected) + "\n"):
            continue  # a release's change parses; an edit that breaks the file is no model's
        yield {
            "id": f"{source.language}/{source.path}/L{start + 1}/region-unmarked"
            + ("/edge" if at_top or at_end else ""),
            "suite": "generated-omission",
            "category": "region-unmarked",
            "format": "lazy_snippet",
            "files": {source.path: source.text},
            "patch": _reply(source.path, source.language, new_region, rng),
            "expected": {source.path: "\n".join(expected) + "\n"},
            "notes": (
                f"package {source.package}; block at line {start + 1} edited, "
                f"{len(new_region)} of {len(lines)} lines shown"
            ),
            "package": source.package,
            "share": round(len(new_region) / len(lines), 3),
        }
        made += 1


def _parses(source: Source, text: str) -> bool:
    """Whether `text` parses as cleanly as the source file does (tree-sitter; `ast` for Python)."""
    from patchsmith.runtime.syntax import parse_problems, python_error

    if source.language == "python":
        return python_error(source.text) is not None or python_error(text) is None
    before = parse_problems(source.path, source.text)
    after = parse_problems(source.path, text)
    return before is None or after is None or before.count > 0 or after.count == 0


def _reply(path: str, language: str, region: list[str], rng: random.Random) -> str:
    fence = {"python": "python", "javascript": "js", "java": "java"}[language]
    head = rng.choice((f"`{path}`:", f"**{path}**", path, f"In `{path}`:"))
    return f"{head}\n```{fence}\n" + "\n".join(region) + "\n```\n"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_PERMISSIVE = re.compile(r"(?i)\b(?:MIT|ISC|BSD)\b")
"""Licences whose files may be vendored with no more than their notice in the case."""


def provenance(language: str, package: str) -> tuple[str, str] | None:
    """(distribution and version, licence) of a Python or npm package; None when unknown or
    not permissive (Java sources are never vendored)."""
    import importlib.metadata as metadata

    if language == "python":
        names = metadata.packages_distributions().get(package, [])
        if not names:
            return None
        meta = metadata.metadata(names[0])
        licence = meta.get("License-Expression") or meta.get("License") or ""
        classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
        licence = licence if len(licence) < 60 else ""
        licence = licence or (classifiers[0].rsplit("::", 1)[-1].strip() if classifiers else "")
        named = f"{names[0]} {meta['Version']} (PyPI)"
    elif language == "javascript":
        manifest = Path("/usr/lib/node_modules/npm/node_modules") / package / "package.json"
        data = json.loads(manifest.read_text(encoding="utf-8"))
        licence = str(data.get("license") or "")
        named = f"{data.get('name', package)} {data.get('version', '?')} (npm, bundled with npm)"
    else:
        return None
    return (named, licence) if _PERMISSIVE.search(licence) else None


def vendor_sample(rows: list[dict[str, object]], size: int) -> list[dict[str, object]]:
    """`size` small cases of permissively licensed packages, one per package, each noting its
    source package, version and licence (chosen by the sha256 of their ids)."""
    chosen: list[dict[str, object]] = []
    seen: set[str] = set()
    # Regions over a third of their file, and at its edges, first: the readings the tuning
    # half decided.
    ordered = sorted(
        rows,
        key=lambda r: (
            float(str(r["share"])) <= 1 / 3 and not str(r["id"]).endswith("/edge"),
            _digest(str(r["id"])),
        ),
    )
    for row in ordered:
        language, package = str(row["id"]).split("/")[0], str(row["package"])
        if package in seen or len(json.dumps(row)) > 8_000:
            continue
        known = provenance(language, package)
        if known is None:
            continue
        seen.add(package)
        notes = f"{row['notes']}; from {known[0]}, licence {known[1]}"
        chosen.append({**row, "notes": notes})
        if len(chosen) == size:
            break
    return chosen


def half(package: str) -> str:
    """`tuning` or `reporting`, by the package's name alone."""
    return "tuning" if int(_digest(package), 16) % 2 == 0 else "reporting"


def write(path: Path, rows: list[dict[str, object]]) -> None:
    data = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as handle:
        handle.write(data)
    path.write_bytes(buffer.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the two halves")
    parser.add_argument("--per-package", type=int, default=4, help="cases per source package")
    parser.add_argument("--sample", type=Path, help="also write a few reporting cases here")
    parser.add_argument("--sample-size", type=int, default=10)
    args = parser.parse_args(argv)
    halves: dict[str, list[dict[str, object]]] = {"tuning": [], "reporting": []}
    per_package: dict[str, int] = {}
    for source in (*python_sources(), *javascript_sources(), *java_sources()):
        key = f"{source.language}:{source.package}"
        if per_package.get(key, 0) >= args.per_package:
            continue
        for case in cases(source):
            if per_package.get(key, 0) >= args.per_package:
                break
            per_package[key] = per_package.get(key, 0) + 1
            halves[half(key)].append(case)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in halves.items():
        write(args.out / f"region-unmarked-{name}.jsonl.gz", rows)
        languages = sorted({str(r["id"]).split("/")[0] for r in rows})
        packages = len({str(r["package"]) for r in rows})
        print(f"{name}: {len(rows)} cases from {packages} packages ({', '.join(languages)})")
    if args.sample is not None:
        sample = vendor_sample(halves["reporting"], args.sample_size)
        args.sample.parent.mkdir(parents=True, exist_ok=True)
        write(args.sample, sample)
        print(f"{args.sample}: {len(sample)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
