"""What `patchsmith verify` adds to a profile's own run.

Builds a small git project, then for each profile: runs the tool directly (the same
argv, cwd and scrubbed environment) and through `patchsmith.verify(...)` with a warm
base cache, several times each, and prints a markdown table of medians. The overhead
is `verify` wall time minus the tool's own duration in the same run (what patchsmith
spends around the tool: loading profiles, reading git, the cache, parsing, comparing),
and, for reference, `verify` minus the direct run.

Usage: python bench/verify_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from patchsmith.model.evidence import RunSide
from patchsmith.runtime.process import run_process
from patchsmith.verify import load_profiles, verify

CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _project(root: Path) -> None:
    py = json.dumps(sys.executable)
    files = {
        "pkg/__init__.py": "",
        "pkg/calc.py": CALC,
        "tests/__init__.py": "",
        "tests/test_calc.py": TESTS,
        "patchsmith.toml": (
            f'[verify.pytest]\nargv = [{py}, "-m", "pytest", "-q", "-p", "no:cacheprovider",'
            ' "--junitxml={report}"]\nparser = "pytest"\n\n'
            f'[verify.ruff]\nargv = [{py}, "-m", "ruff", "check", "--output-format", "json",'
            ' "--no-cache", "."]\nparser = "ruff"\nkind = "lint"\n\n'
            f'[verify.compile]\nargv = [{py}, "-m", "compileall", "-q", "pkg"]\nkind = "build"\n'
        ),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.com",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.com",
        "PATH": "/usr/bin:/bin",
    }
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "b"]):
        subprocess.run(argv, cwd=root, check=True, env=env, capture_output=True)
    (root / "pkg/calc.py").write_text(CALC + "\n\ndef sub(a, b):\n    return a - b\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "proj"
        _project(root)
        profiles = load_profiles(root)
        assert not isinstance(profiles, Exception) and hasattr(profiles, "profiles")
        rows = []
        for name in ("compile", "ruff", "pytest"):
            profile = profiles.profiles[name]  # type: ignore[union-attr]
            # The bench made this repository itself: trusted for the call (docs/policy.md).
            verify(root, [name], full=True, trust=True)  # warm the base cache
            direct, wall, own = [], [], []
            for _ in range(args.runs):
                argv = [a.replace("{report}", str(Path(scratch) / "r.xml")) for a in profile.argv]
                started = time.perf_counter()
                run_process(argv, cwd=root, timeout_s=120, env_allow=profile.allowed_env())
                direct.append(time.perf_counter() - started)
                started = time.perf_counter()
                report = verify(root, [name], full=True, trust=True)
                wall.append(time.perf_counter() - started)
                runs = report.evidence
                assert runs[0].side is RunSide.BASE and runs[0].cached
                own.append(sum(r.duration_s for r in runs if r.side is not RunSide.BASE))
            med = statistics.median
            overhead = med([w - o for w, o in zip(wall, own, strict=True)])
            rows.append((name, med(direct), med(wall), overhead, med(wall) - med(direct)))
    print(f"{args.runs} runs each, medians, base run cached (reused every time)\n")
    print("| profile | tool directly | patchsmith verify | verify's own time | verify − direct |")
    print("|---|---:|---:|---:|---:|")
    for name, d, w, o, diff in rows:
        print(
            f"| {name} | {d * 1000:.1f} ms | {w * 1000:.1f} ms | {o * 1000:.1f} ms | "
            f"{diff * 1000:+.1f} ms |"
        )


if __name__ == "__main__":
    main()
