"""Cold start: each command loads only what it uses (docs/decisions/0022).

Every check runs in a fresh interpreter and reads `sys.modules`, so a module that a
future change imports eagerly (in the façade, a CLI subcommand or a guard) fails here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import patchsmith
from patchsmith.cli import _COMMANDS, _dispatched, build_parser, command_module

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "greeting"

HEAVY = (
    "tree_sitter",
    "detect_secrets",
    "requests",
    "unidiff",
    "sqlite3",
    "pydantic",
    "yaml",
    "libcst",
    "ast_grep_py",
    "rich",
    "packaging",
    "pathspec",
    "mcp",
)
"""Dependencies no import of the package itself may load."""


def loaded_after(code: str, *, env: dict[str, str] | None = None) -> list[str]:
    """The top-level packages (and patchsmith modules) loaded after running `code`."""
    probe = (
        f"{code}\nimport sys, json\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} "
        "| {m for m in sys.modules if m.startswith('patchsmith')})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    found: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions[0].choices) if actions else []


def heavy_in(modules: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if m in heavy)


class TestPackageImport:
    def test_import_loads_nothing_heavy(self) -> None:
        """`import patchsmith` loads no heavy dependency and no module of its own."""
        modules = loaded_after("import patchsmith")

        assert [] == heavy_in(modules)
        assert ["patchsmith"] == [m for m in modules if m.startswith("patchsmith")]

    def test_every_public_name_resolves_to_its_home(self) -> None:
        """Each lazily loaded name is the very object its home module defines."""
        import importlib

        for name, home in patchsmith._LAZY.items():
            value = getattr(patchsmith, name)
            if name == "verify":
                # the subpackage itself, callable, so `patchsmith.verify(...)` works
                assert callable(value), name
                continue

            assert getattr(importlib.import_module(home), name) is value, name

    def test_propose_is_callable_after_its_module_is_imported(self) -> None:
        """Importing the module `propose` lives in first does not stop `patchsmith.propose(...)`."""
        code = (
            "import tempfile, patchsmith, patchsmith.attempt.propose\n"
            "report = patchsmith.propose('{}', tempfile.mkdtemp())\n"
            "print(report.status.value)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

        assert "refused" == done.stdout.strip(), done.stderr

    def test_lazy_table_is_the_public_surface(self) -> None:
        """Every public name loads lazily, and `dir()` lists it before it is loaded."""
        assert sorted(patchsmith.__all__) == sorted(patchsmith._LAZY)
        assert set(patchsmith.__all__) <= set(dir(patchsmith))

    def test_unknown_name_is_an_attribute_error(self) -> None:
        """A name the package does not offer raises AttributeError, as for any module."""
        with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
            patchsmith.nothing_here  # noqa: B018

    def test_engine_alone_loads_no_guards(self) -> None:
        """`patchsmith.apply_hunks` needs the engine only: no guards, policy or store."""
        modules = loaded_after("import patchsmith; patchsmith.apply_hunks('a\\n', '')")

        assert [] == heavy_in(modules)
        assert not {"patchsmith.guards", "patchsmith.policy", "patchsmith.store"} & set(modules)


class TestCliImport:
    def test_every_command_dispatches_lazily(self) -> None:
        """Each command of the full parser is found alone, by its module's name."""
        commands = _choices(build_parser())

        for command in commands:
            assert command == _dispatched([command, "--help"]), command
            assert command in _choices(build_parser(command)), command
        assert set(_COMMANDS) == {command_module(c) for c in commands}

    def test_no_command_or_an_unknown_one_gets_the_whole_parser(self) -> None:
        """Help, a misspelt command or an option first: every command is listed."""
        for argv in ([], ["--help"], ["aply"], ["run_command"], ["-x", "apply"]):
            assert _dispatched(argv) is None, argv
        assert "" == _dispatched(["--version"])

    @pytest.mark.parametrize("module", _COMMANDS)
    def test_subcommand_module_loads_no_guard_machinery(self, module: str) -> None:
        """Registering any one command loads none of the guards' or backends' dependencies."""
        code = (
            f"from patchsmith.cli import build_parser; build_parser({module.replace('_', '-')!r})"
        )
        modules = loaded_after(code)

        assert [] == heavy_in(
            modules, ("tree_sitter", "detect_secrets", "requests", "libcst", "ast_grep_py", "rich")
        )
        assert "patchsmith.guards" not in modules

    def test_apply_parser_loads_only_the_apply_command(self) -> None:
        """`patchsmith apply` builds its parser without the other commands' modules."""
        modules = loaded_after("from patchsmith.cli import build_parser; build_parser('apply')")

        assert [] == heavy_in(modules)
        others = {f"patchsmith.cli.{m}" for m in _COMMANDS if m != "apply"}
        assert set() == others & set(modules)


# What `apply --check` of the example runs without (docs/decisions/0022, 0025), each with
# what would load it: the check must stay free of them.
NOT_ON_THE_APPLY_PATH = {
    "pydantic": "validates a policy file; the example has none, the defaults need none",
    "patchsmith.policy._schema": "the policy's pydantic models",
    "tomllib": "reads a policy file, a changed manifest or pyproject.toml",
    "patchsmith.engine.compat": "the compat engine mode",
    "diff_match_patch": "the compat engine mode",
    "patchsmith.engine.lazy": "a lazy snippet",
    "patchsmith.engine.excerpt": "a refusal's excerpt",
    "patchsmith.runtime.journal": "a commit, or a journal left to recover",
    "patchsmith.model.evidence": "verification",
    "subprocess": "asking git about an unusual repository",
    "ctypes": "syncfs, when a commit makes files durable",
    "secrets": "nothing: temp names and ids come from os.urandom",
    "random": "nothing: temp names and ids come from os.urandom",
    "textwrap": "help text, printed only with --help",
    "tempfile": "writing the per-user cache",
    "shutil": "argparse's terminal width (the CLI asks `os` itself), a commit's journal",
    "patchsmith.store.runs": "a repair loop's run records (docs/decisions/0047)",
    "patchsmith.guards.drift": "measuring a change large enough to review",
    "patchsmith.model.condition": "a proposal's preconditions and postconditions",
    "patchsmith.errors.lookalike": "a refused hunk's look-alike regions",
}


def _copy_example(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for path in (EXAMPLE / "workspace").rglob("*"):
        target = workspace / path.relative_to(EXAMPLE / "workspace")
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    return workspace


class TestApplyCheckImport:
    """What `patchsmith apply --check` of the bundled example loads, in a fresh interpreter.

    Every guard runs on it, yet it loads no tree-sitter (Python is checked with `ast`), no
    detect-secrets (no added line looks like a credential; the plugins' patterns come from
    the per-user cache), no YAML and no pydantic (the workspace has no policy file).
    """

    @pytest.fixture
    def run_check(self, tmp_path: Path) -> Callable[[Path], list[str]]:
        env = {"PATCHSMITH_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}

        def run(workspace: Path) -> list[str]:
            argv = ["apply", str(EXAMPLE / "model-reply.md"), "-C", str(workspace), "--check"]
            code = f"from patchsmith.cli import main; assert main({argv!r}) == 0"
            loaded_after(code, env=env)  # the first call fills the cache
            return loaded_after(code, env=env)

        return run

    def test_only_sqlite_of_the_heavy_dependencies(
        self, tmp_path: Path, run_check: Callable[[Path], list[str]]
    ) -> None:
        """The one heavy dependency is SQLite, for the audit record a check keeps."""
        modules = run_check(_copy_example(tmp_path))

        assert ["sqlite3"] == heavy_in(modules)

    def test_none_of_the_machinery_it_does_not_run(
        self, tmp_path: Path, run_check: Callable[[Path], list[str]]
    ) -> None:
        """No module whose only use is a path this check does not take."""
        modules = set(run_check(_copy_example(tmp_path)))

        assert {} == {m: why for m, why in NOT_ON_THE_APPLY_PATH.items() if m in modules}

    def test_a_pyproject_without_a_policy_table_loads_no_pydantic(
        self, tmp_path: Path, run_check: Callable[[Path], list[str]]
    ) -> None:
        """A pyproject.toml with no `[tool.patchsmith.policy]` costs a TOML read, not pydantic."""
        workspace = _copy_example(tmp_path)
        (workspace / "pyproject.toml").write_text('[project]\nname = "greeting"\n')

        modules = run_check(workspace)

        assert "tomllib" in modules
        assert ["sqlite3"] == heavy_in(modules)

    def test_a_policy_table_is_validated_by_pydantic(
        self, tmp_path: Path, run_check: Callable[[Path], list[str]]
    ) -> None:
        """A policy that sets something is validated: that, and only that, loads pydantic."""
        workspace = _copy_example(tmp_path)
        (workspace / "pyproject.toml").write_text("[tool.patchsmith.policy]\nmax_files = 3\n")

        modules = run_check(workspace)

        assert ["pydantic", "sqlite3"] == heavy_in(modules)


# The dependencies issue 25 names: a plain diff of a Python file needs none of them.
NOT_FOR_A_PLAIN_DIFF = ("pydantic", "detect_secrets", "libcst", "ast_grep_py")

PLAIN_DIFF = """\
--- a/src/greeting.py
+++ b/src/greeting.py
@@ -4,2 +4,2 @@
 def greet(name):
-    return "Hello, " + name
+    return "Hi, " + name
"""


def imported_by_the_program(args: list[str], cache: Path, *, code: int = 0) -> set[str]:
    """Top-level packages `python -X importtime -m patchsmith ARGS` imports (exiting `code`)."""
    return {name.split(".")[0] for name in modules_of_the_program(args, cache, code=code)}


def modules_of_the_program(args: list[str], cache: Path, *, code: int = 0) -> set[str]:
    """Every module `python -X importtime -m patchsmith ARGS` imports (exiting `code`)."""
    env = {"PATCHSMITH_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-X", "importtime", "-m", "patchsmith", *args]
    subprocess.run(argv, capture_output=True, env=env, check=False)  # fills the cache
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert code == done.returncode, done.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "patchsmith.cli" in names, done.stderr[-2000:]  # the profile was read
    return names


class TestImportTimeOfAPlainDiff:
    """`python -X importtime -m patchsmith apply DIFF --check`: the program as an agent runs it."""

    def test_no_heavy_dependency_for_a_plain_diff(self, tmp_path: Path) -> None:
        """A unified diff of a Python file loads none of pydantic, detect-secrets, libcst or
        ast-grep: the profile of the program itself, not of `main` called in a probe."""
        workspace = _copy_example(tmp_path)
        diff = tmp_path / "change.diff"
        diff.write_text(PLAIN_DIFF, encoding="utf-8")

        loaded = imported_by_the_program(
            ["apply", str(diff), "-C", str(workspace), "--check"], tmp_path / "cache"
        )

        assert [] == [name for name in NOT_FOR_A_PLAIN_DIFF if name in loaded]
        assert [] == heavy_in(sorted(loaded), tuple(h for h in HEAVY if h != "sqlite3"))

    @pytest.mark.parametrize(
        ("added", "policy", "expected", "code"),
        [
            ('    return "Hi, " + name  # AKIA' + "Q3EGRT5X2ZK7WPLM", "", "detect_secrets", 1),
            (
                '    return "Hi, " + name',
                "[tool.patchsmith.policy]\nmax_files = 3\n",
                "pydantic",
                0,
            ),
        ],
        ids=["a credential-shaped line", "a policy table"],
    )
    def test_the_profile_sees_a_heavy_import(
        self, tmp_path: Path, added: str, policy: str, expected: str, code: int
    ) -> None:
        """The same probe fails when a change does need one: a line shaped like a credential
        loads detect-secrets, a policy that sets something loads pydantic."""
        workspace = _copy_example(tmp_path)
        if policy:
            (workspace / "pyproject.toml").write_text(policy, encoding="utf-8")
        diff = tmp_path / "change.diff"
        diff.write_text(PLAIN_DIFF.replace('    return "Hi, " + name', added), encoding="utf-8")

        loaded = imported_by_the_program(
            ["apply", str(diff), "-C", str(workspace), "--check", "--no-record"],
            tmp_path / "cache",
            code=code,
        )

        assert expected in loaded

    def test_a_plain_diff_of_a_text_file_loads_only_what_it_runs(self, tmp_path: Path) -> None:
        """A unified diff of a non-Python file loads none of the modules a check of it never
        runs: Python outlines, a repair loop's run records, the review guard's measuring
        (the change is small), condition results, look-alike regions (docs/decisions/0047)."""
        workspace = _copy_example(tmp_path)
        (workspace / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
        diff = tmp_path / "change.diff"
        diff.write_text(TEXT_DIFF, encoding="utf-8")

        loaded = modules_of_the_program(
            ["apply", str(diff), "-C", str(workspace), "--check"], tmp_path / "cache"
        )

        assert [] == [name for name in DEFERRED if name in loaded]

    def test_the_profile_sees_a_deferred_module_a_check_needs(self, tmp_path: Path) -> None:
        """The same probe on a Python file sees `runtime.pyregion` (its outline is kept for
        the next check), and still none of the others."""
        workspace = _copy_example(tmp_path)
        diff = tmp_path / "change.diff"
        diff.write_text(PLAIN_DIFF, encoding="utf-8")

        loaded = modules_of_the_program(
            ["apply", str(diff), "-C", str(workspace), "--check"], tmp_path / "cache"
        )

        assert [PYREGION] == [name for name in DEFERRED if name in loaded]


TEXT_DIFF = """\
--- a/notes.txt
+++ b/notes.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
"""
PYREGION = "patchsmith.runtime.pyregion"
DEFERRED = (
    PYREGION,
    "patchsmith.store.runs",
    "patchsmith.guards.drift",
    "patchsmith.model.condition",
    "patchsmith.errors.lookalike",
)
"""Modules imported where they are used, not by the modules that use them."""
