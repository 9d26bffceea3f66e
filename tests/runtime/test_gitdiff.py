"""Git-format diffs: exact headers, and `git apply` reproduces the committed tree byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.engine.linespans import LineSpan, SpanLog
from patchsmith.formats.script import Action
from patchsmith.runtime import gitdiff
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import EncodedText
from patchsmith.runtime.diffstat import change_opcodes, diff_stat, line_diff, lines_of
from patchsmith.runtime.gitdiff import render_git_diff, render_git_diff_bytes
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def _update(
    path: str, old: bytes, new: bytes, old_mode: int = 0o644, new_mode: int = 0o644
) -> FileChange:
    return FileChange(
        path=path,
        action=Action.UPDATE,
        old_path=path,
        old_bytes=old,
        new_bytes=new,
        old_mode=old_mode,
        new_mode=new_mode,
    )


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"]
    done = subprocess.run(
        [*command, *args], cwd=cwd, input=stdin, capture_output=True, env=env, check=False
    )
    assert 0 == done.returncode, done.stderr.decode(errors="replace")
    return done.stdout


class TestRenderGitDiff:
    def test_no_change_renders_nothing(self) -> None:
        """An update that changes neither bytes nor mode is absent from the diff."""

        assert "" == render_git_diff([_update("a", b"x\n", b"x\n")])

    def test_mode_only(self) -> None:
        """A mode change alone is `old mode`/`new mode` with no hunks or index."""
        expected = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"

        assert expected == render_git_diff([_update("run.sh", b"x\n", b"x\n", 0o644, 0o755)])

    def test_mode_and_content(self) -> None:
        """With both mode and content changed, the index line carries no mode."""
        text = render_git_diff([_update("r", b"a\n", b"b\n", 0o755, 0o644)])

        assert text.startswith(
            "diff --git a/r b/r\nold mode 100755\nnew mode 100644\nindex 7898192..6178079\n"
        )

    def test_no_newline_markers(self) -> None:
        """A last line without newline is followed by the `\\ No newline` marker on each side."""
        text = render_git_diff([_update("a", b"x\ny", b"x\nz")])

        assert (
            "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n"
            "\\ No newline at end of file\n"
        ) == text.split("+++ b/a\n")[1]

    def test_lone_cr_is_not_a_line_end(self) -> None:
        """A lone CR stays inside its line, as git sees it."""
        text = render_git_diff([_update("a", b"a\rb\n", b"a\rc\n")])

        assert "-a\rb\n+a\rc\n" in text

    def test_hunks_split_beyond_context(self) -> None:
        """Changes more than six lines apart become two hunks with three lines of context."""
        old = b"".join(b"%d\n" % n for n in range(1, 21))
        new = old.replace(b"2\n", b"two\n", 1).replace(b"18\n", b"eighteen\n")
        text = render_git_diff([_update("n", old, new)])

        assert ["@@ -1,5 +1,5 @@", "@@ -15,6 +15,6 @@"] == [
            line for line in text.splitlines() if line.startswith("@@")
        ]

    def test_binary(self) -> None:
        """A side with a NUL byte is reported as binary."""
        change = FileChange(
            path="img",
            action=Action.CREATE,
            old_path=None,
            old_bytes=None,
            new_bytes=b"\x00\x01",
            new_mode=0o644,
        )

        assert render_git_diff([change]).endswith("Binary files /dev/null and b/img differ\n")

    def test_empty_file_creation(self) -> None:
        """Creating an empty file is a header with the empty blob id and no hunks."""
        change = FileChange(
            path="e",
            action=Action.CREATE,
            old_path=None,
            old_bytes=None,
            new_bytes=b"",
            new_mode=0o755,
        )
        expected = "diff --git a/e b/e\nnew file mode 100755\nindex 0000000..e69de29\n"

        assert expected == render_git_diff([change])

    def test_quoted_names(self) -> None:
        """Names with non-ASCII bytes, quotes, backslashes or tabs are C-quoted like git's."""
        text = render_git_diff([_update('é"\\\t', b"a\n", b"b\n")])

        assert text.startswith('diff --git "a/\\303\\251\\"\\\\\\t" "b/\\303\\251\\"\\\\\\t"\n')

    def test_space_in_name_gets_tab(self) -> None:
        """`---`/`+++` lines of names with a space end with a tab, as git writes them."""
        text = render_git_diff([_update("my file.txt", b"a\n", b"b\n")])

        assert "--- a/my file.txt\t\n+++ b/my file.txt\t\n" in text

    def test_rename_with_edit(self) -> None:
        """A move with changed content shows similarity, rename lines and hunks."""
        old = b"".join(b"line %d\n" % n for n in range(10))
        change = FileChange(
            path="new.txt",
            action=Action.MOVE,
            old_path="old.txt",
            old_bytes=old,
            new_bytes=old.replace(b"line 9\n", b"last\n"),
            old_mode=0o644,
            new_mode=0o644,
        )
        text = render_git_diff([change])

        assert "similarity index 90%\nrename from old.txt\nrename to new.txt\n" in text
        assert "--- a/old.txt\n+++ b/new.txt\n" in text

    def test_latin1_bytes_survive(self) -> None:
        """Non-UTF-8 bytes round-trip through the text form with surrogateescape."""
        change = _update("l", b"caf\xe9\n", b"th\xe9\n")
        text = render_git_diff([change])

        assert render_git_diff_bytes([change]) == text.encode("utf-8", "surrogateescape")
        assert b"+th\xe9\n" in render_git_diff_bytes([change])


def _scenario_tree(root: Path) -> None:
    make_tree(
        root,
        {
            "f.txt": b"a\nb\nc\n",
            "crlf.txt": b"x\r\ny",
            "r.txt": b"same\n",
            "d.txt": b"del\n",
            "run.sh": (b"#!/bin/sh\necho 1\n", 0o755),
            "latin.txt": b"caf\xe9\n",
            "bom.txt": b"\xef\xbb\xbfone\r\ntwo\r\n",
            "long.txt": b"".join(b"%d\n" % n for n in range(40)),
            "empty.txt": b"",
        },
    )


def _stage_scenario(txn: Transaction) -> None:
    steps = [
        txn.update("f.txt", "a\nB\nc\n"),
        txn.update("crlf.txt", "x\r\nz\r\n"),
        txn.move("r.txt", "sub dir/s p.txt"),
        txn.delete("d.txt"),
        txn.create("n.txt", "new\n"),
        txn.create("e.txt", ""),
        txn.update("run.sh", "#!/bin/sh\necho 2\n"),
        txn.update("latin.txt", "th\xe9\nno newline"),
        txn.update("bom.txt", "one\r\n2\r\n"),
        txn.update("long.txt", "".join(f"{n}\n" for n in range(40) if n not in (5, 30)) + "end"),
        txn.delete("empty.txt"),
    ]
    assert [None] * len(steps) == steps


@needs_git
class TestGitApply:
    def _replay(self, tmp_path: Path, old_tree: Path, patch: bytes) -> Path:
        replica = tmp_path / "replica"
        shutil.copytree(old_tree, replica, symlinks=True)
        _git(replica, "init", "-q")
        _git(replica, "apply", "--check", "-", stdin=patch)
        _git(replica, "apply", "--whitespace=nowarn", "-", stdin=patch)
        return replica

    def test_scenario_replays_exactly(self, tmp_path: Path) -> None:
        """`git apply` of the byte-exact diff turns the old tree into the committed tree."""
        root = tmp_path / "ws"
        _scenario_tree(root)
        pristine = tmp_path / "pristine"
        shutil.copytree(root, pristine)
        txn = Transaction(Workspace(root))
        _stage_scenario(txn)
        patch = render_git_diff_bytes(txn.changes)
        assert txn.commit() is None
        replica = self._replay(tmp_path, pristine, patch)

        committed, replayed = snapshot_tree(root), snapshot_tree(replica, exclude=(".git",))
        assert committed.files() == replayed.files()
        assert committed.modes() == replayed.modes()

    def test_matches_git_diff(self, tmp_path: Path) -> None:
        """For simple edits the diff is byte-identical to `git diff --cached -M`."""
        root = tmp_path / "repo"
        make_tree(
            root,
            {"f.txt": b"a\nb\nc\n", "crlf.txt": b"x\r\ny", "r.txt": b"same\n", "d.txt": b"del\n"},
        )
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "base")
        txn = Transaction(Workspace(root))
        txn.update("f.txt", "a\nB\nc\n")
        txn.update("crlf.txt", "x\r\nz\r\n")
        txn.move("r.txt", "s p.txt")
        txn.delete("d.txt")
        txn.create("n.txt", "new\n")
        ours = render_git_diff_bytes(txn.changes)
        txn.commit()
        _git(root, "add", "-A")

        assert _git(root, "diff", "--cached", "-M", "--no-color", "--no-ext-diff") == ours

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        old=st.lists(st.sampled_from(["a", "b", "c", "a\r", "", " x", "é"]), max_size=12),
        new=st.lists(st.sampled_from(["a", "b", "c", "a\r", "", " x", "é"]), max_size=12),
        old_eol=st.booleans(),
        new_eol=st.booleans(),
    )
    def test_random_updates_replay(
        self, tmp_path: Path, old: list[str], new: list[str], old_eol: bool, new_eol: bool
    ) -> None:
        """Any update's diff replays to the same bytes under `git apply`."""
        old_text = "\n".join(old) + ("\n" if old_eol and old else "")
        new_text = "\n".join(new) + ("\n" if new_eol and new else "")
        case = tmp_path / f"case{abs(hash((old_text, new_text)))}"
        shutil.rmtree(case, ignore_errors=True)
        make_tree(case / "ws", {"f.txt": old_text.encode()})
        shutil.copytree(case / "ws", case / "pristine")
        txn = Transaction(Workspace(case / "ws"))
        assert txn.update("f.txt", new_text) is None
        patch = render_git_diff_bytes(txn.changes)
        if not patch:
            assert old_text == new_text
            return
        replica = self._replay(case, case / "pristine", patch)

        assert new_text.encode() == (replica / "f.txt").read_bytes()


class TestTextRendering:
    def test_non_utf8_file_is_shown_as_text(self, tmp_path: Path) -> None:
        """A Latin-1 file's diff text is valid Unicode showing its decoded lines."""
        root = tmp_path / "ws"
        root.mkdir()
        (root / "l1.txt").write_bytes(b"caf\xe9\nline2\n")
        txn = Transaction(Workspace(root))
        txn.update("l1.txt", "caf\xe9\nline 2\n")

        text = render_git_diff(txn.changes)

        assert " café\n-line2\n+line 2\n" in text
        text.encode("utf-8")  # no surrogate escapes left
        assert b"caf\xe9" in render_git_diff_bytes(txn.changes)


def _edited_lines(
    draw: st.DrawFn, lines: list[str], added: list[str], size: int
) -> tuple[list[str], list[str], SpanLog]:
    """Up to `size` lines, the same edited in a few random places, and the engine-style log."""
    old = draw(st.lists(st.sampled_from(lines), max_size=size))
    current = list(old)
    log = SpanLog()
    for _ in range(draw(st.integers(1, 5))):
        start = draw(st.integers(0, len(current)))
        stop = draw(st.integers(start, min(start + 3, len(current))))
        new = draw(st.lists(st.sampled_from(added), max_size=3))
        current[start:stop] = new
        log.edit(start, stop, len(new))
    return old, current, log


@st.composite
def _span_edits(draw: st.DrawFn) -> tuple[str, str, tuple[LineSpan, ...] | None]:
    """A file of up to 120 lines edited in a few random places, and the engine-style log."""
    old, current, log = _edited_lines(
        draw, ["a", "b", "", " x", "é", "a\r", "}"], ["new", "a", "", "ü"], 120
    )
    old_text = "\n".join(old) + ("\n" if old and draw(st.booleans()) else "")
    new_text = "\n".join(current) + ("\n" if current and draw(st.booleans()) else "")
    if draw(st.booleans()):
        # A missing or added final newline changes the last line: the log must say so.
        log.edit(max(len(current) - 1, 0), len(current), len(current[-1:]))
    return old_text, new_text, log.spans


@needs_git
class TestSpansReplay:
    """The diff rendered from the engine's spans (aligning only inside them) replays."""

    @settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(case=_span_edits(), wrong=st.booleans())
    def test_diff_from_spans_replays_with_git_apply(
        self, tmp_path: Path, case: tuple[str, str, tuple[LineSpan, ...]], wrong: bool
    ) -> None:
        old_text, new_text, spans = case
        if wrong:
            spans = (LineSpan(0, 0, 0, 0),)  # says nothing changed: the whole text is aligned
        change = replace(
            _update("f.txt", old_text.encode(), new_text.encode()),
            old_text=old_text,
            new_text=new_text,
            line_spans=spans,
        )
        patch = render_git_diff_bytes([change])
        if old_text == new_text:
            assert patch == b""
            return
        case_dir = tmp_path / f"case{abs(hash((old_text, new_text, spans)))}"
        shutil.rmtree(case_dir, ignore_errors=True)
        make_tree(case_dir, {"f.txt": old_text.encode()})
        _git(case_dir, "init", "-q")
        _git(case_dir, "apply", "--whitespace=nowarn", "-", stdin=patch)
        assert new_text.encode() == (case_dir / "f.txt").read_bytes()
        stat = diff_stat(change)
        grown = len(lines_of(new_text)) - len(lines_of(old_text))
        assert grown == len(stat.added) - stat.removed
        assert all(new_text.split("\n")[n - 1] == text for n, text in stat.added)

    def test_spans_of_a_big_file_give_the_full_diff(self, tmp_path: Path) -> None:
        old = "".join(f"row {n}\n" for n in range(20_000))
        lines = old.splitlines(keepends=True)
        log = SpanLog()
        for n in range(100, 20_000, 997):
            lines[n] = f"ROW {n}\n"
            log.edit(n, n + 1, 1)
        new = "".join(lines)
        base = _update("big.txt", old.encode(), new.encode())
        with_spans = replace(base, line_spans=log.spans)
        assert render_git_diff_bytes([with_spans]) == render_git_diff_bytes([base])
        assert diff_stat(with_spans) == diff_stat(base)
        assert len(range(100, 20_000, 997)) == diff_stat(with_spans).hunks


@st.composite
def _ascii_span_edits(draw: st.DrawFn) -> tuple[str, str, tuple[LineSpan, ...]]:
    """ASCII lines edited in a few places, each text ending in a newline or not."""
    old, current, log = _edited_lines(draw, ["a", "b", "", " x", "a\r", "}"], ["new", "a", ""], 60)
    old_text = "".join(f"{line}\n" for line in old)
    new_text = "".join(f"{line}\n" for line in current)
    if draw(st.booleans()):
        new_text = new_text.removesuffix("\n")
    spans = log.spans
    assert spans is not None
    return old_text, new_text, spans


class TestSharedLineDiff:
    """The git diff takes the guards' line diff when it is the same: same bytes out."""

    @settings(max_examples=200)
    @given(case=_ascii_span_edits(), kept_as_text=st.booleans())
    def test_same_diff_as_aligning_again(
        self, case: tuple[str, str, tuple[LineSpan, ...]], kept_as_text: bool
    ) -> None:
        old_text, new_text, spans = case
        old: bytes | EncodedText = old_text.encode()
        new: bytes | EncodedText = new_text.encode()
        if kept_as_text:
            old, new = EncodedText(old_text, "utf-8"), EncodedText(new_text, "utf-8")
        change = replace(
            _update("f.txt", b"", b""),
            old_bytes=old,
            new_bytes=new,
            old_text=old_text,
            new_text=new_text,
            line_spans=spans,
        )
        alone = replace(change)  # the same change, nothing derived from it yet
        with pytest.MonkeyPatch.context() as patch:  # aligned again, with the newlines
            patch.setattr(gitdiff, "_ascii_texts", lambda *_: False)
            patch.setattr(
                gitdiff,
                "_text_diff",
                lambda c, o, n: line_diff(o, n, c.line_spans, keepends=True),
            )
            expected = render_git_diff_bytes([alone])

        change_opcodes(change)  # the guards asked first
        assert render_git_diff_bytes([change]) == expected
