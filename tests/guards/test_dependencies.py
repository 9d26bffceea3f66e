"""Tests for the dependency guard."""

from __future__ import annotations

import pytest
from tests.guards.changes import context, create, delete, move, update

from patchsmith.errors import FailureCode
from patchsmith.guards import GuardContext
from patchsmith.guards.dependencies import (
    DependencyChangeKind,
    DependencyGuard,
    dependency_changes,
    read_dependencies,
)
from patchsmith.policy import DependencyMode, DependencyPolicy, Policy

PYPROJECT = """\
[project]
name = "x"
dependencies = ["requests>=2", "Click==8.1"]

[project.optional-dependencies]
dev = ["pytest"]

[tool.poetry.dependencies]
python = "^3.11"
rich = "^13"
"""
PACKAGE_JSON = '{"name": "x", "dependencies": {"lodash": "^4.17.0"}, "devDependencies": {}}\n'
CARGO = '[package]\nname = "x"\n\n[dependencies]\nserde = "1"\n\n[dev-dependencies]\n'
GO_MOD = "module x\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/text v0.14.0 // indirect\n)\n"
REQUIREMENTS = "# pinned\nrequests==2.31.0\n-r base.txt\nflask >= 3 ; python_version > '3.8'\n"

PROPOSAL = GuardContext(policy=Policy(), from_proposal=True)

# (path, old, new, expected (name, kind))
CASES = [
    (
        "pyproject.toml",
        PYPROJECT,
        PYPROJECT.replace('"Click==8.1"', '"click==8.2"'),
        [("click", DependencyChangeKind.REVERSIONED)],
    ),
    (
        "pyproject.toml",
        PYPROJECT,
        PYPROJECT.replace('rich = "^13"', 'rich = "^13"\nhttpx = "*"'),
        [("httpx", DependencyChangeKind.ADDED)],
    ),
    (
        "web/package.json",
        PACKAGE_JSON,
        PACKAGE_JSON.replace('"devDependencies": {}', '"devDependencies": {"left-pad": "1.3.0"}'),
        [("left-pad", DependencyChangeKind.ADDED)],
    ),
    (
        "Cargo.toml",
        CARGO,
        CARGO.replace('serde = "1"\n', ""),
        [("serde", DependencyChangeKind.REMOVED)],
    ),
    (
        "go.mod",
        GO_MOD,
        GO_MOD.replace("v0.14.0", "v0.15.0"),
        [("golang.org/x/text", DependencyChangeKind.REVERSIONED)],
    ),
    (
        "requirements-dev.txt",
        REQUIREMENTS,
        REQUIREMENTS + "Django==5.0\n",
        [("django", DependencyChangeKind.ADDED)],
    ),
]


class TestDependencyChanges:
    @pytest.mark.parametrize(("path", "old", "new", "expected"), CASES)
    def test_each_manifest_kind(
        self, path: str, old: str, new: str, expected: list[tuple[str, DependencyChangeKind]]
    ) -> None:
        """Each manifest's dependency change is found, named and classified."""
        found = dependency_changes(update(path, old, new))

        assert expected == [(c.name, c.kind) for c in found]

    @pytest.mark.parametrize(("path", "old"), [(c[0], c[1]) for c in CASES])
    def test_edits_elsewhere_in_a_manifest_pass(self, path: str, old: str) -> None:
        """Comments, other keys and whitespace are not dependency changes."""
        new = old + ("\n" if not path.endswith(".json") else "")

        assert [] == DependencyGuard().check([update(path, old, new)], context())

    def test_requirements_reader(self) -> None:
        """Options and includes are skipped; markers and specifiers are kept."""
        deps = read_dependencies("requirements.txt", REQUIREMENTS)

        assert {
            ("requirements", "requests"): "==2.31.0",
            ("requirements", "flask"): ">=3;python_version>'3.8'",
        } == deps

    def test_unparseable_manifest_is_left_to_the_syntax_guard(self) -> None:
        """A broken manifest reads as None instead of raising."""
        assert read_dependencies("package.json", "{") is None
        assert read_dependencies("README.md", "x") is None


class TestDependencyGuard:
    @pytest.mark.parametrize(("path", "old", "new", "expected"), CASES)
    def test_refused_by_default(
        self, path: str, old: str, new: str, expected: list[tuple[str, DependencyChangeKind]]
    ) -> None:
        """Every dependency change is refused by default, naming the dependency."""
        failures = DependencyGuard().check([update(path, old, new)], PROPOSAL)

        assert [FailureCode.DEPENDENCY_CHANGED] == [f.code for f in failures]
        assert expected[0][0] in failures[0].message

    def test_plain_apply_reports_by_default_and_refuses_when_asked(self) -> None:
        """Mode auto reports a change without a proposal; mode refuse refuses it."""
        change = update("go.mod", GO_MOD, GO_MOD.replace("v0.14.0", "v0.15.0"))
        guard = DependencyGuard()
        strict = context(Policy(dependencies=DependencyPolicy(mode=DependencyMode.REFUSE)))
        lenient = GuardContext(
            policy=Policy(dependencies=DependencyPolicy(mode=DependencyMode.REPORT)),
            from_proposal=True,
        )

        assert [] == guard.check([change], context())
        assert 1 == len(guard.flagged)
        assert 1 == len(DependencyGuard().check([change], strict))
        assert [] == DependencyGuard().check([change], lenient)

    def test_new_manifest_counts_as_added(self) -> None:
        """Creating a manifest adds each of its dependencies."""
        failures = DependencyGuard().check([create("package.json", PACKAGE_JSON)], PROPOSAL)

        assert "lodash added (^4.17.0) in dependencies" in failures[0].message

    def test_policy_allows_a_kind_and_reports_it(self) -> None:
        """allow_version_change lets a re-version through, as a note."""
        guard = DependencyGuard()
        policy = Policy(dependencies=DependencyPolicy(allow_version_change=True))
        change = update("go.mod", GO_MOD, GO_MOD.replace("v0.14.0", "v0.15.0"))

        assert [] == guard.check([change], context(policy))
        assert [
            "go.mod: golang.org/x/text re-versioned (v0.14.0 -> v0.15.0) in require (allowed)"
        ] == (guard.flagged)

    def test_policy_and_proposal_allow_by_name(self) -> None:
        """A name allowed by the policy or by the proposal passes; others still fail."""
        new = PYPROJECT.replace('"requests>=2"', '"requests>=3", "Attrs"')
        change = update("pyproject.toml", PYPROJECT, new)
        by_policy = GuardContext(
            policy=Policy(dependencies=DependencyPolicy(allowed=("requests", "attrs"))),
            from_proposal=True,
        )
        by_proposal = GuardContext(
            policy=Policy(), allowed_dependencies=("Requests",), from_proposal=True
        )

        assert [] == DependencyGuard().check([change], by_policy)
        failures = DependencyGuard().check([change], by_proposal)
        assert "attrs added" in failures[0].message
        assert "requests" not in failures[0].message


class TestManifestReaders:
    def test_pyproject_details(self) -> None:
        """Extras, markers, URLs, dependency groups and Poetry groups are all read."""
        text = """\
[project]
dependencies = [
    "Requests[socks,security]>=2; python_version >= '3.8'",
    "pkg @ https://example.com/pkg.whl",
    "not a requirement !!",
]

[dependency-groups]
test = ["pytest>=8", {include-group = "lint"}]

[tool.poetry.group.docs.dependencies]
mkdocs = {version = "^1", optional = true}
"""

        deps = read_dependencies("pyproject.toml", text)

        assert deps is not None
        assert (
            '[security,socks]>=2; python_version >= "3.8"'
            == deps[("project.dependencies", "requests")]
        )
        assert "@ https://example.com/pkg.whl" == deps[("project.dependencies", "pkg")]
        assert "" == deps[("project.dependencies", "not a requirement !!")]
        assert ">=8" == deps[("dependency-groups.test", "pytest")]
        assert (
            '{"optional": true, "version": "^1"}'
            == deps[("tool.poetry.group.docs.dependencies", "mkdocs")]
        )

    def test_cargo_tables(self) -> None:
        """Per-target and workspace dependency tables are read."""
        text = (
            '[workspace.dependencies]\nanyhow = "1"\n'
            '[target."cfg(unix)".dependencies]\nlibc = { version = "0.2" }\n'
        )

        deps = read_dependencies("Cargo.toml", text)

        assert {
            ("workspace.dependencies", "anyhow"): "1",
            ("target.cfg(unix).dependencies", "libc"): '{"version": "0.2"}',
        } == deps

    def test_go_single_line_and_json_lists(self) -> None:
        """A one-line require and a bundleDependencies list are read."""
        assert {("require", "example.com/m"): "v1.2.3"} == read_dependencies(
            "go.mod", "module x\nrequire example.com/m v1.2.3 // pinned\nreplace a => b\n"
        )
        assert {("bundleDependencies", "a"): ""} == read_dependencies(
            "package.json", '{"bundleDependencies": ["a", 3], "dependencies": 1}'
        )
        assert {} == read_dependencies("package.json", "[1]")

    def test_requirements_continuations(self) -> None:
        """Backslash continuations join lines; a dangling one still ends the file."""
        deps = read_dependencies("requirements.in", "numpy \\\n  >=1.26\nrich==13 \\")

        assert {("requirements", "numpy"): ">=1.26", ("requirements", "rich"): "==13"} == deps

    def test_deleting_or_moving_a_manifest(self) -> None:
        """Deleting a manifest removes every dependency; a manifest moved away does too."""
        gone = dependency_changes(delete("package.json", PACKAGE_JSON))
        moved = dependency_changes(move("requirements.txt", "docs/req.md", REQUIREMENTS))

        assert [("lodash", DependencyChangeKind.REMOVED)] == [(c.name, c.kind) for c in gone]
        assert {"requests", "flask"} == {c.name for c in moved}
        assert "lodash removed (^4.17.0) in dependencies" == gone[0].describe()
