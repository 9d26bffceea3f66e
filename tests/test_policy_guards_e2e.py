"""The review and policy guards end to end: through `propose`, `apply` and the CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import snapshot_tree as snapshot

import patchsmith
from patchsmith import apply, propose
from patchsmith.cli import main

PACKAGE_JSON = '{\n  "name": "web",\n  "dependencies": {\n    "lodash": "^4.17.21"\n  }\n}\n'
ADD_LEFT_PAD = (
    "--- a/package.json\n+++ b/package.json\n@@ -3,3 +3,4 @@\n"
    '   "dependencies": {\n-    "lodash": "^4.17.21"\n+    "lodash": "^4.17.21",\n'
    '+    "left-pad": "^1.3.0"\n   }\n'
)


def _proposal(*operations: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "proposal_id": "p1",
        "run_id": "r1",
        "attempt_no": 1,
        "strategy": "UNIFIED_DIFF",
        "objective": "test",
        "operations": list(operations),
        **extra,
    }


@pytest.fixture(name="web")
def _web(tmp_path: Path) -> Path:
    (tmp_path / "package.json").write_text(PACKAGE_JSON)
    return tmp_path


class TestDependenciesEndToEnd:
    def test_proposal_adding_a_dependency_is_refused_and_nothing_written(self, web: Path) -> None:
        """An undeclared dependency in a proposal is DEPENDENCY_CHANGED; the disk is unchanged."""
        before = snapshot(web)

        report = propose(_proposal({"type": "patch", "text": ADD_LEFT_PAD}), web, record=False)

        assert ["DEPENDENCY_CHANGED"] == [e.code.value for e in report.errors]
        assert before == snapshot(web)

    def test_declared_dependency_is_applied_and_noted(self, web: Path) -> None:
        """allowed_dependency_changes lets it through and the report notes it."""
        proposal = _proposal(
            {"type": "patch", "text": ADD_LEFT_PAD}, allowed_dependency_changes=["left-pad"]
        )

        report = propose(proposal, web, record=False)

        assert report.ok
        assert any("left-pad added" in note for note in report.notes)

    def test_plain_apply_reports_and_policy_can_refuse(self, web: Path) -> None:
        """apply notes the change by default; mode = "refuse" refuses it (CLI, exit 1)."""
        report = apply(ADD_LEFT_PAD, web, record=False)
        assert report.ok
        (web / "package.json").write_text(PACKAGE_JSON)
        (web / "patchsmith.toml").write_text('[policy.dependencies]\nmode = "refuse"\n')
        patch = web / "change.diff"
        patch.write_text(ADD_LEFT_PAD)

        code = main(["apply", str(patch), "-C", str(web), "--json", "--no-record"])

        assert 1 == code
        assert PACKAGE_JSON == (web / "package.json").read_text()


class TestReviewEndToEnd:
    def test_whole_file_rewrite_with_drift_is_refused_by_the_cli(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A drifting direct write under a strict review policy is REVIEW_DRIFT via the CLI."""
        old = "import os\nimport sys\n\n# keep me\n" + "".join(
            f"def f{i}():\n    return {i}\n\n" for i in range(10)
        )
        new = old.replace("import os\nimport sys\n", "import sys\nimport os\n").replace(
            "# keep me\n", ""
        )
        (tmp_path / "app.py").write_text(old)
        (tmp_path / "patchsmith.toml").write_text(
            "[policy.review]\nmin_changed_lines = 1\nallow_import_reorder = false\n"
        )
        op = {
            "type": "direct_write",
            "path": "app.py",
            "content": new,
            "expected_sha256": hashlib.sha256(old.encode()).hexdigest(),
        }
        proposal = tmp_path / "p.json"
        proposal.write_text(json.dumps(_proposal(op)))

        code = main(["propose", str(proposal), "-C", str(tmp_path), "--json", "--no-record"])

        data = json.loads(capsys.readouterr().out)
        assert 1 == code
        assert ["REVIEW_DRIFT"] == [e["code"] for e in data["errors"]]
        assert "imports reordered" in data["errors"][0]["message"]
        assert old == (tmp_path / "app.py").read_text()

    def test_hunk_outside_target_region_is_refused(self, tmp_path: Path) -> None:
        """A proposal's target_regions make a hunk elsewhere REVIEW_DRIFT with defaults."""
        old = "".join(f"line {i}\n" for i in range(1, 41))
        (tmp_path / "notes.txt").write_text(old)
        diff = (
            "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n line 1\n-line 2\n+line two\n"
            " line 3\n@@ -29,3 +29,3 @@\n line 29\n-line 30\n+line thirty\n line 31\n"
        )
        regions = [{"path": "notes.txt", "start_line": 2, "end_line": 2}]

        refused = propose(
            _proposal({"type": "patch", "text": diff}, target_regions=regions),
            tmp_path,
            record=False,
        )
        regions[0]["end_line"] = 31
        applied = propose(
            _proposal({"type": "patch", "text": diff}, target_regions=regions),
            tmp_path,
            record=False,
        )

        assert ["REVIEW_DRIFT"] == [e.code.value for e in refused.errors]
        assert applied.ok


class TestLicenceAndOwnershipEndToEnd:
    def test_dropped_header_is_refused(self, tmp_path: Path) -> None:
        """Dropping an SPDX line through apply is LICENCE_HEADER_MISSING."""
        (tmp_path / "a.py").write_text("# SPDX-License-Identifier: MIT\nx = 1\n")
        diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,1 @@\n-# SPDX-License-Identifier: MIT\n x = 1\n"

        report = apply(diff, tmp_path, record=False)

        assert ["LICENCE_HEADER_MISSING"] == [e.code.value for e in report.errors]

    def test_flagged_owner_is_noted_and_applied(self, tmp_path: Path) -> None:
        """In flag mode a change to another team's path applies and is noted."""
        (tmp_path / "CODEOWNERS").write_text("* @web\n/billing/ @payments\n")
        (tmp_path / "billing").mkdir()
        (tmp_path / "billing" / "tax.py").write_text("TAX = 1\n")
        (tmp_path / "patchsmith.toml").write_text(
            '[policy.ownership]\nowner = ["@web"]\nmode = "flag"\n'
        )
        diff = "--- a/billing/tax.py\n+++ b/billing/tax.py\n@@ -1 +1 @@\n-TAX = 1\n+TAX = 2\n"

        report = apply(diff, tmp_path, record=False)

        assert report.ok
        assert "TAX = 2\n" == (tmp_path / "billing" / "tax.py").read_text()


class TestWholeFileMarking:
    def test_whole_file_edit_and_direct_write_are_marked(self, tmp_path: Path) -> None:
        """A whole-file reply is reviewed even when small; the same change as a diff is not."""
        old = "import os\nimport sys\n\nprint(os, sys)\n"
        new = "import sys\nimport os\n\nprint(os, sys)\n"
        (tmp_path / "patchsmith.toml").write_text("[policy.review]\nallow_import_reorder = false\n")
        (tmp_path / "a.py").write_text(old)
        whole_reply = f"a.py\n```python\n{new}```\n"
        diff = (
            "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-import os\n-import sys\n"
            "+import sys\n+import os\n"
        )

        whole = apply(whole_reply, tmp_path, record=False)
        as_diff = apply(diff, tmp_path, check=True, record=False)
        sha = hashlib.sha256(old.encode()).hexdigest()
        direct = patchsmith.write_file(tmp_path, "a.py", new, sha, "reorder", record=False)

        assert ["REVIEW_DRIFT"] == [e.code.value for e in whole.errors]
        assert as_diff.ok
        assert ["REVIEW_DRIFT"] == [e.code.value for e in direct.errors]
