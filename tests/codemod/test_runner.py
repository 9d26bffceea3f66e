"""run_recipe: a dry run by default; apply guarded, all or nothing, recorded and idempotent."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import pytest

import patchsmith
from patchsmith.codemod import RecipeStatus, parse_recipe, run_recipe
from patchsmith.codemod.recipe import Recipe
from patchsmith.errors import FailureCode
from patchsmith.policy import Policy
from patchsmith.store import AttemptKind, Store

from .helpers import EQUAL_RULE, snapshot, write_tree

HEAD = "import unittest\n\nclass T(unittest.TestCase):\n    def test(self):\n"
TEST = HEAD + "        self.assertEqual(f(1), 2)\n"
AFTER = HEAD + "        assert f(1) == 2\n"


def recipe(text: str = EQUAL_RULE) -> Recipe:
    parsed = parse_recipe(text)
    assert isinstance(parsed, Recipe)
    return parsed


@pytest.fixture(name="workspace")
def _workspace(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"tests/test_a.py": TEST, "tests/test_b.py": "x = 1\n"})
    return tmp_path


@pytest.fixture(name="scratch_folders")
def _scratch_folders(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every scratch folder the runner makes from now on (to check that each is removed)."""
    from patchsmith.codemod import runner

    made: list[Path] = []
    real = runner.scratch_dir

    def recorded(prefix: str) -> tempfile.TemporaryDirectory[str]:
        folder = real(prefix)
        made.append(Path(folder.name))
        return folder

    monkeypatch.setattr(runner, "scratch_dir", recorded)
    return made


class TestDryRun:
    def test_reports_without_writing(self, workspace: Path) -> None:
        """The default run computes the diff and writes nothing."""
        before = snapshot(workspace)

        report = run_recipe(recipe(), workspace, record=False)

        assert RecipeStatus.DRY_RUN == report.status
        assert (2, 1, 1) == (report.files_scanned, report.files_matched, report.files_changed)
        assert "+        assert f(1) == 2" in report.diff
        assert before == snapshot(workspace)

    def test_json_and_text(self, workspace: Path) -> None:
        """The report renders as JSON and as text with the same counts."""
        report = run_recipe(recipe(), workspace, record=False)
        data = report.to_json()

        assert "dry_run" == data["status"] and 1 == data["files_changed"]
        assert "would change 1" in report.to_text()
        assert report.to_json_text().startswith("{")

    def test_recorded_as_checked(self, workspace: Path) -> None:
        """A recorded dry run is a `recipe` attempt with status checked."""
        report = run_recipe(recipe(), workspace)

        assert report.attempt_id is not None
        with Store.open(workspace / ".patchsmith") as store:
            attempt = store.get(report.attempt_id)
        assert AttemptKind.RECIPE == attempt.kind
        assert "checked" == attempt.status.value


class TestApply:
    def test_writes_and_records(self, workspace: Path) -> None:
        """apply=True writes the change and records an applied attempt with its diff."""
        report = run_recipe(recipe(), workspace, apply=True)

        assert RecipeStatus.APPLIED == report.status and report.idempotent is True
        assert AFTER == (workspace / "tests/test_a.py").read_text()
        with Store.open(workspace / ".patchsmith") as store:
            attempt = store.get(report.attempt_id or "")
        assert "applied" == attempt.status.value
        assert "assert f(1) == 2" in attempt.applied_diff

    def test_second_run_has_nothing_to_do(self, workspace: Path) -> None:
        """Running again after an apply changes nothing."""
        run_recipe(recipe(), workspace, apply=True, record=False)

        again = run_recipe(recipe(), workspace, apply=True, record=False)

        assert RecipeStatus.NO_CHANGE == again.status and again.ok

    def test_public_api(self, workspace: Path) -> None:
        """`patchsmith.run_recipe` runs a built-in recipe by id."""
        report = patchsmith.run_recipe("unittest-to-assert", workspace, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert AFTER == (workspace / "tests/test_a.py").read_text()

    def test_paths_narrow_the_scope(self, workspace: Path) -> None:
        """`paths` leaves files outside them alone."""
        report = run_recipe(recipe(), workspace, paths=["tests/test_b.py"], record=False)

        assert (RecipeStatus.NO_CHANGE, 1) == (report.status, report.files_scanned)


class TestGuards:
    def test_forbidden_file_is_skipped(self, workspace: Path) -> None:
        """A file the policy forbids is left out, with the reason; others still change."""
        write_tree(workspace, {"tests/test_c.py": TEST})
        policy = Policy(forbidden=("tests/test_c.py",))

        report = run_recipe(recipe(), workspace, apply=True, record=False, policy=policy)

        assert RecipeStatus.APPLIED == report.status
        assert TEST == (workspace / "tests/test_c.py").read_text()
        assert ["tests/test_c.py"] == [s.path for s in report.skipped]
        assert "FORBIDDEN_PATH" in report.skipped[0].reason

    def test_generated_file_is_skipped(self, workspace: Path) -> None:
        """A generated file is never changed by a recipe."""
        write_tree(workspace, {"tests/test_gen.py": "# @generated\n" + TEST})

        report = run_recipe(recipe(), workspace, apply=True, record=False)

        assert "GENERATED_FILE" in next(s.reason for s in report.skipped)
        assert (workspace / "tests/test_gen.py").read_text().startswith("# @generated")

    def test_lockfile_is_skipped(self, tmp_path: Path) -> None:
        """A lock file is never changed by a recipe, even when it matches."""
        write_tree(tmp_path, {"package-lock.json": '{"old": 1}\n', "app.json": '{"old": 2}\n'})
        rename = parse_recipe(
            "recipe_id: r\nlanguage: json\nsummary: s\n"
            "operations: [{type: config_key_rename, from: old, to: new}]\n"
        )
        assert isinstance(rename, Recipe)

        report = run_recipe(rename, tmp_path, apply=True, record=False)

        assert "LOCKFILE_CHANGED" in report.skipped[0].reason
        assert '{"old": 1}\n' == (tmp_path / "package-lock.json").read_text()
        assert '{"new": 2}\n' == (tmp_path / "app.json").read_text()

    def test_non_utf8_file_is_never_rewritten(self, workspace: Path) -> None:
        """A Latin-1 file that matches is left as it is (byte offsets are UTF-8's)."""
        latin = b"# caf\xe9\n" + TEST.encode()
        (workspace / "tests/test_latin.py").write_bytes(latin)

        report = run_recipe(recipe(), workspace, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert latin == (workspace / "tests/test_latin.py").read_bytes()

    def test_non_utf8_config_is_skipped(self, tmp_path: Path) -> None:
        """A config file that is not UTF-8 is reported as skipped with the reason."""
        (tmp_path / "a.yaml").write_bytes(b"old: caf\xe9\n")
        rename = parse_recipe(
            "recipe_id: r\nlanguage: yaml\nsummary: s\n"
            "operations: [{type: config_key_rename, from: old, to: new}]\n"
        )
        assert isinstance(rename, Recipe)

        report = run_recipe(rename, tmp_path, apply=True, record=False)

        assert [("a.yaml", True)] == [(s.path, "UTF-8" in s.reason) for s in report.skipped]


class TestRefusals:
    def test_not_idempotent_writes_nothing(self, workspace: Path) -> None:
        """A fix whose output matches again is NOT_IDEMPOTENT and nothing is written."""
        growing = EQUAL_RULE.replace(
            'fix: "assert $A == $B"',
            'fix: "self.assertEqual($A, $B)\\n        self.assertEqual($A, $B)"',
        )
        before = snapshot(workspace)

        report = run_recipe(recipe(growing), workspace, apply=True, record=False)

        assert RecipeStatus.REFUSED == report.status
        assert FailureCode.NOT_IDEMPOTENT in [e.code for e in report.errors]
        assert before == snapshot(workspace)

    @pytest.mark.parametrize("grows", [False, True], ids=["idempotent", "growing"])
    def test_rerun_in_background_decides_as_inline(self, workspace: Path, grows: bool) -> None:
        """The idempotency re-run left on a thread, once settled, says what the inline one says."""
        from patchsmith.codemod.runner import plan_recipe

        text = EQUAL_RULE
        if grows:
            text = text.replace(
                'fix: "assert $A == $B"',
                'fix: "self.assertEqual($A, $B)\n        self.assertEqual($A, $B)"',
            )
        inline = plan_recipe(recipe(text), workspace)
        later = plan_recipe(recipe(text), workspace, rerun_in_background=True)
        assert later.pending_rerun is not None
        later.settle()
        later.settle()  # settling twice changes nothing

        assert (inline.idempotent, [e.code for e in inline.errors]) == (
            later.idempotent,
            [e.code for e in later.errors],
        )
        assert inline.idempotent is (not grows)

    def test_background_rerun_failure_reaches_settle(
        self, workspace: Path, monkeypatch: pytest.MonkeyPatch, scratch_folders: list[Path]
    ) -> None:
        """An error on the re-run's thread is raised by `settle`; its scratch copy is removed."""
        from patchsmith.codemod import runner

        def broken(_recipe: Recipe, _work: object) -> None:
            raise RuntimeError("re-run broke")

        monkeypatch.setattr(runner, "_rerun_on", broken)
        plan = runner.plan_recipe(recipe(), workspace, rerun_in_background=True)

        with pytest.raises(RuntimeError, match="re-run broke"):
            plan.settle()
        for thread in threading.enumerate():
            if thread.name == "patchsmith-rerun":
                thread.join()
        assert scratch_folders and not any(folder.exists() for folder in scratch_folders)

    def test_scratch_copy_failure_leaves_no_folder(
        self, workspace: Path, monkeypatch: pytest.MonkeyPatch, scratch_folders: list[Path]
    ) -> None:
        """Writing the re-run's scratch copy fails: the error surfaces and the folder is gone."""
        from patchsmith.codemod import runner

        def full(_texts: object, _folder: Path) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(runner.WorkSet, "from_texts", full)

        with pytest.raises(OSError, match="No space"):
            runner.plan_recipe(recipe(), workspace, rerun_in_background=True)
        assert scratch_folders and not any(folder.exists() for folder in scratch_folders)

    def test_rerun_thread_that_cannot_start_leaves_no_folder(
        self, workspace: Path, monkeypatch: pytest.MonkeyPatch, scratch_folders: list[Path]
    ) -> None:
        """No thread to be had: the error surfaces and the scratch copy is removed."""
        from patchsmith.codemod import runner

        def refuse(_thread: threading.Thread) -> None:
            raise RuntimeError("can't start new thread")

        monkeypatch.setattr(threading.Thread, "start", refuse)

        with pytest.raises(RuntimeError, match="start new thread"):
            runner.plan_recipe(recipe(), workspace, rerun_in_background=True)
        assert scratch_folders and not any(folder.exists() for folder in scratch_folders)

    def test_not_idempotent_before_postconditions(self, workspace: Path) -> None:
        """A recipe with postconditions waits for the re-run first: NOT_IDEMPOTENT, no checks."""
        growing = (
            EQUAL_RULE.replace(
                'fix: "assert $A == $B"',
                'fix: "self.assertEqual($A, $B)\n        self.assertEqual($A, $B)"',
            )
            + "postconditions: [{no_reference: 'self.assertEqual($A, $B)'}]\n"
        )
        before = snapshot(workspace)

        report = run_recipe(recipe(growing), workspace, apply=True, record=True)

        assert [FailureCode.NOT_IDEMPOTENT] == [e.code for e in report.errors]
        assert [] == [c for c in report.checks if not c.before]  # no postcondition was run
        assert before == snapshot(workspace)
        assert report.attempt_id is not None  # the refusal is recorded

    def test_precondition_failure(self, workspace: Path) -> None:
        """A missing file named by file_exists refuses the run before any operation."""
        text = EQUAL_RULE + "preconditions: [{file_exists: setup.cfg}]\n"

        report = run_recipe(recipe(text), workspace, apply=True, record=False)

        assert [FailureCode.PRECONDITION_FAILED] == [e.code for e in report.errors]

    def test_pattern_present_precondition(self, workspace: Path) -> None:
        """pattern_present passes when the pattern occurs in scope."""
        text = EQUAL_RULE + "preconditions: [{pattern_present: 'self.assertEqual($A, $B)'}]\n"

        report = run_recipe(recipe(text), workspace, record=False)

        assert RecipeStatus.DRY_RUN == report.status
        assert "passed" == report.checks[0].status.value

    def test_dependency_precondition_reads_manifest(self, workspace: Path) -> None:
        """dependency_present reads pyproject.toml's dependencies."""
        write_tree(
            workspace, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["Requests>=2"]\n'}
        )
        ok = run_recipe(
            recipe(EQUAL_RULE + "preconditions: [{dependency_present: requests}]\n"),
            workspace,
            record=False,
        )
        missing = run_recipe(
            recipe(EQUAL_RULE + "preconditions: [{dependency_present: flask}]\n"),
            workspace,
            record=False,
        )

        assert RecipeStatus.DRY_RUN == ok.status
        assert [FailureCode.PRECONDITION_FAILED] == [e.code for e in missing.errors]

    def test_no_reference_postcondition(self, workspace: Path) -> None:
        """A no_reference pattern still present after the change refuses it."""
        text = EQUAL_RULE + "postconditions: [{no_reference: 'assert $A == $B'}]\n"
        before = snapshot(workspace)

        report = run_recipe(recipe(text), workspace, apply=True, record=False)

        assert [FailureCode.POSTCONDITION_FAILED] == [e.code for e in report.errors]
        assert "tests/test_a.py:5" in report.errors[0].message
        assert before == snapshot(workspace)

    def test_bad_rule_is_a_backend_error(self, workspace: Path) -> None:
        """A rule ast-grep rejects is CODEMOD_BACKEND_ERROR with ast-grep's message."""
        text = EQUAL_RULE.replace('rule: {pattern: "self.assertEqual($A, $B)"}', "rule: {kind: 1}")

        report = run_recipe(recipe(text), workspace, record=False)

        assert [FailureCode.CODEMOD_BACKEND_ERROR] == [e.code for e in report.errors]

    def test_unknown_recipe(self, workspace: Path) -> None:
        """An unknown id is RECIPE_NOT_FOUND listing the known ones."""
        report = run_recipe("no-such-recipe", workspace)

        assert [FailureCode.RECIPE_NOT_FOUND] == [e.code for e in report.errors]
        assert "unittest-to-assert" in report.errors[0].message

    def test_missing_root(self, tmp_path: Path) -> None:
        """A root that is not a directory is refused."""
        report = run_recipe(recipe(), tmp_path / "nope")

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in report.errors]

    def test_invalid_policy(self, workspace: Path) -> None:
        """An unreadable policy refuses the run."""
        write_tree(workspace, {"patchsmith.toml": "[policy]\nbogus = 1\n"})

        report = run_recipe(recipe(), workspace, record=False)

        assert [FailureCode.INVALID_POLICY] == [e.code for e in report.errors]


class TestPasses:
    def test_nested_matches_take_two_passes(self, tmp_path: Path) -> None:
        """A match inside another is fixed on a second pass over the new text."""
        write_tree(tmp_path, {"a.py": "x = foo(foo(1), foo(2))\n"})
        text = (
            "recipe_id: n\nlanguage: python\nsummary: s\n"
            "operations: [{type: ast_grep_rule, rule: {pattern: foo($$$A)}, fix: bar($$$A)}]\n"
        )

        report = run_recipe(recipe(text), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert "x = bar(bar(1), bar(2))\n" == (tmp_path / "a.py").read_text()
        assert 3 == report.files[0].matches

    def test_symlinks_and_excluded_files_are_not_read(self, tmp_path: Path) -> None:
        """Symlinked files, scope excludes and the root .gitignore keep files out."""
        write_tree(
            tmp_path,
            {"tests/test_a.py": TEST, "build/test_b.py": TEST, ".gitignore": "build/\n"},
        )
        (tmp_path / "tests/test_link.py").symlink_to(tmp_path / "tests/test_a.py")
        text = EQUAL_RULE + "scope: {exclude: ['tests/test_a.py']}\n"

        report = run_recipe(recipe(text), tmp_path, record=False)

        assert (RecipeStatus.NO_CHANGE, 0) == (report.status, report.files_scanned)
