"""The base-run cache lives in the user's cache directory; a committed one is ignored."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from tests.verify.conftest import CALC
from tests.verify.test_propose_verification import _proposal

from patchsmith import propose
from patchsmith.errors import FailureCode
from patchsmith.formats.script import Action
from patchsmith.model.evidence import Evidence, RunSide
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.change import FileChange
from patchsmith.verify import verify_changes
from patchsmith.verify.baseline import (
    CACHE_SUBDIR,
    cache_key,
    read_cached,
    tool_identity,
    write_cached,
)
from patchsmith.verify.profiles import Profile, ProfileSet, load_profiles
from patchsmith.verify.trees import tree_digest

BROKEN = CALC.replace(b"return a + b", b"return a - b")


def _old_key(tree: str, name: str, profile: Profile) -> str:
    """The key the cache used when it lived in `.patchsmith/verify-cache/`."""
    definition = json.dumps(
        {"tree": tree, "name": name, "profile": profile.model_dump(mode="json"), "targets": []},
        sort_keys=True,
    )
    return hashlib.sha256(definition.encode("utf-8")).hexdigest()


def _broken_run(project: Path) -> Evidence:
    """The pytest run of the broken tree: every failure the change will show."""
    change = FileChange(
        path="pkg/calc.py",
        action=Action.UPDATE,
        old_path="pkg/calc.py",
        old_bytes=CALC,
        new_bytes=BROKEN,
    )
    report = verify_changes(project, [change], ["pytest"], full=True, cache=False)
    runs = [r for o in report.outcomes for r in o.runs if r.side is RunSide.CHANGED]
    assert runs and any("test_add" in (f.test_id or "") for f in runs[0].failures)
    return replace(runs[0], side=RunSide.BASE)


class TestCommittedCacheIsIgnored:
    def test_planted_base_run_does_not_excuse_a_broken_test(self, project: Path) -> None:
        """A `.patchsmith/verify-cache/` entry that says test_add already failed changes nothing."""
        planted = _broken_run(project)
        profiles = load_profiles(project)
        assert isinstance(profiles, ProfileSet)
        profile = profiles.profiles["pytest"]
        folder = project / ".patchsmith" / "verify-cache"
        folder.mkdir(parents=True)
        key = _old_key("files:" + tree_digest(project), "pytest", profile)
        (folder / f"{key}.json").write_text(planted.dumps(), encoding="utf-8")

        report = propose(_proposal(), project)

        assert ApplyStatus.REFUSED == report.status
        assert FailureCode.VERIFICATION_FAILED in [e.code for e in report.errors]
        assert not report.evidence[0].cached
        assert CALC == (project / "pkg/calc.py").read_bytes()

    def test_base_runs_are_written_to_the_user_cache(
        self, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Nothing is written under `.patchsmith/verify-cache/`; the entry is in the user cache."""
        cache = tmp_path / "user-cache"
        monkeypatch.setenv("PATCHSMITH_CACHE_DIR", str(cache))

        first = propose(_proposal(), project)
        second = propose(_proposal(proposal_id="p2"), project)

        assert [False, True] == [r.evidence[0].cached for r in (first, second)]
        assert not (project / ".patchsmith" / "verify-cache").exists()
        entries = list((cache / CACHE_SUBDIR).glob("*.json"))
        assert 1 == len(entries)
        assert 0o700 == (cache / CACHE_SUBDIR).stat().st_mode & 0o777

    def test_cache_off_reads_and_writes_nothing(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`PATCHSMITH_CACHE_DIR=off`: every base run runs."""
        monkeypatch.setenv("PATCHSMITH_CACHE_DIR", "off")
        run = _broken_run(project)
        write_cached("k", run)
        assert read_cached("k") is None

        first = propose(_proposal(), project)
        second = propose(_proposal(proposal_id="p2"), project)

        assert [False, False] == [r.evidence[0].cached for r in (first, second)]


class TestKey:
    def _profile(self, **fields: object) -> Profile:
        return Profile.model_validate({"argv": ["python3", "-c", "pass"], **fields})

    def test_environment_changes_the_key(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A variable the run gets is part of the key; one it does not get is not."""
        profile = self._profile(env=["PYTHONHASHSEED"])
        monkeypatch.setenv("PYTHONHASHSEED", "1")
        monkeypatch.setenv("UNRELATED_VARIABLE", "1")
        first = cache_key("t", "p", profile, root=tmp_path)
        monkeypatch.setenv("UNRELATED_VARIABLE", "2")
        assert first == cache_key("t", "p", profile, root=tmp_path)
        monkeypatch.setenv("PYTHONHASHSEED", "2")
        assert first != cache_key("t", "p", profile, root=tmp_path)

    def test_tree_root_and_version_change_the_key(self, tmp_path: Path) -> None:
        """The tree, the workspace and a known tool version each give another key."""
        profile = self._profile()
        key = cache_key("t", "p", profile, root=tmp_path)
        assert key != cache_key("u", "p", profile, root=tmp_path)
        assert key != cache_key("t", "p", profile, root=tmp_path / "other")
        assert key != cache_key("t", "p", profile, root=tmp_path, tool_version="1.2")

    def test_program_in_the_workspace_is_identified_by_its_file(self, tmp_path: Path) -> None:
        """A workspace program that changes (size or mtime) gives another key."""
        tool = tmp_path / "bin" / "tool"
        tool.parent.mkdir()
        tool.write_bytes(b"#!/bin/sh\n")
        profile = Profile.model_validate({"argv": ["bin/tool"]})
        first = cache_key("t", "p", profile, root=tmp_path)
        assert tool_identity(profile, tmp_path).startswith(str(tool.resolve()) + ":")
        tool.write_bytes(b"#!/bin/sh\nexit 0\n")
        os.utime(tool, ns=(1, 1))
        assert first != cache_key("t", "p", profile, root=tmp_path)

    def test_missing_program(self, tmp_path: Path) -> None:
        """A program that is not there is named as written."""
        assert "missing:bin/nope" == tool_identity(
            Profile.model_validate({"argv": ["bin/nope"]}), tmp_path
        )
        assert "missing:no-such-tool-xyz" == tool_identity(
            Profile.model_validate({"argv": ["no-such-tool-xyz"]}), tmp_path
        )
