"""`Toolbox`: every MCP tool called directly, without the SDK."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.mcp.conftest import APP, SLOPPY_PATCH, STALE_PATCH, excerpt_line, numbered
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.errors import PatchRefused
from patchsmith.mcp import toolbox as toolbox_module
from patchsmith.mcp.arguments import EditorArgs, ViewArgs
from patchsmith.mcp.results import MAX_DIFF_CHARS, ToolResult
from patchsmith.mcp.toolbox import Toolbox, decode_json_strings


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(name="box")
def _box(repo: Path) -> Toolbox:
    return Toolbox(repo)


def codes(result: ToolResult) -> list[str]:
    errors = result.content["errors"]
    assert isinstance(errors, list)
    return [e["code"] for e in errors]


def call(box: Toolbox, name: str, **arguments: Any) -> ToolResult:
    return box.call(name, arguments)


class TestConstruction:
    def test_missing_root(self, tmp_path: Path) -> None:
        """A root that is not a directory cannot be served."""
        with pytest.raises(PatchRefused) as raised:
            Toolbox(tmp_path / "nope")

        assert ["FILE_NOT_FOUND"] == [f.code.value for f in raised.value.failures]

    def test_invalid_policy(self, tmp_path: Path) -> None:
        """An unreadable policy stops the server before it starts."""
        root = make_tree(tmp_path / "r", {"patchsmith.toml": b"[policy]\nmax_file = 10\n"})

        with pytest.raises(PatchRefused) as raised:
            Toolbox(root)

        assert ["INVALID_POLICY"] == [f.code.value for f in raised.value.failures]

    def test_schemas(self, box: Toolbox) -> None:
        """Every tool has an object schema, without pydantic titles, refusing unknown keys."""
        for spec in box.tools():
            schema = spec.input_schema

            assert "object" == schema["type"]
            assert "title" not in schema
            assert schema.get("additionalProperties") is False

    def test_editor_schema_covers_the_format_tool(self) -> None:
        """`str_replace_editor` takes every argument of `patchsmith tools`' editor tool."""
        from patchsmith.formats.tools import tool_definitions

        (editor,) = tool_definitions("str_replace")
        ours = set(EditorArgs.model_fields)

        assert set(editor.parameters["properties"]) <= ours
        assert set(editor.parameters["properties"]["command"]["enum"]) <= {
            "view",
            "create",
            "str_replace",
            "insert",
            "undo_edit",
        }


class TestDispatch:
    def test_unknown_tool(self, box: Toolbox) -> None:
        """An unknown tool is an INVALID_ARGUMENTS result listing the tools."""
        result = call(box, "rm_rf")

        assert result.is_error
        assert ["INVALID_ARGUMENTS"] == codes(result)
        assert "read_file" in result.text

    @pytest.mark.parametrize(
        ("name", "arguments"),
        [
            ("read_file", {}),
            ("read_file", {"path": 3}),
            ("read_file", {"path": "app.py", "colour": "red"}),
            ("read_file", {"path": "app.py", "start_line": 0}),
            ("log", {"limit": 0}),
            ("apply", {"patch": "x", "format": "klingon"}),
            ("view", {"path": "app.py", "view_range": [1]}),
        ],
    )
    def test_invalid_arguments(self, box: Toolbox, name: str, arguments: dict[str, Any]) -> None:
        """Arguments that break the schema are a structured refusal, never an exception."""
        result = box.call(name, arguments)

        assert result.is_error
        assert ["INVALID_ARGUMENTS"] == codes(result)

    def test_none_arguments(self, box: Toolbox) -> None:
        """Missing arguments count as an empty object."""
        assert ["INVALID_ARGUMENTS"] == codes(box.call("read_file", None))

    def test_json_text_arguments(self, box: Toolbox) -> None:
        """A list sent as JSON text is decoded; a string field keeps JSON-looking text."""
        decoded = decode_json_strings({"path": "[1]", "view_range": "[1, 2]"}, ViewArgs)

        assert {"path": "[1]", "view_range": [1, 2]} == decoded
        assert not call(box, "view", path="app.py", view_range="[1, 2]").is_error

    def test_many_problems_are_summarised(self, box: Toolbox) -> None:
        """More than five schema problems are counted, not listed."""
        arguments = {f"x{n}": n for n in range(7)}

        result = box.call("log", arguments)

        assert "more" in result.text


class TestReading:
    def test_read_file(self, box: Toolbox) -> None:
        """Content, sha256 and numbered lines of the whole file."""
        result = call(box, "read_file", path="app.py")

        assert not result.is_error
        assert APP.decode().splitlines() == [line[4:] for line in numbered(result)]
        assert sha(APP) == result.content["sha256"]
        assert 6 == result.content["total_lines"]
        assert numbered(result)[0] == "1 | def greet(name):"
        assert "content" not in result.content  # the lines are sent once, as text

    def test_range(self, box: Toolbox) -> None:
        """start_line/end_line return a range; the sha256 is still the whole file's."""
        result = call(box, "read_file", path="/workspace/app.py", start_line=5, end_line=99)

        assert ["5 | def farewell(name):", '6 |     return "Bye, " + name'] == numbered(result)
        assert (5, 6) == (result.content["start_line"], result.content["end_line"])
        assert sha(APP) == result.content["sha256"]
        assert "lines 5-6 of 6" in result.text

    def test_view_range_or_start_line_not_both(self, box: Toolbox) -> None:
        result = call(box, "read_file", path="app.py", view_range=[1, 2], start_line=1)

        assert ["INVALID_ARGUMENTS"] == codes(result)

    def test_view_range_as_in_view(self, box: Toolbox) -> None:
        result = call(box, "read_file", path="app.py", view_range=[5, -1])

        assert (5, 6) == (result.content["start_line"], result.content["end_line"])

    @pytest.mark.parametrize(("start", "end"), [(7, None), (3, 2)])
    def test_bad_range(self, box: Toolbox, start: int, end: int | None) -> None:
        """A range past the end or backwards is refused."""
        result = call(box, "read_file", path="app.py", start_line=start, end_line=end)

        assert ["INVALID_ARGUMENTS"] == codes(result)

    def test_empty_file(self, repo: Path) -> None:
        """An empty file reads as zero lines."""
        (repo / "empty.txt").write_bytes(b"")

        result = call(Toolbox(repo), "read_file", path="empty.txt")

        assert (0, []) == (result.content["total_lines"], numbered(result))

    @pytest.mark.parametrize(
        ("path", "code"),
        [
            ("missing.py", "FILE_NOT_FOUND"),
            ("/etc/passwd", "PATH_OUTSIDE_WORKSPACE"),
            ("../repo/app.py", "PATH_OUTSIDE_WORKSPACE"),
            (".git/config", "PATH_OUTSIDE_WORKSPACE"),
        ],
    )
    def test_refused(self, box: Toolbox, path: str, code: str) -> None:
        """Missing files and paths outside the workspace are refused with the path codes."""
        assert [code] == codes(call(box, "read_file", path=path))

    def test_symlink_escape(self, repo: Path, tmp_path: Path) -> None:
        """A symlink out of the workspace is not followed."""
        (tmp_path / "secret.txt").write_text("s\n")
        os.symlink(tmp_path / "secret.txt", repo / "link.txt")

        assert ["SYMLINK_ESCAPE"] == codes(call(Toolbox(repo), "read_file", path="link.txt"))


class TestView:
    def test_root_listing(self, repo: Path) -> None:
        """The root lists two levels, hidden entries left out."""
        make_tree(repo, {"src/pkg/deep/x.py": b"", "src/a.py": b"", ".hidden/x": b""})

        result = call(Toolbox(repo), "view", path=".")

        assert [
            "app.py",
            "patchsmith.toml",
            "src/",
            "src/a.py",
            "src/pkg/",
        ] == result.content["entries"]
        assert result.content["truncated"] is False

    def test_subdirectory(self, repo: Path) -> None:
        """A directory lists with paths relative to the root; a trailing slash is fine."""
        make_tree(repo, {"src/a.py": b"", "src/b/c.py": b""})

        result = call(Toolbox(repo), "view", path="/workspace/src/")

        assert ["src/a.py", "src/b/", "src/b/c.py"] == result.content["entries"]

    def test_truncated(self, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A long listing stops at MAX_LISTED and says so."""
        monkeypatch.setattr(toolbox_module, "MAX_LISTED", 1)

        result = call(Toolbox(repo), "view", path="/workspace")

        assert (["app.py"], True) == (result.content["entries"], result.content["truncated"])

    def test_symlinked_directory_not_entered(self, repo: Path, tmp_path: Path) -> None:
        """A symlinked directory is listed, never walked into."""
        make_tree(tmp_path / "elsewhere", {"secret.py": b""})
        os.symlink(tmp_path / "elsewhere", repo / "linked")

        entries = call(Toolbox(repo), "view", path=".").content["entries"]

        assert isinstance(entries, list)
        assert "linked" in entries
        assert not any("secret" in e for e in entries)

    def test_file_range(self, box: Toolbox) -> None:
        """A file with view_range shows those lines, numbered."""
        result = call(box, "view", path="app.py", view_range=[2, 2])

        assert ['2 |     return "Hello, " + name'] == numbered(result)

    def test_view_range_on_directory(self, box: Toolbox) -> None:
        """view_range is for files."""
        assert ["INVALID_ARGUMENTS"] == codes(call(box, "view", path=".", view_range=[1, 2]))

    def test_view_range_from_zero(self, box: Toolbox) -> None:
        """Lines count from 1."""
        assert ["INVALID_ARGUMENTS"] == codes(call(box, "view", path="app.py", view_range=[0, 2]))

    def test_outside(self, box: Toolbox) -> None:
        """A directory outside the workspace is refused."""
        assert ["PATH_OUTSIDE_WORKSPACE"] == codes(call(box, "view", path="../"))


class TestApply:
    def test_sloppy_patch(self, repo: Path, box: Toolbox) -> None:
        """Prose, fence and wrong line numbers: applied by content, recorded."""
        result = call(box, "apply", patch=SLOPPY_PATCH)

        assert not result.is_error
        assert 'return f"Hello, {name}!"' in (repo / "app.py").read_text()
        assert str(result.content["attempt_id"]).startswith("a-")
        assert "Diff:" in result.text

    def test_check(self, repo: Path, box: Toolbox) -> None:
        """check=true shows the diff and writes nothing."""
        before = snapshot_tree(repo)

        result = call(box, "apply", patch=SLOPPY_PATCH, check=True)

        assert not result.is_error
        assert "Hello, {name}!" in str(result.content["diff"])
        assert before == snapshot_tree(repo)

    def test_refusal_and_repair(self, repo: Path, box: Toolbox) -> None:
        """A stale edit is refused with the real lines; the repair from them applies."""
        before = snapshot_tree(repo)

        refused = call(box, "apply", patch=STALE_PATCH)

        assert refused.is_error
        assert ["PATCH_CONTEXT_MISMATCH"] == codes(refused)
        assert before == snapshot_tree(repo)
        assert "Refused" in refused.text
        errors = refused.content["errors"]
        assert isinstance(errors, list)
        real = excerpt_line(errors[0]["excerpt"], "return")
        repaired = call(box, "str_replace", path="app.py", old_str=real, new_str="    return 1")
        assert not repaired.is_error

    def test_partial(self, repo: Path, box: Toolbox) -> None:
        """partial=true writes what located and reports the rest as an error."""
        both = SLOPPY_PATCH + "\n" + STALE_PATCH

        result = call(box, "apply", patch=both, partial=True)

        assert result.is_error
        assert "partial" == result.content["status"]
        assert 'return f"Hello, {name}!"' in (repo / "app.py").read_text()

    def test_long_diff_is_cut_in_the_text(self, repo: Path, box: Toolbox) -> None:
        """The text shows the start of a long diff; the JSON has all of it."""
        text = "".join(f"line {n}\n" for n in range(2000))

        result = call(box, "create", path="big.txt", file_text=text)

        assert not result.is_error
        assert "characters in all" in result.text
        assert len(str(result.content["diff"])) > MAX_DIFF_CHARS

    def test_policy_file_protected(self, box: Toolbox) -> None:
        """No tool call can loosen the policy fixed at start: patchsmith.toml is protected."""
        result = call(box, "write_file", path="patchsmith.toml", content="", expected_sha256=None)

        assert result.is_error


class TestEditorCommands:
    def test_str_replace_unique(self, repo: Path, box: Toolbox) -> None:
        """old_str found once is replaced; new_str defaults to empty (a deletion)."""
        result = call(box, "str_replace", path="app.py", old_str='"Bye, " + name', new_str="name")

        assert not result.is_error
        assert "    return name\n" in (repo / "app.py").read_text()

    def test_str_replace_missing(self, repo: Path, box: Toolbox) -> None:
        """old_str not in the file: refused with an excerpt, nothing written."""
        before = snapshot_tree(repo)

        result = call(box, "str_replace", path="app.py", old_str="nowhere")

        assert ["PATCH_CONTEXT_MISMATCH"] == codes(result)
        assert before == snapshot_tree(repo)

    def test_str_replace_ambiguous(self, repo: Path, box: Toolbox) -> None:
        """old_str found twice is refused with the candidates."""
        result = call(box, "str_replace", path="app.py", old_str="    return ")

        assert ["AMBIGUOUS_MATCH"] == codes(result)

    @pytest.mark.parametrize("key", ["new_str", "insert_text"])
    def test_insert(self, repo: Path, box: Toolbox, key: str) -> None:
        """insert puts the text after insert_line (0 = top), under either name."""
        result = box.call("insert", {"path": "app.py", "insert_line": 0, key: "import os\n"})

        assert not result.is_error
        assert (repo / "app.py").read_text().startswith("import os\ndef greet")

    def test_insert_without_text(self, box: Toolbox) -> None:
        """insert needs the text."""
        assert ["INVALID_ARGUMENTS"] == codes(call(box, "insert", path="app.py", insert_line=1))

    def test_create(self, repo: Path, box: Toolbox) -> None:
        """create writes a new file; an existing one is refused."""
        created = call(box, "create", path="/workspace/pkg/new.py", file_text="X = 1\n")
        again = call(box, "create", path="pkg/new.py", file_text="X = 2\n")

        assert not created.is_error
        assert "X = 1\n" == (repo / "pkg" / "new.py").read_text()
        assert again.is_error

    def test_editor_dispatch(self, repo: Path, box: Toolbox) -> None:
        """str_replace_editor runs each command as the tool of the same name."""
        viewed = call(box, "str_replace_editor", command="view", path="app.py", view_range=[1, 1])
        replaced = call(
            box,
            "str_replace_editor",
            command="str_replace",
            path="/workspace/app.py",
            old_str='"Bye, "',
            new_str='"Ciao, "',
            file_text=None,
            insert_line=None,
        )
        undone = call(box, "str_replace_editor", command="undo_edit", path="app.py")

        assert ["1 | def greet(name):"] == numbered(viewed)
        assert not replaced.is_error
        assert not undone.is_error
        assert APP == (repo / "app.py").read_bytes()

    def test_editor_extra_argument(self, box: Toolbox) -> None:
        """A command's foreign arguments are refused, not ignored."""
        result = call(box, "str_replace_editor", command="create", path="a.py", old_str="x")

        assert ["INVALID_ARGUMENTS"] == codes(result)


class TestWriteFile:
    def test_hash_checked(self, repo: Path, box: Toolbox) -> None:
        """write_file with the sha256 read_file gave replaces the file."""
        read = call(box, "read_file", path="app.py")
        result = call(
            box,
            "write_file",
            path="app.py",
            content="def greet(name):\n    return name\n",
            expected_sha256=read.content["sha256"],
            reason="simplify",
        )

        assert not result.is_error
        assert "def greet(name):\n    return name\n" == (repo / "app.py").read_text()

    def test_stale(self, repo: Path, box: Toolbox) -> None:
        """A wrong expected_sha256 is STALE_FILE, nothing written."""
        result = call(box, "write_file", path="app.py", content="x\n", expected_sha256="0" * 64)

        assert ["STALE_FILE"] == codes(result)
        assert APP == (repo / "app.py").read_bytes()

    def test_create(self, repo: Path, box: Toolbox) -> None:
        """A new file needs allow_create."""
        refused = call(box, "write_file", path="n.txt", content="n\n", expected_sha256=None)
        created = call(
            box, "write_file", path="n.txt", content="n\n", expected_sha256=None, allow_create=True
        )

        assert ["FILE_NOT_FOUND"] == codes(refused)
        assert not created.is_error


class TestUndo:
    def test_nothing_to_undo(self, box: Toolbox) -> None:
        """A file this server never edited has nothing to undo."""
        assert ["RECORD_NOT_FOUND"] == codes(call(box, "undo_edit", path="app.py"))

    def test_steps_back(self, repo: Path, box: Toolbox) -> None:
        """Each undo takes back one more edit, latest first, each one recorded."""
        call(box, "apply", patch=SLOPPY_PATCH)
        after_first = (repo / "app.py").read_bytes()
        call(box, "insert", path="app.py", insert_line=0, new_str="# hi\n")

        first = call(box, "undo_edit", path="app.py")
        assert after_first == (repo / "app.py").read_bytes()
        second = call(box, "undo_edit", path="/workspace/app.py")
        assert APP == (repo / "app.py").read_bytes()

        assert first.content["attempt_id"] != second.content["attempt_id"]
        assert first.text.startswith("Undone: app.py is again as it was before attempt a-")
        assert ["RECORD_NOT_FOUND"] == codes(call(box, "undo_edit", path="app.py"))
        kinds = [a["kind"] for a in call(box, "log").content["attempts"]]  # type: ignore[union-attr]
        assert ["write", "write", "apply", "apply"] == kinds

    def test_changed_since(self, repo: Path, box: Toolbox) -> None:
        """A file changed after the edit is not restored: STALE_FILE, nothing written."""
        call(box, "str_replace", path="app.py", old_str='"Bye, "', new_str='"Ciao, "')
        (repo / "app.py").write_text("someone else's work\n")

        result = call(box, "undo_edit", path="app.py")

        assert ["STALE_FILE"] == codes(result)
        assert "someone else's work\n" == (repo / "app.py").read_text()
        assert "last edit left it" in result.text

    def test_undo_create_deletes(self, repo: Path, box: Toolbox) -> None:
        """Undoing a create removes the file again."""
        call(box, "create", path="new.py", file_text="X = 1\n")

        result = call(box, "undo_edit", path="new.py")

        assert not result.is_error
        assert not (repo / "new.py").exists()

    def test_undo_apply_named_under_workspace(self, repo: Path, box: Toolbox) -> None:
        """A patch naming /workspace/app.py is undone like one naming app.py."""
        before = (repo / "app.py").read_bytes()
        patch = SLOPPY_PATCH.replace("a/app.py", "a//workspace/app.py").replace(
            "b/app.py", "/workspace/app.py"
        )
        assert not call(box, "apply", patch=patch).is_error
        assert before != (repo / "app.py").read_bytes()

        result = call(box, "undo_edit", path="app.py")

        assert not result.is_error
        assert before == (repo / "app.py").read_bytes()

    def test_undo_deleted_file(self, repo: Path, box: Toolbox) -> None:
        """A created file deleted since cannot be undone (it is not as the edit left it)."""
        call(box, "create", path="new.py", file_text="X = 1\n")
        (repo / "new.py").unlink()

        assert ["FILE_NOT_FOUND"] == codes(call(box, "undo_edit", path="new.py"))

    def test_undo_write_file(self, repo: Path, box: Toolbox) -> None:
        """write_file is undone to the exact bytes, CRLF included."""
        (repo / "crlf.txt").write_bytes(b"a\r\nb\r\n")
        read = call(box, "read_file", path="crlf.txt")
        call(
            box,
            "write_file",
            path="crlf.txt",
            content="c\r\n",
            expected_sha256=read.content["sha256"],
        )

        result = call(box, "undo_edit", path="crlf.txt")

        assert not result.is_error
        assert b"a\r\nb\r\n" == (repo / "crlf.txt").read_bytes()

    def test_undo_unrecorded(self, repo: Path) -> None:
        """With recording off, undo works and leaves no state directory."""
        box = Toolbox(repo, record=False)
        call(box, "str_replace", path="app.py", old_str='"Bye, "', new_str='"Ciao, "')

        result = call(box, "undo_edit", path="app.py")

        assert not result.is_error
        assert APP == (repo / "app.py").read_bytes()
        assert not (repo / ".patchsmith").exists()
        assert "before its last edit" in result.text

    def test_history_forgotten_when_the_record_disagrees(
        self, repo: Path, box: Toolbox, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """If the audit record says the file was not as snapshotted, no undo is offered."""
        monkeypatch.setattr(Toolbox, "_recorded_before", lambda self, _id: {"app.py": "0" * 64})
        call(box, "str_replace", path="app.py", old_str='"Bye, "', new_str='"Ciao, "')

        assert ["RECORD_NOT_FOUND"] == codes(call(box, "undo_edit", path="app.py"))

    def test_moved_file_forgotten(self, repo: Path, box: Toolbox) -> None:
        """A move leaves nothing to undo for either path."""
        move = (
            "*** Begin Patch\n*** Update File: app.py\n*** Move to: moved.py\n"
            '@@ def farewell(name):\n-    return "Bye, " + name\n+    return name\n'
            "*** End Patch\n"
        )
        assert not call(box, "apply", patch=move).is_error

        assert codes(call(box, "undo_edit", path="moved.py")) == ["RECORD_NOT_FOUND"]

    def test_inexact_restore_refused(self, repo: Path, box: Toolbox) -> None:
        """A restore that would not give back the exact bytes is refused."""
        from patchsmith.mcp.history import Snapshot, restore
        from patchsmith.runtime.workspace import Workspace

        snapshot = Snapshot("app.py", "other\n", sha(b"x"), sha(APP))

        report = restore(Workspace(repo), snapshot, policy=box.policy, record=False)

        assert ["NOT_SUPPORTED_YET"] == [e.code.value for e in report.errors]
        assert APP == (repo / "app.py").read_bytes()

    def test_history_is_bounded(self) -> None:
        """Old snapshots are dropped past MAX_UNDO_PER_FILE."""
        from patchsmith.mcp.history import MAX_UNDO_PER_FILE, EditHistory, Snapshot

        history = EditHistory()
        for n in range(MAX_UNDO_PER_FILE + 5):
            history.push("a", Snapshot("a", str(n), None, str(n)))

        assert MAX_UNDO_PER_FILE == len(history.stacks["a"])
        history.forget("a")
        history.pop("a")
        assert history.last("a") is None


class TestPropose:
    def test_applies(self, repo: Path, box: Toolbox) -> None:
        """A proposal applies under the server's policy."""
        proposal = {
            "proposal_id": "p-1",
            "run_id": "r-1",
            "attempt_no": 1,
            "strategy": "UNIFIED_DIFF",
            "objective": "greet with an f-string",
            "operations": [{"type": "patch", "text": SLOPPY_PATCH}],
        }

        result = call(box, "propose", proposal=proposal)

        assert not result.is_error, result.text
        assert 'return f"Hello, {name}!"' in (repo / "app.py").read_text()

    def test_as_text_and_invalid(self, box: Toolbox) -> None:
        """Proposal text is read too; an invalid one is INVALID_PROPOSAL."""
        result = call(box, "propose", proposal=json.dumps({"proposal_id": "p"}), check=True)

        assert ["INVALID_PROPOSAL"] == codes(result)


class TestRunRecipe:
    WARN = b"import logging\n\nlogging.warn('x')\n"

    def test_dry_run_then_apply(self, repo: Path, box: Toolbox) -> None:
        """A recipe id runs as a dry run first, then applied."""
        (repo / "log.py").write_bytes(self.WARN)

        dry = call(box, "run_recipe", recipe="logging-warn-to-warning")
        assert not dry.is_error, dry.text
        assert self.WARN == (repo / "log.py").read_bytes()
        applied = call(box, "run_recipe", recipe="logging-warn-to-warning", apply=True)

        assert not applied.is_error, applied.text
        assert "logging.warning('x')" in (repo / "log.py").read_text()

    def test_inline_yaml(self, repo: Path, box: Toolbox) -> None:
        """A recipe sent as text runs without a file."""
        (repo / "log.py").write_bytes(self.WARN)
        text = (
            "recipe_id: inline\nlanguage: python\nsummary: s\n"
            "operations:\n  - type: rename_symbol\n    from: logging.warn\n    to: warning\n"
        )

        result = call(box, "run_recipe", recipe_yaml=text)

        assert not result.is_error, result.text
        assert "warning" in str(result.content["files"])

    @pytest.mark.parametrize(
        ("arguments", "code"),
        [
            ({}, "INVALID_ARGUMENTS"),
            ({"recipe": "a", "recipe_yaml": "b"}, "INVALID_ARGUMENTS"),
            ({"recipe": "../evil.yaml"}, "INVALID_ARGUMENTS"),
            ({"recipe_yaml": "- not a mapping"}, "INVALID_RECIPE"),
            ({"recipe": "no-such-recipe"}, "RECIPE_NOT_FOUND"),
        ],
    )
    def test_refused(self, box: Toolbox, arguments: dict[str, Any], code: str) -> None:
        """Exactly one of id and text; never a path; unknown ids and bad YAML say why."""
        assert [code] == codes(box.call("run_recipe", arguments))


class TestVerify:
    def test_pass_and_fail(self, repo: Path, box: Toolbox) -> None:
        """verify fails before the fix and passes after it."""
        before = call(box, "verify", base=None)
        call(box, "apply", patch=SLOPPY_PATCH)
        after = call(box, "verify", profiles=["greeting"], base=None)

        assert before.is_error
        assert "failed" == before.content["status"]
        assert not after.is_error
        assert "greeting" in after.text

    def test_unknown_profile(self, box: Toolbox) -> None:
        """An unknown profile is UNKNOWN_PROFILE."""
        assert ["UNKNOWN_PROFILE"] == codes(call(box, "verify", profiles=["nope"], base=None))

    def test_option_as_base(self, box: Toolbox) -> None:
        """A base that looks like an option is refused before git sees it."""
        assert ["INVALID_ARGUMENTS"] == codes(call(box, "verify", base="--output=/tmp/x"))

    def test_not_offered_without_profiles(self, tmp_path: Path) -> None:
        """A workspace without profiles has no verify tool."""
        box = Toolbox(make_tree(tmp_path / "bare", {"a.txt": b"a\n"}))

        assert "verify" not in {spec.name for spec in box.tools()}
        assert ["INVALID_ARGUMENTS"] == codes(call(box, "verify"))

    def test_bad_profile_config(self, tmp_path: Path) -> None:
        """A broken profile table is offered, and each call says what is wrong."""
        root = make_tree(tmp_path / "r", {"patchsmith.toml": b"[verify.x]\nargv = 3\n"})

        assert call(Toolbox(root), "verify").is_error


class TestStore:
    def test_log_empty(self, box: Toolbox) -> None:
        """Nothing recorded yet: an empty log."""
        result = call(box, "log")

        assert ([], "no attempts recorded") == (result.content["attempts"], result.text)

    def test_show(self, box: Toolbox) -> None:
        """show finds an attempt by id prefix, with its diff."""
        applied = call(box, "apply", patch=SLOPPY_PATCH)
        attempt_id = str(applied.content["attempt_id"])

        result = call(box, "show", id=attempt_id[:8])

        assert not result.is_error
        attempt = result.content["attempt"]
        assert isinstance(attempt, dict)
        assert attempt_id == attempt["id"]
        assert "Hello, {name}!" in result.text

    def test_show_not_found(self, box: Toolbox) -> None:
        """No store, or no such id: RECORD_NOT_FOUND."""
        assert ["RECORD_NOT_FOUND"] == codes(call(box, "show", id="a-x"))
        call(box, "apply", patch=SLOPPY_PATCH)
        assert ["RECORD_NOT_FOUND"] == codes(call(box, "show", id="a-nope"))

    def test_show_ambiguous(self, box: Toolbox) -> None:
        """A prefix matching several attempts lists them."""
        call(box, "apply", patch=SLOPPY_PATCH)
        call(box, "apply", patch=STALE_PATCH)

        result = call(box, "show", id="a-")

        assert ["RECORD_NOT_FOUND"] == codes(result)
        assert 2 == len(result.content["matches"])  # type: ignore[arg-type]

    def test_one_connection(self, repo: Path, box: Toolbox) -> None:
        """Inside keep_store_open, every call shares one store connection."""
        from patchsmith.store import Store

        with box.keep_store_open():
            call(box, "apply", patch=SLOPPY_PATCH)
            first = Store.open(box.state_dir())
            call(box, "log")
            second = Store.open(box.state_dir())

            connection = first._conn
            assert connection is not None
            assert connection is second._conn
        with pytest.raises(sqlite3.ProgrammingError):  # closed when the block ends
            connection.execute("select 1")

    def test_unreadable_store(self, repo: Path, box: Toolbox) -> None:
        """A store that cannot be opened is an IO_ERROR result, not an exception."""
        (repo / ".patchsmith").mkdir()
        (repo / ".patchsmith" / "patchsmith.db").write_bytes(b"not a database" * 100)

        result = call(box, "log")

        assert result.is_error
        assert ["IO_ERROR"] == codes(result)
