"""Codex CLI call shapes around an apply_patch envelope: unwrapped, then read as the envelope.

The shapes are the ones the Codex CLI sends: a shell call's argv
(`{"command": ["apply_patch", PATCH]}`), a heredoc script (alone, or as
`["bash", "-lc", SCRIPT]`), and a function call whose `input` is the envelope.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

from patchsmith import apply
from patchsmith.cli import main
from patchsmith.formats import EditFormat, detect_format, parse_edits
from patchsmith.formats.codex import unwrap

PATCH = "*** Begin Patch\n*** Update File: app.py\n@@\n a = 1\n-b = 2\n+b = 3\n*** End Patch\n"
SCRIPT = f"apply_patch <<'EOF'\n{PATCH}EOF\n"

SHAPES = {
    "argv": json.dumps({"command": ["apply_patch", PATCH]}),
    "argv_with_workdir": json.dumps(
        {"command": ["apply_patch", PATCH], "workdir": "/workspace", "timeout_ms": 10000}
    ),
    "bash_lc": json.dumps({"command": ["bash", "-lc", SCRIPT]}),
    "bare_argv": json.dumps(["apply_patch", PATCH]),
    "heredoc": SCRIPT,
    "heredoc_double_quoted": f'apply_patch <<"PATCH"\n{PATCH}PATCH',
    "heredoc_after_cd": f"cd /workspace && apply_patch <<'EOF'\n{PATCH}EOF\n",
    "function_call": json.dumps({"name": "apply_patch", "arguments": json.dumps({"input": PATCH})}),
    "shell_function_call": json.dumps(
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["apply_patch", PATCH]}),
        }
    ),
}


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"app.py": b"a = 1\nb = 2\n"})


class TestUnwrap:
    @pytest.mark.parametrize("shape", sorted(SHAPES))
    def test_every_shape_gives_the_envelope(self, shape: str) -> None:
        """Each shape's envelope comes back exactly as it was inside."""
        assert PATCH == unwrap(SHAPES[shape])

    @pytest.mark.parametrize(
        "text",
        [
            PATCH,  # already bare
            json.dumps({"command": "str_replace", "path": "a", "old_str": "x", "new_str": "y"}),
            json.dumps({"command": ["ls", "-la"]}),
            json.dumps({"command": ["bash", "-lc", "echo hi"]}),
            json.dumps({"command": ["apply_patch", "not an envelope"]}),
            "apply_patch <<'EOF'\nno envelope here\nEOF\n",
            f"apply_patch <<'EOF'\n{PATCH}EOF\nrm -rf /\n",  # more after the heredoc
            "{not json",
            "",
        ],
    )
    def test_other_text_is_left_alone(self, text: str) -> None:
        """Anything but a whole Codex call around an envelope is not unwrapped."""
        assert unwrap(text) is None

    def test_detection_and_parsing_see_the_envelope(self) -> None:
        """`detect_format` names apply_patch; `parse_edits` reads the one update."""
        text = SHAPES["argv"]

        assert EditFormat.APPLY_PATCH is detect_format(text)
        for fmt in ("auto", "apply_patch"):
            script = parse_edits(text, fmt)
            assert ["app.py"] == [e.path for e in script.edits]
            assert () == script.problems


class TestApply:
    @pytest.mark.parametrize("shape", sorted(SHAPES))
    def test_every_shape_applies(self, root: Path, shape: str) -> None:
        """`apply` writes the envelope's change whatever shape carried it."""
        report = apply(SHAPES[shape], root, record=False)

        assert report.ok, report.feedback()
        assert b"a = 1\nb = 3\n" == (root / "app.py").read_bytes()

    @pytest.mark.parametrize("shape", ["argv", "bash_lc", "heredoc"])
    def test_through_the_command_line(self, root: Path, tmp_path: Path, shape: str) -> None:
        """`patchsmith apply` reads the same shapes from a file."""
        reply = tmp_path / "call.json"
        reply.write_text(SHAPES[shape], encoding="utf-8")

        assert 0 == main(["apply", str(reply), "-C", str(root), "--no-record"])
        assert b"a = 1\nb = 3\n" == (root / "app.py").read_bytes()

    def test_a_broken_envelope_inside_is_refused_as_one(self, root: Path) -> None:
        """The envelope's own problems are reported (not 'command is not a string')."""
        broken = PATCH.replace("-b = 2", "-b = 99")
        report = apply(json.dumps({"command": ["apply_patch", broken]}), root, record=False)

        assert not report.ok
        assert "not a string" not in report.feedback()
        assert {"PATCH_CONTEXT_MISMATCH"} == {e.code.value for e in report.errors}
