"""How long a type-aware Java recipe takes, and how many JVMs it starts, on the fixture project.

Run: `python bench/java_types.py [--copies N] [--repeat R]` (default 1 and 10, best of 3).
The project is `tests/codemod/java_project.py` (the library, eight migrated callers and the
lookalikes: 13 files); each of `--copies` puts another set of the callers in a package of
its own (`app0`, `app1`, ...), so the sites grow with the copies while one JVM still
answers for all of them. Times a dry run (one attribution) and an apply (the attribution
and the idempotency re-run's), each on a fresh copy, and counts the helper's processes
(compiled beforehand: its one-off compilation is printed apart). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.codemod.java_project import CASES, LIBRARY, RECIPE

from patchsmith.codemod import parse_recipe, run_recipe
from patchsmith.codemod.backends import attribution
from patchsmith.codemod.recipe import Recipe


def project(root: Path, copies: int) -> int:
    files = dict(LIBRARY)
    for n in range(copies):
        for path, (text, _) in CASES.items():
            package = f"app{n}"
            files[path.replace("/app/", f"/{package}/")] = text.replace(
                "package app;", f"package {package};"
            )
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    recipe = parse_recipe(RECIPE)
    assert isinstance(recipe, Recipe)
    started = time.perf_counter()
    helper = attribution.helper_classes()
    if isinstance(helper, str):
        raise SystemExit(f"cannot attribute: {helper}")
    print(f"helper ready in {time.perf_counter() - started:.2f} s (compiled once per JDK)\n")
    jvms = [0]
    real = attribution.run_process

    def counted(*a: object, **k: object) -> object:
        jvms[0] += 1
        return real(*a, **k)  # type: ignore[arg-type]

    attribution.run_process = counted  # type: ignore[assignment]
    print(f"| files | run | best of {args.repeat} (s) | JVMs per run |")
    print("| --- | --- | --- | --- |")
    for copies in args.copies:
        for apply in (False, True):
            best = float("inf")
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory(prefix="patchsmith-bench-java-") as tmp:
                    root = Path(tmp)
                    count = project(root, copies)
                    jvms[0] = 0
                    began = time.perf_counter()
                    report = run_recipe(recipe, root, apply=apply, record=False)
                    best = min(best, time.perf_counter() - began)
                    assert report.ok and not report.matched_by_syntax, report.to_text()
                    shutil.rmtree(root / ".patchsmith", ignore_errors=True)
            name = "apply (with re-run)" if apply else "dry run"
            print(f"| {count} | {name} | {best:.2f} | {jvms[0]} |")


if __name__ == "__main__":
    main()
