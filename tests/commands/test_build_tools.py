"""The Maven and Gradle command profiles, run with stub `mvn`/`gradle` on PATH.

Maven Central is not reachable from the tests: `tests/commands/stubs/` holds stand-ins
that rewrite pom.xml and gradle.lockfile as the real goals do (and refuse to run without
the offline flag). They live in the repository, not under /tmp, because the sandbox
gives a command a private, empty /tmp.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.pipeline.selector_cases import POM
from tests.workspace_snapshot import snapshot_tree

from patchsmith import propose, run_command
from patchsmith.cli import main
from patchsmith.commands.profiles import BUILTIN_PROFILES, render_argv
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.proposal import ProposalStrategy as S
from patchsmith.pipeline.survey import select_in

STUBS = Path(__file__).resolve().parent / "stubs"
LOCKFILE = (
    "# This is a Gradle generated file for dependency locking.\n"
    "com.acme:ids:1.2.0=compileClasspath,runtimeClasspath\n"
    "org.slf4j:slf4j-api:2.0.9=compileClasspath,runtimeClasspath\n"
    "empty=\n"
)
POM_WITH_PROPERTY = POM.replace(
    "  <dependencies>",
    "  <properties>\n    <ids.version>1.2.0</ids.version>\n  </properties>\n  <dependencies>",
).replace("<version>1.2.0</version>", "<version>${ids.version}</version>")


@pytest.fixture(name="stubs_on_path")
def _stubs_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(STUBS) + os.pathsep + os.environ.get("PATH", ""))


def _maven(root: Path, pom: str = POM) -> Path:
    root.mkdir()
    (root / "pom.xml").write_text(pom, encoding="utf-8")
    return root


class TestArgv:
    def test_maven_dependency_version(self) -> None:
        argv = render_argv(
            BUILTIN_PROFILES["maven-dependency-version"],
            {"artifact": "com.acme:ids", "version": "1.3.0"},
        )

        assert (
            "mvn",
            "-o",
            "-q",
            "-B",
            "versions:use-dep-version",
            "-Dincludes=com.acme:ids",
            "-DdepVersion=1.3.0",
            "-DforceVersion=true",
            "-DgenerateBackupPoms=false",
        ) == argv

    def test_maven_set_property(self) -> None:
        argv = render_argv(
            BUILTIN_PROFILES["maven-set-property"], {"property": "ids.version", "version": "1.3.0"}
        )

        assert not isinstance(argv, PatchFailure)
        assert ("-Dproperty=ids.version", "-DnewVersion=1.3.0") == argv[5:7]

    def test_gradle_update_locks(self) -> None:
        argv = render_argv(
            BUILTIN_PROFILES["gradle-update-locks"], {"modules": "com.acme:ids,org.x:y"}
        )

        assert ("gradle", "--offline", "-q", "dependencies", "--update-locks") == argv[:5]
        assert "com.acme:ids,org.x:y" == argv[5]

    @pytest.mark.parametrize(
        ("profile", "params"),
        [
            ("maven-dependency-version", {"artifact": "ids", "version": "1.3.0"}),
            ("maven-dependency-version", {"artifact": "a:b -DskipTests", "version": "1"}),
            ("maven-dependency-version", {"artifact": "a:b", "version": "-X"}),
            ("maven-dependency-version", {"artifact": "a:b"}),
            ("maven-set-property", {"property": "a b", "version": "1"}),
            ("gradle-update-locks", {"modules": "a:b,--init-script"}),
            ("gradlew-update-locks", {"modules": "a"}),
        ],
    )
    def test_bad_values_are_refused(self, profile: str, params: dict[str, str]) -> None:
        argv = render_argv(BUILTIN_PROFILES[profile], params)

        assert isinstance(argv, PatchFailure)
        assert FailureCode.COMMAND_NOT_ALLOWED is argv.code

    def test_offline_and_no_network(self) -> None:
        """Every build-tool profile runs offline, in a sandbox without a network."""
        for name in ("maven-dependency-version", "maven-set-property", "gradle-update-locks"):
            profile = BUILTIN_PROFILES[name]
            assert {"-o", "--offline"} & set(profile.argv), name
            assert not profile.network


@pytest.mark.usefixtures("stubs_on_path")
class TestWithStubs:
    def test_maven_bumps_the_dependency(self, tmp_path: Path) -> None:
        root = _maven(tmp_path / "repo")

        report = run_command(
            "maven-dependency-version",
            root,
            params={"artifact": "com.acme:ids", "version": "1.3.0"},
            allowed_dependency_changes=["com.acme:ids"],
            trust=True,
            record=False,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        pom = (root / "pom.xml").read_text(encoding="utf-8")
        assert "<artifactId>ids</artifactId>\n      <version>1.3.0</version>" in pom
        assert "<version>2.0.9</version>" in pom
        assert ["pom.xml"] == [f.path for f in report.files]
        assert not (root / "pom.xml.versionsBackup").exists()

    def test_maven_sets_a_property(self, tmp_path: Path) -> None:
        root = _maven(tmp_path / "repo", POM_WITH_PROPERTY)

        report = run_command(
            "maven-set-property",
            root,
            params={"property": "ids.version", "version": "1.3.0"},
            allowed_dependency_changes=["com.acme:ids"],
            trust=True,
            record=False,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        assert "<ids.version>1.3.0</ids.version>" in (root / "pom.xml").read_text()

    def test_untrusted_runs_nothing(self, tmp_path: Path) -> None:
        root = _maven(tmp_path / "repo")
        before = snapshot_tree(root)

        report = run_command(
            "maven-dependency-version",
            root,
            params={"artifact": "com.acme:ids", "version": "1.3.0"},
            trust=False,
            record=False,
            allow_unverified=True,
        )

        assert ["UNTRUSTED_REPOSITORY"] == [e.code.value for e in report.errors]
        assert before == snapshot_tree(root)

    def test_a_failing_build_tool_changes_nothing(self, tmp_path: Path) -> None:
        root = _maven(tmp_path / "repo")
        before = snapshot_tree(root)

        report = run_command(
            "maven-dependency-version",
            root,
            params={"artifact": "org.none:none", "version": "1.3.0"},
            trust=True,
            record=False,
            allow_unverified=True,
        )

        assert ["COMMAND_FAILED"] == [e.code.value for e in report.errors]
        assert before == snapshot_tree(root)

    def test_the_selectors_choice_is_a_proposal_that_passes(self, tmp_path: Path) -> None:
        """The selector picks the Maven profile for the bump; a proposal declaring
        BUILD_TOOL_GENERATED with that command operation is applied, no mismatch."""
        root = _maven(tmp_path / "repo")
        selection = select_in(root, "Bump com.acme:ids from 1.2.0 to 1.3.0")
        assert not isinstance(selection, PatchFailure)
        assert S.BUILD_TOOL_GENERATED is selection.strategy
        assert "maven-dependency-version" in selection.facts.profiles

        report = propose(
            {
                "proposal_id": "bump",
                "run_id": "r-bump",
                "attempt_no": 1,
                "strategy": selection.strategy.value,
                "objective": "Bump com.acme:ids from 1.2.0 to 1.3.0",
                "operations": [
                    {
                        "type": "command",
                        "profile": "maven-dependency-version",
                        "params": {"artifact": "com.acme:ids", "version": "1.3.0"},
                    }
                ],
                "allowed_dependency_changes": ["com.acme:ids"],
            },
            root,
            record=False,
            trust=True,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        assert not any("selector" in note for note in report.notes)
        assert "<version>1.3.0</version>" in (root / "pom.xml").read_text()

    def test_the_suggested_command_line_runs(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The command line the selector's reasons suggest is one `patchsmith` runs."""
        root = _maven(tmp_path / "repo")
        selection = select_in(root, "Bump com.acme:ids from 1.2.0 to 1.3.0")
        assert not isinstance(selection, PatchFailure)
        line = next(r.text for r in selection.reasons if r.text.startswith("patchsmith run"))
        argv = line.removesuffix(" would make it").split()[1:]

        code = main([*argv, "-C", str(root), "--trust", "--allow-unverified", "--no-record"])

        assert 0 == code, capsys.readouterr()
        assert "<version>1.3.0</version>" in (root / "pom.xml").read_text()

    def test_gradle_updates_the_lock(self, tmp_path: Path) -> None:
        root = tmp_path / "repo"
        root.mkdir()
        (root / "build.gradle").write_text(
            "dependencies { implementation 'com.acme:ids:1.2.+' }\n", encoding="utf-8"
        )
        (root / "gradle.lockfile").write_text(LOCKFILE, encoding="utf-8")

        report = run_command(
            "gradle-update-locks",
            root,
            params={"modules": "com.acme:ids"},
            allowed_dependency_changes=["com.acme:ids"],
            trust=True,
            record=False,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        lock = (root / "gradle.lockfile").read_text(encoding="utf-8")
        assert "com.acme:ids:1.2.1=" in lock
        assert "org.slf4j:slf4j-api:2.0.9=" in lock

    def test_the_gradle_wrapper(self, tmp_path: Path) -> None:
        """gradlew-update-locks runs the repository's own ./gradlew."""
        root = tmp_path / "repo"
        root.mkdir()
        (root / "gradle.lockfile").write_text(LOCKFILE, encoding="utf-8")
        shutil.copy2(STUBS / "gradle", root / "gradlew")

        report = run_command(
            "gradlew-update-locks",
            root,
            params={"modules": "com.acme:ids,org.slf4j:slf4j-api"},
            allowed_dependency_changes=["com.acme:ids", "org.slf4j:slf4j-api"],
            trust=True,
            record=False,
            allow_unverified=True,
        )

        assert report.ok, report.errors
        lock = (root / "gradle.lockfile").read_text(encoding="utf-8")
        assert "com.acme:ids:1.2.1=" in lock
        assert "org.slf4j:slf4j-api:2.0.10=" in lock
