"""The strategy selector: its table, its documentation, its determinism, `patchsmith select`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchsmith.cli
from patchsmith.errors import FailureCode
from patchsmith.model.proposal import ProposalStrategy as S
from patchsmith.pipeline.selector import (
    EXPECTATIONS,
    RULES,
    ChangeFacts,
    Cue,
    FileKind,
    Rule,
    file_kind,
    select_strategy,
    strategy_check,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"


def _select(**facts: object) -> tuple[S, str]:
    selection = select_strategy(ChangeFacts.model_validate(facts))
    return selection.strategy, selection.rule


class TestTheTable:
    def test_lockfile_is_build_tool_generated(self) -> None:
        """A lockfile anywhere in the change: only its package manager writes it."""
        assert (S.BUILD_TOOL_GENERATED, "generated") == _select(
            files=["package.json", "package-lock.json"], changed_lines=3
        )

    def test_a_command_profile_is_build_tool_generated(self) -> None:
        """A change a command profile generates is made by that command."""
        assert (S.BUILD_TOOL_GENERATED, "generated") == _select(
            files=["src/a.py"], command="ruff-format"
        )

    def test_repeated_pattern_with_recipe_is_ast_transform(self) -> None:
        """Five repetitions and a recipe: a codemod, however many files."""
        assert (S.AST_TRANSFORM, "repeated-pattern") == _select(
            files=[f"src/m{i}.py" for i in range(9)], occurrences=5, recipe="rename-fetch-user"
        )

    def test_repeated_pattern_with_structural_rule_is_ast_transform(self) -> None:
        assert (S.AST_TRANSFORM, "repeated-pattern") == _select(
            files=["a.py"], occurrences=12, structural_rule=True, changed_lines=24
        )

    def test_four_repetitions_are_not_enough(self) -> None:
        """The threshold is 5: four repetitions in two files are a small diff."""
        assert (S.UNIFIED_DIFF, "small-change") == _select(
            files=["a.py", "b.py"], occurrences=4, recipe="r", changed_lines=8
        )

    def test_repetitions_without_a_generator_are_not_a_transform(self) -> None:
        """No recipe and no structural rule: nothing to run, so no AST_TRANSFORM."""
        assert (S.HYBRID, "default") == _select(
            files=[f"m{i}.py" for i in range(6)], occurrences=30, changed_lines=60
        )

    def test_docs_are_direct_edits_whatever_their_size(self) -> None:
        assert (S.DIRECT_FILE_EDIT, "docs") == _select(
            files=["README.md", "docs/a.rst", "CHANGELOG"], changed_lines=900
        )

    def test_small_config_is_a_direct_edit(self) -> None:
        assert (S.DIRECT_FILE_EDIT, "small-config") == _select(
            files=["pyproject.toml", "docs/index.md"], changed_lines=12
        )

    def test_large_config_is_not(self) -> None:
        """Over 100 changed lines, configuration is edited like code."""
        assert (S.UNIFIED_DIFF, "small-change") == _select(
            files=["config/app.yaml"], changed_lines=150
        )

    @pytest.mark.parametrize(
        ("files", "lines", "expected"),
        [
            (3, 400, S.UNIFIED_DIFF),
            (4, 10, S.HYBRID),
            (1, 401, S.HYBRID),
            (0, 0, S.UNIFIED_DIFF),
        ],
    )
    def test_small_change_bounds(self, files: int, lines: int, expected: S) -> None:
        """At most 3 files and 400 changed lines is a unified diff; one over is hybrid."""
        strategy, _ = _select(files=[f"src/m{i}.py" for i in range(files)], changed_lines=lines)

        assert expected == strategy

    def test_unknown_size_is_hybrid(self) -> None:
        """No estimate: no size rule can vouch for a small change."""
        strategy, rule = _select(files=["src/a.py"])

        assert (S.HYBRID, "default") == (strategy, rule)

    def test_trace_says_why_each_rule_above_did_not_match(self) -> None:
        selection = select_strategy(ChangeFacts(files=("src/a.py",), changed_lines=500))

        assert [c.rule for c in selection.trace] == [r.id for r in RULES]
        assert [False] * (len(RULES) - 1) + [True] == [c.matched for c in selection.trace]
        small = [r.id for r in RULES].index("small-change")
        assert "500 changed line(s) (> 400)" == selection.trace[small].reason
        assert "no file is a lockfile and no command named" == selection.trace[0].reason

    def test_file_kinds(self) -> None:
        assert [FileKind.LOCKFILE, FileKind.DOC, FileKind.CONFIG, FileKind.SOURCE] == [
            file_kind(p) for p in ("web/yarn.lock", "LICENSE", ".github/ci.yml", "main.go")
        ]

    def test_a_table_without_a_catch_all_is_a_bug(self) -> None:
        rule = Rule("only-big", S.HYBRID, frozenset({S.HYBRID}), "big", max_files=0)

        with pytest.raises(ValueError, match="no rule matched"):
            select_strategy(ChangeFacts(files=("a",)), rules=(rule,))


class TestStrategyCheck:
    def test_accepted_strategy_passes(self) -> None:
        selection = select_strategy(ChangeFacts(files=("a.py",), changed_lines=3))

        assert strategy_check(S.DIRECT_FILE_EDIT, selection) is None

    def test_hand_written_lockfile_strategy_is_a_mismatch(self) -> None:
        selection = select_strategy(ChangeFacts(files=("Cargo.lock",), changed_lines=3))
        failure = strategy_check(S.UNIFIED_DIFF, selection)

        assert failure is not None
        assert (FailureCode.STRATEGY_MISMATCH, "strategy_selector") == (failure.code, failure.rule)
        assert "chooses BUILD_TOOL_GENERATED" in failure.message


_paths = st.lists(
    st.one_of(
        st.sampled_from(
            ["a.py", "src/b.ts", "README.md", "x.toml", "poetry.lock", "go.sum", "pom.xml"]
        ),
        st.text(alphabet="abc./_-", min_size=1, max_size=12),
    ),
    max_size=8,
)
_facts = st.builds(
    ChangeFacts,
    files=_paths.map(tuple),
    changed_lines=st.one_of(st.none(), st.integers(0, 2000)),
    occurrences=st.integers(0, 20),
    recipe=st.one_of(st.none(), st.just("r")),
    structural_rule=st.booleans(),
    command=st.one_of(st.none(), st.just("npm-lock")),
    generated_files=st.sampled_from([(), ("a.py",), ("gen/x.ts",)]),
    cue=st.one_of(st.none(), st.sampled_from(list(Cue))),
    profiles=st.sampled_from([(), ("maven-dependency-version",)]),
)


class TestProperties:
    @given(_facts)
    def test_deterministic_and_self_consistent(self, facts: ChangeFacts) -> None:
        """Same facts, same answer; the chosen strategy is always one the rule accepts,
        and the chosen rule is the first in the table that matches."""
        first, again = select_strategy(facts), select_strategy(facts)

        assert first == again
        assert first.allows(first.strategy)
        assert first.rule == next(r.id for r in RULES if r.check(facts)[0])

    @given(_facts, st.sampled_from(["yarn.lock", "uv.lock"]))
    def test_a_lockfile_always_wins(self, facts: ChangeFacts, lockfile: str) -> None:
        with_lock = facts.model_copy(update={"files": (*facts.files, lockfile)})

        assert S.BUILD_TOOL_GENERATED == select_strategy(with_lock).strategy

    @given(_facts)
    def test_json_round_trips_the_facts(self, facts: ChangeFacts) -> None:
        data = select_strategy(facts).to_json()

        assert facts == ChangeFacts.model_validate(data["facts"])


def _doc_table() -> list[list[str]]:
    text = DOCS.read_text(encoding="utf-8")
    block = text.split("<!-- strategies:table", 1)[1].split("<!-- strategies:end -->", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


class TestDocumentedTable:
    def test_docs_table_is_the_code_table(self) -> None:
        """docs/strategies.md shows RULES exactly: ids, order, strategy, summary, accepted."""
        expected = [
            [
                f"`{rule.id}`",
                rule.strategy.value,
                rule.summary,
                ", ".join(sorted(s.value for s in rule.accepts)),
            ]
            for rule in RULES
        ]

        assert expected == _doc_table()


def _expects_table() -> list[list[str]]:
    text = DOCS.read_text(encoding="utf-8")
    block = text.split("<!-- strategies:expects", 1)[1].split("<!-- strategies:end -->", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


class TestExpectations:
    def test_docs_table_is_the_code_table(self) -> None:
        """docs/strategies.md shows EXPECTATIONS exactly: postcondition, when, why."""
        expected = []
        for row in EXPECTATIONS:
            kinds = " or ".join(sorted(k.value for k in row.any_file_of))
            cues = " or ".join(sorted(c.value for c in row.cue_in))
            when = f"a file is a {kinds}, or the cue is {cues}"
            expected.append([row.postcondition.value, when, row.why])

        assert expected == _expects_table()

    @pytest.mark.parametrize(
        ("facts", "expects"),
        [
            (ChangeFacts(files=("tests/test_a.py",)), ["TESTS_PASS"]),
            (ChangeFacts(files=("src/a.py",), cue=Cue.TEST), ["TESTS_PASS"]),
            (ChangeFacts(files=("pom.xml",)), ["COMPILES"]),
            (ChangeFacts(files=("gen/a.py",), generated_files=("gen/a.py",)), ["COMPILES"]),
            (ChangeFacts(files=("src/a.py",), cue=Cue.FIX), []),
            (
                ChangeFacts(files=("build.gradle", "src/test/java/ATest.java")),
                ["TESTS_PASS", "COMPILES"],
            ),
        ],
    )
    def test_what_a_change_should_prove(self, facts: ChangeFacts, expects: list[str]) -> None:
        selection = select_strategy(facts)

        assert expects == [p.value for p in selection.expects]
        assert len(expects) == sum("expects" in r.text for r in selection.reasons)


class TestNewRules:
    def test_a_marked_file_is_generated(self) -> None:
        facts = ChangeFacts(files=("client/api.py",), generated_files=("client/api.py",))

        assert (S.BUILD_TOOL_GENERATED, "regenerate") == _select(**facts.model_dump())
        assert [FileKind.GENERATED] == list(facts.kinds())

    def test_a_generated_path_convention_is_generated(self) -> None:
        assert (S.BUILD_TOOL_GENERATED, "regenerate") == _select(files=["api/v1/x.pb.go"])

    def test_a_bump_with_a_profile_is_build_tool_generated(self) -> None:
        strategy, rule = _select(
            files=["pom.xml"], cue="bump", profiles=["maven-dependency-version"]
        )

        assert (S.BUILD_TOOL_GENERATED, "manifest-bump") == (strategy, rule)

    @pytest.mark.parametrize(
        ("extra", "why"),
        [
            ({"cue": "fix", "profiles": ["p"]}, "the objective says fix, not bump"),
            ({"profiles": ["p"]}, "the objective gives no cue"),
            ({"cue": "bump"}, "no command profile may write them"),
        ],
    )
    def test_a_manifest_edit_otherwise_is_a_hand_edit_that_accepts_the_tool(
        self, extra: dict[str, object], why: str
    ) -> None:
        selection = select_strategy(ChangeFacts.model_validate({"files": ["pom.xml"], **extra}))

        assert (S.UNIFIED_DIFF, "manifests") == (selection.strategy, selection.rule)
        assert why == next(c.reason for c in selection.trace if c.rule == "manifest-bump")
        assert strategy_check(S.BUILD_TOOL_GENERATED, selection) is None

    def test_build_manifests_are_not_source(self) -> None:
        manifests = ("pom.xml", "a/build.gradle", "build.gradle.kts", "web/package.json")
        manifests += ("Cargo.toml", "go.mod", "gradle/libs.versions.toml")

        assert {FileKind.BUILD_MANIFEST} == {file_kind(p) for p in manifests}

    @pytest.mark.parametrize(
        "path",
        [
            "tests/test_a.py",
            "src/test/java/a/ATest.java",
            "pkg/a_test.go",
            "web/a.test.ts",
            "test_x.py",
        ],
    )
    def test_tests(self, path: str) -> None:
        assert FileKind.TEST is file_kind(path)

    @pytest.mark.parametrize("path", ["tests/data.json", "src/contest.py", "testing.md"])
    def test_not_tests(self, path: str) -> None:
        assert FileKind.TEST is not file_kind(path)


class TestSelectCommand:
    def test_explains_its_choice(self, capsys: pytest.CaptureFixture[str]) -> None:
        code = patchsmith.cli.main(["select", "src/app.py", "tests/test_app.py", "--lines", "60"])
        out = capsys.readouterr().out

        assert 0 == code
        assert out.startswith("UNIFIED_DIFF (rule small-change): ")
        assert "  not docs: src/app.py is source, not doc\n" in out

    def test_docs_example_output_is_real(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The text block in docs/strategies.md is what the command prints."""
        patchsmith.cli.main(["select", "src/app.py", "tests/test_app.py", "--lines", "60"])
        out = capsys.readouterr().out
        shown = re.search(r"```text\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)

        assert shown is not None
        assert shown.group(1) == out

    def test_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        code = patchsmith.cli.main(["select", "package-lock.json", "--json"])
        data = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert ("BUILD_TOOL_GENERATED", "generated") == (data["strategy"], data["rule"])
        assert ["package-lock.json"] == data["facts"]["files"]

    def test_facts_from_a_file_and_a_declared_mismatch(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        facts = tmp_path / "facts.json"
        facts.write_text(
            json.dumps({"files": ["a.py", "b.py", "c.py", "d.py"], "changed_lines": 80})
        )

        code = patchsmith.cli.main(
            ["select", "--facts", str(facts), "--declared", "unified_diff", "--json"]
        )
        data = json.loads(capsys.readouterr().out)

        assert 1 == code
        assert ("HYBRID", "UNIFIED_DIFF") == (data["strategy"], data["declared"])
        assert ["STRATEGY_MISMATCH"] == [e["code"] for e in data["errors"]]

    def test_declared_mismatch_in_text(self, capsys: pytest.CaptureFixture[str]) -> None:
        code = patchsmith.cli.main(["select", "go.sum", "--declared", "HYBRID"])
        assert 0 == code
        code = patchsmith.cli.main(["select", "go.sum", "--declared", "DIRECT_FILE_EDIT"])

        assert 1 == code
        assert "STRATEGY_MISMATCH" in capsys.readouterr().err

    def test_facts_on_stdin(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        import io

        monkeypatch.setattr("sys.stdin", io.StringIO('{"files": ["README.md"]}'))
        code = patchsmith.cli.main(["select", "--facts", "-", "--json"])

        assert (0, "docs") == (code, json.loads(capsys.readouterr().out)["rule"])

    @pytest.mark.parametrize(
        ("argv", "needle"),
        [
            (["select", "--facts", "/nonexistent/facts.json"], "cannot read facts"),
            (["select", "a.py", "--lines", "-3"], "changed_lines"),
            (["select", "a.py", "--declared", "SOMETIMES"], "unknown strategy"),
        ],
    )
    def test_bad_input_is_a_usage_error(
        self, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        code = patchsmith.cli.main([*argv, "--json"])
        data = json.loads(capsys.readouterr().out)

        assert 2 == code
        assert "INVALID_TASK" == data["errors"][0]["code"]
        assert needle in data["errors"][0]["message"]


def test_pipeline_package_exports() -> None:
    """Every name `patchsmith.pipeline` offers loads on first use; others do not exist."""
    import patchsmith.pipeline as pipeline

    assert all(getattr(pipeline, name) is not None for name in pipeline.__all__)
    with pytest.raises(AttributeError):
        _ = pipeline.nothing_here
