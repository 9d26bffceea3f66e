"""`patchsmith.propose` and `patchsmith propose`: a proposal exercising every field."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from tests.workspace_snapshot import make_tree, snapshot_tree

import patchsmith.cli
from patchsmith import PatchProposal, Policy, propose
from patchsmith.attempt.conditions import ConditionStatus
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyReport, ApplyStatus
from patchsmith.store import AttemptKind, Store

USERS = b"def normalise(name):\n    return name\n"
SECRET_FILE = b"token = 'old'\n"

CliRun = Callable[..., tuple[int, str, str]]


# The verification plan's `unit` profile: a test command that passes.
UNIT_PROFILE = (
    f'[verify.unit]\nargv = [{json.dumps(sys.executable)}, "-c", "pass"]\nkind = "test"\n'
).encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def full_proposal(**changes: object) -> dict[str, object]:
    """A proposal that sets every field; `changes` replace top-level fields."""
    proposal: dict[str, object] = {
        "proposal_id": "p-1",
        "run_id": "r-1",
        "attempt_no": 1,
        "strategy": "HYBRID",
        "objective": "normalise usernames",
        "rationale": "login is case-sensitive today",
        "expected_files": ["src/users.py", "docs/**", "old.txt"],
        "forbidden_files": ["secrets/**"],
        "preconditions": [
            {"type": "FILE_HASH_MATCH", "path": "src/users.py", "value": sha(USERS)},
            {"type": "FILE_EXISTS", "path": "src/users.py"},
            {"type": "PATH_ALLOWED", "path": "docs/users.md"},
        ],
        "operations": [
            {
                "type": "patch",
                "format": "udiff",
                "text": "--- a/src/users.py\n+++ b/src/users.py\n@@\n def normalise(name):\n"
                "-    return name\n+    return name.lower()\n",
            },
            {
                "type": "direct_write",
                "path": "docs/users.md",
                "content": "# Users\n",
                "expected_sha256": None,
                "allow_create": True,
                "reason": "document the rule",
            },
            {
                "type": "direct_write",
                "path": "old.txt",
                "content": None,
                "expected_sha256": sha(b"old\n"),
                "allow_delete": True,
            },
        ],
        "expected_postconditions": [
            {"type": "NO_FORBIDDEN_PATH_CHANGED"},
            {"type": "DIFF_MAX_FILES", "value": 3},
            {"type": "DIFF_MAX_LINES", "value": 10},
            {"type": "NO_SECRET_ADDED"},
            {"type": "NO_BINARY_CHANGED"},
            {"type": "SYNTAX_VALID"},
            {"type": "COMPILES"},
            {"type": "TESTS_PASS"},
        ],
        "verification_plan": {"profile": "unit", "timeout_seconds": 60},
        "risk": "MEDIUM",
    }
    proposal.update(changes)
    return proposal


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path / "ws",
        {
            "src/users.py": USERS,
            "old.txt": b"old\n",
            "secrets/key.txt": SECRET_FILE,
            "patchsmith.toml": UNIT_PROFILE,
        },
    )


@pytest.fixture(name="cli")
def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> CliRun:
    """Run `patchsmith ARGS...` in-process; returns (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = patchsmith.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _refused(report: ApplyReport, root: Path, before: object) -> list[FailureCode]:
    assert ApplyStatus.REFUSED == report.status
    assert before == snapshot_tree(root)
    return [e.code for e in report.errors]


class TestFullProposal:
    def test_applies_through_the_api(self, root: Path) -> None:
        """Every operation lands, every condition is reported, and the attempt is recorded."""
        report = propose(full_proposal(), root)

        assert ApplyStatus.APPLIED == report.status, report.errors
        files = snapshot_tree(root).files()
        assert b"def normalise(name):\n    return name.lower()\n" == files["src/users.py"]
        assert b"# Users\n" == files["docs/users.md"]
        assert "old.txt" not in files
        assert [ConditionStatus.PASSED] * 3 == [c.status for c in report.preconditions]
        statuses = [c.status for c in report.postconditions]
        assert [ConditionStatus.PASSED] * 8 == statuses
        with Store.open(root / ".patchsmith") as store:
            rec = store.get(report.attempt_id or "")
        assert rec is not None
        assert (AttemptKind.PROPOSE, "p-1", "r-1", 1) == (
            rec.kind,
            rec.proposal_id,
            rec.run_id,
            rec.attempt_no,
        )
        assert PatchProposal.model_validate_json(rec.proposal_json or "") == PatchProposal(
            **full_proposal()  # type: ignore[arg-type]
        )

    @pytest.mark.parametrize("form", ["model", "json", "yaml", "path"])
    def test_every_input_form(self, root: Path, tmp_path: Path, form: str) -> None:
        """A model, JSON text, YAML text and a file path are all accepted."""
        data = full_proposal()
        source: object = {
            "model": PatchProposal.model_validate(data),
            "json": json.dumps(data),
            "yaml": yaml.safe_dump(data),
            "path": tmp_path / "p.json",
        }[form]
        (tmp_path / "p.json").write_text(json.dumps(data))

        report = propose(source, root)  # type: ignore[arg-type]

        assert ApplyStatus.APPLIED == report.status

    def test_check_writes_nothing(self, root: Path) -> None:
        """With check, the diff is reported and the tree is untouched."""
        before = snapshot_tree(root)

        report = propose(full_proposal(), root, check=True)

        assert (ApplyStatus.APPLIED, True) == (report.status, report.check)
        assert "+# Users" in report.diff
        assert before == snapshot_tree(root)

    def test_base_commit_recorded_in_a_repository(self, root: Path) -> None:
        """In a git repository the record carries HEAD; BASE_COMMIT_MATCH passes on it."""
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
        subprocess.run([*git, "init", "-q"], cwd=root, check=True)
        subprocess.run([*git, "add", "."], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        pre = [{"type": "BASE_COMMIT_MATCH", "value": head[:12]}]

        report = propose(full_proposal(preconditions=pre), root)

        assert ApplyStatus.APPLIED == report.status
        with Store.open(root / ".patchsmith") as store:
            rec = store.get(report.attempt_id or "")
        assert rec is not None
        assert head == rec.base_commit
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
        ).stdout
        assert ".patchsmith" not in status


class TestRefusals:
    def test_invalid_proposal(self, root: Path) -> None:
        """A proposal that does not validate is INVALID_PROPOSAL and is still recorded."""
        before = snapshot_tree(root)

        report = propose(full_proposal(risk="EXTREME", attempt_no=0), root)

        assert [FailureCode.INVALID_PROPOSAL] == _refused(report, root, before)
        assert "attempt_no" in report.errors[0].message
        assert report.attempt_id is not None

    @pytest.mark.parametrize(
        "operation",
        [
            {"type": "ast_transform", "recipe": "rename", "params": {"n": 1}},
        ],
    )
    def test_unsupported_operations(self, root: Path, operation: dict[str, object]) -> None:
        """Recipe parameters are NOT_SUPPORTED_YET, never silently skipped."""
        before = snapshot_tree(root)
        operations = [*full_proposal()["operations"], operation]  # type: ignore[misc]

        report = propose(full_proposal(operations=operations), root)

        assert [FailureCode.NOT_SUPPORTED_YET] == _refused(report, root, before)

    @pytest.mark.parametrize(
        ("precondition", "evidence"),
        [
            ({"type": "FILE_HASH_MATCH", "path": "src/users.py", "value": "0" * 64}, "actual"),
            ({"type": "FILE_EXISTS", "path": "nope.py"}, "no such file"),
            ({"type": "PATH_ALLOWED", "path": "secrets/x"}, "forbidden"),
            ({"type": "BASE_COMMIT_MATCH", "value": "abcdef0"}, "HEAD"),
        ],
    )
    def test_failed_precondition(
        self, root: Path, precondition: dict[str, object], evidence: str
    ) -> None:
        """A failed precondition is PRECONDITION_FAILED with its evidence; nothing is staged."""
        before = snapshot_tree(root)

        report = propose(full_proposal(preconditions=[precondition]), root)

        assert [FailureCode.PRECONDITION_FAILED] == _refused(report, root, before)
        assert [ConditionStatus.FAILED] == [c.status for c in report.preconditions]
        assert evidence in report.preconditions[0].evidence

    def test_forbidden_file_of_the_proposal(self, root: Path) -> None:
        """The proposal's forbidden_files are enforced by the guard and the postcondition."""
        before = snapshot_tree(root)
        write = {
            "type": "direct_write",
            "path": "secrets/key.txt",
            "content": "token = 'new'\n",
            "expected_sha256": sha(SECRET_FILE),
        }

        report = propose(full_proposal(operations=[write], preconditions=[]), root)

        codes = _refused(report, root, before)
        assert {
            FailureCode.FORBIDDEN_PATH,
            FailureCode.POSTCONDITION_FAILED,
            FailureCode.DIFF_BUDGET_EXCEEDED,  # secrets/ is not among the expected files either
        } == set(codes)
        assert "forbidden_paths" in {e.rule for e in report.errors}

    def test_budget_postcondition(self, root: Path) -> None:
        """DIFF_MAX_FILES below the change size refuses through the tightened policy."""
        before = snapshot_tree(root)
        post = [{"type": "DIFF_MAX_FILES", "value": 1}]

        report = propose(full_proposal(expected_postconditions=post), root)

        codes = _refused(report, root, before)
        assert {FailureCode.DIFF_BUDGET_EXCEEDED, FailureCode.POSTCONDITION_FAILED} == set(codes)

    def test_loosening_is_reported_and_ignored(self, root: Path) -> None:
        """A budget above the policy's is ignored (the policy's applies) and noted."""
        post = [{"type": "DIFF_MAX_FILES", "value": 50}]

        report = propose(
            full_proposal(expected_postconditions=post), root, policy=Policy(max_files=2)
        )

        assert [FailureCode.DIFF_BUDGET_EXCEEDED] == [e.code for e in report.errors]
        assert any("DIFF_MAX_FILES 50" in note for note in report.notes)

    def test_hunks_outside_expected(self, root: Path) -> None:
        """Hunks in files outside expected_files count against the policy's budget."""
        report = propose(
            full_proposal(expected_files=["docs/**"]),
            root,
            policy=Policy(max_hunks_outside_expected=0),
        )

        assert [FailureCode.DIFF_BUDGET_EXCEEDED] == [e.code for e in report.errors]
        assert "hunks_outside_expected" == report.errors[0].rule

    def test_expected_files_enforced_by_default(self, root: Path) -> None:
        """With the default policy, a file outside expected_files is refused, nothing written."""
        before = snapshot_tree(root)

        report = propose(full_proposal(expected_files=["src/users.py", "docs/**"]), root)

        codes = _refused(report, root, before)
        assert [FailureCode.DIFF_BUDGET_EXCEEDED] == codes
        assert "old.txt: not among the proposal's expected_files" in report.errors[0].message

    def test_policy_relaxes_expected_files(self, root: Path) -> None:
        """A policy budget, or the guard switched off, lets the proposal write elsewhere."""
        narrow = full_proposal(expected_files=["src/users.py", "docs/**"])
        off = Policy.model_validate({"guards": {"hunks_outside_expected": False}})

        assert ApplyStatus.APPLIED == propose(narrow, root, check=True, policy=off).status
        budget = Policy(max_hunks_outside_expected=1)
        assert ApplyStatus.APPLIED == propose(narrow, root, check=True, policy=budget).status

    def test_stale_direct_write(self, root: Path) -> None:
        """A direct write whose expected hash no longer matches is STALE_FILE with both hashes."""
        (root / "old.txt").write_bytes(b"edited\n")
        before = snapshot_tree(root)

        report = propose(full_proposal(), root)

        codes = _refused(report, root, before)
        assert [FailureCode.STALE_FILE] == codes
        assert sha(b"old\n") in report.errors[0].message
        assert sha(b"edited\n") in report.errors[0].message
        assert report.errors[0].message.startswith("operations[2]: ")

    def test_patch_that_does_not_locate(self, root: Path) -> None:
        """A patch operation that does not locate refuses the whole proposal."""
        (root / "src/users.py").write_bytes(b"something else\n")
        before = snapshot_tree(root)

        report = propose(full_proposal(preconditions=[]), root)

        assert FailureCode.PATCH_CONTEXT_MISMATCH in _refused(report, root, before)

    def test_no_change(self, root: Path) -> None:
        """Operations that change nothing are NO_CHANGE."""
        write = {
            "type": "direct_write",
            "path": "old.txt",
            "content": "old\n",
            "expected_sha256": sha(b"old\n"),
        }

        report = propose(full_proposal(operations=[write], preconditions=[]), root)

        assert [FailureCode.NO_CHANGE] == [e.code for e in report.errors]

    def test_bad_policy_and_missing_root(self, root: Path, tmp_path: Path) -> None:
        """A bad policy file is INVALID_POLICY; a missing root is FILE_NOT_FOUND."""
        (root / "patchsmith.toml").write_text("[policy]\nmax_files = 'many'\n")

        bad = propose(full_proposal(), root)
        missing = propose(full_proposal(), tmp_path / "nope")

        assert [FailureCode.INVALID_POLICY] == [e.code for e in bad.errors]
        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in missing.errors]


class TestCli:
    def test_applies_and_prints_json(self, cli: CliRun, root: Path, tmp_path: Path) -> None:
        """`patchsmith propose FILE -C DIR --json` applies and prints the report."""
        path = tmp_path / "p.json"
        path.write_text(json.dumps(full_proposal()))

        code, out, _ = cli("propose", str(path), "-C", str(root), "--json")

        data = json.loads(out)
        assert (0, "applied") == (code, data["status"])
        assert {"preconditions", "postconditions", "decisions", "attempt_id"} <= set(data)

    def test_yaml_check_and_no_record(self, cli: CliRun, root: Path, tmp_path: Path) -> None:
        """A YAML file with --check --no-record writes nothing at all."""
        path = tmp_path / "p.yaml"
        path.write_text(yaml.safe_dump(full_proposal()))
        before = snapshot_tree(root, exclude=())

        code, out, _ = cli("propose", str(path), "-C", str(root), "--check", "--no-record")

        assert 0 == code
        assert "+# Users" in out
        assert before == snapshot_tree(root, exclude=())

    def test_refusal_exits_one(self, cli: CliRun, root: Path, tmp_path: Path) -> None:
        """A refused proposal exits 1 and says why on stderr."""
        path = tmp_path / "p.json"
        path.write_text(
            json.dumps(full_proposal(preconditions=[{"type": "FILE_EXISTS", "path": "x"}]))
        )

        code, out, err = cli("propose", str(path), "-C", str(root))

        assert 1 == code
        assert "PRECONDITION_FAILED" in err
        assert "failed      FILE_EXISTS" in out

    def test_already_applied_exits_zero(self, cli: CliRun, root: Path, tmp_path: Path) -> None:
        """The second run of the same proposal exits 0 and says it was already applied."""
        path = tmp_path / "p.json"
        path.write_text(json.dumps(full_proposal()))
        cli("propose", str(path), "-C", str(root))

        code, out, _ = cli("propose", str(path), "-C", str(root))

        assert 0 == code
        assert "already applied" in out

    def test_unreadable_file_is_usage_error(self, cli: CliRun, root: Path) -> None:
        """A FILE that cannot be read exits 2."""
        code, _, err = cli("propose", str(root / "missing.json"), "-C", str(root))

        assert 2 == code
        assert "cannot read" in err

    def test_invalid_json_exits_one(self, cli: CliRun, root: Path, tmp_path: Path) -> None:
        """Malformed proposal text is INVALID_PROPOSAL, exit 1."""
        path = tmp_path / "p.json"
        path.write_text('{"proposal_id": ')

        code, out, _ = cli("propose", str(path), "-C", str(root), "--json")

        assert 1 == code
        assert "INVALID_PROPOSAL" == json.loads(out)["errors"][0]["code"]

    def test_stdin(self, cli: CliRun, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """`-` reads the proposal from standard input."""
        import io

        monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(full_proposal())))

        code, _, _ = cli("propose", "-", "-C", str(root))

        assert 0 == code


# Runs in a child: `propose` a three-file proposal and die (os._exit) at commit step N.
CRASH_CHILD = """
import json, os, sys
from patchsmith import propose
from patchsmith.runtime.transaction import Transaction

root, target, proposal = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
real_commit = Transaction.commit
seen = []

def on_step(name):
    if len(seen) == target:
        os._exit(17)
    seen.append(name)

Transaction.commit = lambda self, **kw: real_commit(self, on_step=on_step)
report = propose(proposal, root)
print(report.status.value, len(seen))
"""


class TestCrash:
    def test_killed_at_each_commit_step(self, tmp_path: Path) -> None:
        """A proposal killed at any commit step leaves, after reopening, all-old or all-new."""
        from patchsmith.runtime.workspace import Workspace

        data = json.dumps(full_proposal())
        runs = []
        for n in range(12):
            root = make_tree(
                tmp_path / f"n{n}",
                {
                    "src/users.py": USERS,
                    "old.txt": b"old\n",
                    "secrets/key.txt": SECRET_FILE,
                    "patchsmith.toml": UNIT_PROFILE,
                },
            )
            old = snapshot_tree(root)
            child = subprocess.run(
                [sys.executable, "-c", CRASH_CHILD, str(root), str(n), data],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert child.returncode in (0, 17), child.stderr
            Workspace(root)  # recovery happens on open
            now = snapshot_tree(root)
            all_new = now.files() == {
                "src/users.py": b"def normalise(name):\n    return name.lower()\n",
                "docs/users.md": b"# Users\n",
                "secrets/key.txt": SECRET_FILE,
                "patchsmith.toml": UNIT_PROFILE,
            }
            assert all_new or old == now, f"killed at step {n}: neither all-old nor all-new"
            assert all_new or child.returncode == 17
            runs.append(child.returncode)
            if child.returncode == 0:
                break

        assert 0 == runs[-1]
        assert len(runs) > 5


class TestWithoutGit:
    def test_no_git_means_no_base_commit(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """When git cannot run, the attempt records no base commit and still applies."""
        import subprocess as subprocess_module

        def no_git(*args: object, **kwargs: object) -> object:
            raise FileNotFoundError("git")

        monkeypatch.setattr(subprocess_module, "run", no_git)

        report = propose(full_proposal(), root)

        with Store.open(root / ".patchsmith") as store:
            rec = store.get(report.attempt_id or "")
        assert rec is not None
        assert (ApplyStatus.APPLIED, None) == (report.status, rec.base_commit)
