"""The selector reading the repository: the seed's six cases, caller facts, the CLI, the docs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.pipeline.selector_cases import CASES, CLOCK_RECIPE, Case, render_cases
from tests.workspace_snapshot import snapshot_tree

import patchsmith.cli
from patchsmith.codemod.recipe import Recipe
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.proposal import ProposalStrategy as S
from patchsmith.pipeline.selector import ChangeFacts, Cue, FileKind, Selection, strategy_check
from patchsmith.pipeline.survey import select_in, survey

DOCS = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"
BY_ID = {case.id: case for case in CASES}


def _answer(case: Case, tmp_path: Path) -> Selection:
    root = case.build(tmp_path / "repo")
    recipe: str | Recipe | None = case.recipe
    if case.recipe_file is not None:
        recipe = Recipe.model_validate(case.recipe_file)
    selection = select_in(root, case.objective, recipe=recipe)
    assert not isinstance(selection, PatchFailure), selection
    return selection


class TestTheSixCases:
    @pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
    def test_answered_from_the_repository_alone(self, case: Case, tmp_path: Path) -> None:
        """No caller facts: the strategy, the rule, the expectations and the key reasons."""
        selection = _answer(case, tmp_path)
        texts = [r.text for r in selection.reasons]

        assert (case.strategy, case.rule) == (selection.strategy.value, selection.rule)
        assert list(case.expects) == [p.value for p in selection.expects]
        for wanted in case.reasons:
            assert any(wanted in text for text in texts), (wanted, texts)
        assert selection.allows(selection.strategy)

    @pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
    def test_through_the_cli_as_json(
        self, case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`patchsmith select -C repo --objective ... --json` gives the same answer, and
        reading the repository writes nothing in it."""
        root = case.build(tmp_path / "repo")
        before = snapshot_tree(root)

        code = patchsmith.cli.main([*case.argv(root), "--json"])
        data = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert (case.strategy, case.rule) == (data["strategy"], data["rule"])
        assert list(case.expects) == data["expects"]
        texts = [r["text"] for r in data["reasons"]]
        for wanted in case.reasons:
            assert any(wanted in text for text in texts), (wanted, texts)
        assert {"source", "text"} == set(data["reasons"][0])
        assert before == snapshot_tree(root)

    def test_the_maven_bump_names_the_maven_profile(self, tmp_path: Path) -> None:
        selection = _answer(BY_ID["maven-minor-bump"], tmp_path)

        assert ("pom.xml",) == selection.facts.files
        assert "maven-dependency-version" in selection.facts.profiles
        assert Cue.BUMP is selection.facts.cue

    def test_declaring_build_tool_generated_for_the_bump_is_no_mismatch(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = BY_ID["maven-minor-bump"].build(tmp_path / "repo")

        argv = ["select", "-C", str(root), "--objective", "Bump com.acme:ids to 1.3.0"]

        code = patchsmith.cli.main([*argv, "--declared", "BUILD_TOOL_GENERATED", "--json"])

        assert 0 == code
        assert [] == json.loads(capsys.readouterr().out)["errors"]

    def test_the_regenerated_files_are_the_marked_ones(self, tmp_path: Path) -> None:
        selection = _answer(BY_ID["openapi-regeneration"], tmp_path)

        assert all(p.startswith("client/") for p in selection.facts.files)
        assert set(selection.facts.files) == set(selection.facts.generated_files)
        assert ("openapi-client",) == selection.facts.profiles

    def test_the_unit_test_case_touches_the_test_file(self, tmp_path: Path) -> None:
        selection = _answer(BY_ID["unit-test"], tmp_path)

        assert "tests/test_stats.py" in selection.facts.files
        assert FileKind.TEST in selection.facts.kinds()


class TestDocumentedCases:
    def test_docs_show_what_the_command_prints(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """docs/strategies.md's six cases are this code's output (PATCHSMITH_UPDATE_SNAPSHOTS=1
        rewrites the section)."""
        outputs = {}
        for case in CASES:
            root = case.build(tmp_path / case.id / "repo")
            patchsmith.cli.main(case.argv(root))
            outputs[case.id] = capsys.readouterr().out
        section = render_cases(outputs)
        text = DOCS.read_text(encoding="utf-8")
        start, end = "<!-- strategies:cases -->\n", "<!-- strategies:cases-end -->"
        head, rest = text.split(start, 1)
        shown, tail = rest.split(end, 1)
        if os.environ.get("PATCHSMITH_UPDATE_SNAPSHOTS") == "1":
            DOCS.write_text(f"{head}{start}{section}\n{end}{tail}", encoding="utf-8")
            return

        assert section + "\n" == shown


class TestCallerFacts:
    def test_given_facts_replace_what_was_read(self, tmp_path: Path) -> None:
        root = BY_ID["null-check"].build(tmp_path / "repo")
        given = ChangeFacts(changed_lines=900)

        selection = select_in(root, BY_ID["null-check"].objective, given=given)

        assert isinstance(selection, Selection)
        assert (S.HYBRID, 900) == (selection.strategy, selection.facts.changed_lines)
        assert any(
            r.source == "caller" and "changed_lines: 900" == r.text for r in selection.reasons
        )

    def test_given_files_are_classified_from_the_repository(self, tmp_path: Path) -> None:
        """A file typed in is still read: its header marks it generated."""
        root = BY_ID["openapi-regeneration"].build(tmp_path / "repo")
        given = ChangeFacts(files=("client/orders_client/api.py",))

        found = survey(root, "tidy the client", given=given)

        assert not isinstance(found, PatchFailure)
        assert ("client/orders_client/api.py",) == found.facts.files
        assert FileKind.GENERATED in found.facts.kinds()

    def test_cli_options_override(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        root = BY_ID["null-check"].build(tmp_path / "repo")

        argv = ["select", "-C", str(root), "--objective", BY_ID["null-check"].objective]

        patchsmith.cli.main([*argv, "--command", "npm-lock", "--json"])
        data = json.loads(capsys.readouterr().out)

        assert ("BUILD_TOOL_GENERATED", "generated") == (data["strategy"], data["rule"])
        assert {"source": "caller", "text": "command: npm-lock"} in data["reasons"]

    def test_facts_file_with_a_repository(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--facts with -C: the file's facts replace what was read, the rest is read."""
        root = BY_ID["java-call-sites"].build(tmp_path / "repo")
        facts = tmp_path / "facts.json"
        facts.write_text('{"files": ["pom.xml"]}')

        argv = ["select", "-C", str(root), "--facts", str(facts), "--objective", "bump it"]
        code = patchsmith.cli.main([*argv, "--json"])
        data = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert ["pom.xml"] == data["facts"]["files"]
        assert ("BUILD_TOOL_GENERATED", "manifest-bump") == (data["strategy"], data["rule"])

    def test_old_facts_keep_working_without_a_repository(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """No -C, --objective or --pattern: only the facts typed in, as before."""
        code = patchsmith.cli.main(["select", "pom.xml", "--declared", "BUILD_TOOL_GENERATED"])
        out = capsys.readouterr().out

        assert 0 == code
        assert out.startswith("UNIFIED_DIFF (rule manifests): ")
        assert "read (" not in out


class TestReading:
    def test_the_objective_alone_can_name_a_key_rename(self, tmp_path: Path) -> None:
        """`rename key a.b to c` counts a config key rename rule's matches."""
        root = BY_ID["yaml-key-rename"].build(tmp_path / "repo")

        selection = select_in(root, "Rename key spec.serviceAccount to serviceAccountName")

        assert isinstance(selection, Selection)
        assert (S.AST_TRANSFORM, 40) == (selection.strategy, selection.facts.occurrences)
        assert 40 == len(selection.facts.files)

    def test_a_bare_pattern_is_a_structural_rule(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = BY_ID["java-call-sites"].build(tmp_path / "repo")

        argv = ["select", "-C", str(root), "--pattern", "LegacyClock.now()"]

        code = patchsmith.cli.main([*argv, "--language", "java", "--json"])
        data = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert ("AST_TRANSFORM", 300) == (data["strategy"], data["facts"]["occurrences"])
        assert data["facts"]["structural_rule"] is True
        assert data["facts"]["recipe"] is None

    def test_a_recipe_that_does_not_apply_counts_nothing(self, tmp_path: Path) -> None:
        root = BY_ID["null-check"].build(tmp_path / "repo")
        recipe = Recipe.model_validate(
            {**CLOCK_RECIPE, "preconditions": [{"file_exists": "missing.txt"}]}
        )

        selection = select_in(root, "replace the clock", recipe=recipe)

        assert isinstance(selection, Selection)
        assert 0 == selection.facts.occurrences
        assert any("does not apply here" in r.text for r in selection.reasons)

    def test_an_unknown_recipe_is_refused(self, tmp_path: Path) -> None:
        failure = select_in(tmp_path, "x", recipe="no-such-recipe")

        assert isinstance(failure, PatchFailure)
        assert FailureCode.RECIPE_NOT_FOUND is failure.code

    def test_not_a_folder(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        code = patchsmith.cli.main(["select", "-C", str(tmp_path / "nope"), "--json"])

        assert 2 == code
        assert "INVALID_TASK" in capsys.readouterr().out

    @pytest.mark.parametrize(
        "argv",
        [
            ["--pattern", "x()", "--language", "cobol"],
            ["--pattern", "x()"],
            ["--pattern", "x()", "--language", "java", "--recipe", "r"],
        ],
    )
    def test_bad_pattern_options(
        self, tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert 2 == patchsmith.cli.main(["select", "-C", str(tmp_path), *argv])
        assert "INVALID_TASK" in capsys.readouterr().err

    def test_a_dependency_is_matched_by_its_coordinates_not_a_substring(
        self, tmp_path: Path
    ) -> None:
        root = BY_ID["maven-minor-bump"].build(tmp_path / "repo")

        found = survey(root, "bump com.acme:id to 2.0")

        assert not isinstance(found, PatchFailure)
        assert () == found.facts.files

    def test_a_bump_without_coordinates_takes_every_manifest(self, tmp_path: Path) -> None:
        root = BY_ID["maven-minor-bump"].build(tmp_path / "repo")

        found = survey(root, "bump the dependencies")

        assert not isinstance(found, PatchFailure)
        assert ("pom.xml",) == found.facts.files

    def test_a_bump_of_an_undeclared_dependency_touches_nothing(self, tmp_path: Path) -> None:
        root = BY_ID["maven-minor-bump"].build(tmp_path / "repo")

        selection = select_in(root, "bump org.example:nothing to 2.0")

        assert isinstance(selection, Selection)
        assert () == selection.facts.files
        assert S.HYBRID is selection.strategy
        assert any("no build manifest declares" in r.text for r in selection.reasons)

    def test_a_bump_without_a_profile_is_a_hand_edit(self, tmp_path: Path) -> None:
        """build.gradle has no built-in profile that writes it: the manifests rule."""
        (tmp_path / "build.gradle").write_text("dependencies { implementation 'a:b:1.0' }\n")

        selection = select_in(tmp_path, "bump a:b to 1.1")

        assert isinstance(selection, Selection)
        assert ("manifests", S.UNIFIED_DIFF) == (selection.rule, selection.strategy)
        assert strategy_check(S.BUILD_TOOL_GENERATED, selection) is None

    def test_a_new_file_has_no_size(self, tmp_path: Path) -> None:
        (tmp_path / "a.py").write_text("x = 1\n")

        found = survey(tmp_path, "fix a.py", given=ChangeFacts(files=("a.py", "b.py")))

        assert not isinstance(found, PatchFailure)
        assert found.facts.changed_lines is None

    def test_a_test_without_a_test_file(self, tmp_path: Path) -> None:
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "calc.py").write_text("def f():\n    return 1\n")

        found = survey(tmp_path, "write a unit test for src/calc.py")

        assert not isinstance(found, PatchFailure)
        assert ("src/calc.py",) == found.facts.files
        assert any("has no test file yet" in r.text for r in found.reasons)

    def test_bad_profile_tables_are_reasons_not_failures(self, tmp_path: Path) -> None:
        (tmp_path / "patchsmith.toml").write_text(
            '[commands.x]\nargv = "make"\n[verify.y]\nz = 1\n'
        )
        (tmp_path / "pom.xml").write_text("<project/>\n")

        found = survey(tmp_path, "bump it")

        assert not isinstance(found, PatchFailure)
        texts = " ".join(r.text for r in found.reasons)
        assert "command profiles unreadable" in texts
        assert "verification profiles unreadable" in texts
