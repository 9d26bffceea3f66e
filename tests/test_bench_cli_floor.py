"""`bench/startfloor.py`: the probe finds what a check loads, and the floor builds
dataclasses of the same shapes as patchsmith's."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bench import cli_start, startfloor

from patchsmith import ApplyReport, PatchFailure, Policy
from patchsmith.engine.model import Hunk


def _params(cls: type) -> tuple[object, ...]:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    return (params.init, params.repr, params.eq, params.order, params.unsafe_hash, params.frozen)


def _fields(cls: type) -> list[tuple[object, ...]]:
    return [
        (
            f.name,
            f.default is dataclasses.MISSING,
            f.default_factory is dataclasses.MISSING,
            f.init,
            f.repr,
            f.compare,
            f.hash,
            f.kw_only,
        )
        for f in dataclasses.fields(cls)
    ]


class TestShapes:
    @pytest.mark.parametrize("cls", [ApplyReport, PatchFailure, Policy, Hunk])
    def test_a_built_class_has_the_same_options_and_fields(self, cls: type) -> None:
        shape = json.loads(json.dumps(startfloor.shape_of(cls)))  # as the spec file keeps it

        built = startfloor.build(shape)

        assert dataclasses.is_dataclass(built)
        assert built.__qualname__ == cls.__qualname__
        assert _params(built) == _params(cls)
        assert _fields(built) == _fields(cls)
        assert ("__slots__" in built.__dict__) == ("__slots__" in cls.__dict__)
        assert ("__match_args__" in built.__dict__) == ("__match_args__" in cls.__dict__)

    def test_a_module_lists_its_own_dataclasses_only(self) -> None:
        import patchsmith.errors as errors

        found = startfloor.defined_dataclasses(errors)

        assert PatchFailure in found
        assert all(cls.__module__ == errors.__name__ for cls in found)


class TestProbeAndFloor:
    def test_the_probe_lists_the_checks_library_and_records(self, tmp_path: Path) -> None:
        workspace = tmp_path / "workspace"
        shutil.copytree(cli_start.EXAMPLE / "workspace", workspace)

        spec, classes = cli_start.probe_floor(tmp_path, workspace)

        modules, shapes = spec.read_text(encoding="utf-8").split("\n", 1)
        names = modules.split()
        assert {"argparse", "dataclasses", "json"} <= set(names)
        assert not any(name.split(".")[0] == "patchsmith" for name in names)
        assert classes == len(json.loads(shapes)) >= 20
        assert "ApplyReport" in {shape["name"] for shape in json.loads(shapes)}

    def test_the_floor_builds_every_class_and_imports_nothing_of_patchsmith(
        self, tmp_path: Path
    ) -> None:
        spec = tmp_path / "floor.spec"
        shapes = [startfloor.shape_of(cls) for cls in (ApplyReport, PatchFailure, Policy)]
        spec.write_text("argparse json no_such_module_here\n" + json.dumps(shapes))
        script = (
            f"import sys; sys.path.insert(0, {str(cli_start.ROOT / 'bench')!r}); "
            "import startfloor as f; n = f.floor(sys.argv[1], True); "
            "print(n, any(m.split('.')[0] == 'patchsmith' for m in sys.modules))"
        )

        done = subprocess.run(
            [sys.executable, "-c", script, str(spec)], capture_output=True, text=True, check=True
        )

        assert done.stdout.split() == ["3", "False"]
        assert startfloor.floor(str(spec), False) == 0
