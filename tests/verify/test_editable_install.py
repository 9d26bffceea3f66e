"""An editable install in the workspace's venv does not make a copy import the real package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.sandboxing import take_bwrap_away
from tests.verify.conftest import CALC
from tests.workspace_snapshot import make_tree

from patchsmith.formats.script import Action
from patchsmith.model.evidence import RunSide
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.sandbox import usable_bwrap
from patchsmith.verify import verify_changes
from patchsmith.verify.editable import copy_import_paths

CHECK = "import pkg.calc as c, sys; print(c.__file__); sys.exit(0 if c.add(2, 3) == 5 else 1)"
PROFILE = f'[verify.tests]\nargv = [".venv/bin/python", "-c", {json.dumps(CHECK)}]\n'

FINDER = """import importlib.util
import sys

MAPPING = {{"pkg": {where!r}}}


class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in MAPPING:
            return None
        return importlib.util.spec_from_file_location(
            name, MAPPING[name] + "/__init__.py", submodule_search_locations=[MAPPING[name]]
        )


def install():
    sys.meta_path.append(_Finder)
"""


def _site_packages(root: Path) -> Path:
    [site] = list((root / ".venv/lib").glob("python*/site-packages"))
    return site


@pytest.fixture(params=["bwrap", "none"])
def sandbox_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    mode = str(request.param)
    if mode == "none":
        take_bwrap_away(monkeypatch)
    elif usable_bwrap() is None:
        pytest.skip("bwrap cannot make a sandbox on this machine")
    return mode


@pytest.fixture(params=["pth", "finder"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A src-layout project whose own venv has it installed in editable mode."""
    root = make_tree(
        tmp_path / "proj",
        {"src/pkg/__init__.py": b"", "src/pkg/calc.py": CALC, "patchsmith.toml": PROFILE.encode()},
    )
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")],
        check=True,
        capture_output=True,
    )
    site = _site_packages(root)
    real_src = str(root.resolve() / "src")
    if request.param == "pth":
        (site / "_pkg.pth").write_text(real_src + "\n")
    else:
        (site / "__editable___pkg_finder.py").write_text(FINDER.format(where=real_src + "/pkg"))
        (site / "__editable__.pkg-0.1.pth").write_text(
            "import __editable___pkg_finder; __editable___pkg_finder.install()\n"
        )
    return root


def _broken_add() -> FileChange:
    return FileChange(
        path="src/pkg/calc.py",
        action=Action.UPDATE,
        old_path="src/pkg/calc.py",
        old_bytes=CALC,
        new_bytes=CALC.replace(b"a + b", b"a - b"),
    )


def test_the_real_package_is_what_an_editable_install_imports(project: Path) -> None:
    """The premise: run in the workspace's venv from elsewhere, `pkg` is the real one."""
    done = subprocess.run(
        [str(project / ".venv/bin/python"), "-c", "import pkg; print(pkg.__file__)"],
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith(str(project.resolve() / "src"))


def test_a_broken_change_fails_in_the_copy(project: Path, sandbox_mode: str) -> None:
    report = verify_changes(project, [_broken_add()], ["tests"], cache=False)

    assert not report.passed, report.to_json(output=True)
    changed = [r for r in report.evidence if r.side is RunSide.CHANGED]
    assert [False] == [r.passed for r in changed]
    assert not changed[0].stdout.startswith(str(project.resolve()))
    base = [r for r in report.evidence if r.side is RunSide.BASE]
    assert all(r.passed for r in base)
    assert CALC == (project / "src/pkg/calc.py").read_bytes()


def test_an_unchanged_copy_still_passes(project: Path, sandbox_mode: str) -> None:
    report = verify_changes(project, [], ["tests"], cache=False)

    assert report.passed, report.to_json(output=True)


def test_paths_outside_the_workspace_are_left_alone(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "w", {"src/pkg/__init__.py": b""})
    site = root / ".venv/lib/python3.12/site-packages"
    site.mkdir(parents=True)
    (site / "other.pth").write_text(f"{tmp_path / 'elsewhere'}\n# a comment\nimport os\n")
    (site / "__editable___x_finder.py").write_text("MAPPING = {'x': '/usr/lib/x'}\n")
    copy = make_tree(tmp_path / "copy", {"src/pkg/__init__.py": b""})

    assert () == copy_import_paths(root, copy)
    (site / "self.pth").write_text(f"{root}/src\n{root}\n")
    assert (copy / "src", copy / ".") == copy_import_paths(root, copy)


def test_the_profiles_own_pythonpath_comes_after_the_copy(tmp_path: Path) -> None:
    from patchsmith.verify.profiles import Profile
    from patchsmith.verify.runner import _env_for

    root = make_tree(tmp_path / "w", {"src/pkg/__init__.py": b""})
    site = root / ".venv/lib/python3.12/site-packages"
    site.mkdir(parents=True)
    copy = make_tree(tmp_path / "copy", {"src/pkg/__init__.py": b""})
    profile = Profile(argv=("x",), set_env={"PYTHONPATH": "/keep", "A": "1"})

    assert {"PYTHONPATH": "/keep", "A": "1"} == _env_for(profile, copy, root)
    (site / "self.pth").write_text(f"{root}/src\n")
    assert {"PYTHONPATH": f"{(copy / 'src').resolve()}:/keep", "A": "1"} == _env_for(
        profile, copy, root
    )
