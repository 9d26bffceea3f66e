"""No reply loses a line: lazy snippets, bare regions and the omission guards, end to end.

Through every entry point: `patchsmith.apply`, `write_file`, `propose` and the CLI.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.shared_data import corpus_cases, corpus_file
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import apply, propose, write_file
from patchsmith.cli import main
from patchsmith.engine.placeholder import placeholders_absent_from
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus

FUNCS = (
    "".join(
        f"def f{i}(x):\n    y = x + {i}\n    return y * {i}\n\n\n" for i in range(1, 21)
    ).rstrip("\n")
    + "\n"
)
"""A 99-line module of twenty small functions."""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"src/mod.py": FUNCS.encode(), "notes.md": b"hello\n"})


def read(root: Path) -> str:
    return (root / "src" / "mod.py").read_text(encoding="utf-8")


def lazy_reply(body: str, header: str = "src/mod.py") -> str:
    return f"Here is the change:\n\n{header}\n```python\n{body}```\n\nThe rest is unchanged.\n"


REGION = (
    "# ... existing code ...\ndef f5(x):\n    y = x + 50\n    return y * 5\n"
    "# ... existing code ...\n"
)
EXPECTED = FUNCS.replace("x + 5\n", "x + 50\n")


class TestLazySnippets:
    def test_region_merged_exactly(self, root: Path) -> None:
        """Placeholders keep every line they stand for; the chunk replaces its stretch."""
        report = apply(lazy_reply(REGION), root)

        assert ApplyStatus.APPLIED is report.status, report.errors
        assert EXPECTED == read(root)

    def test_forced_format(self, root: Path) -> None:
        """`format="lazy"` reads the same reply the same way."""
        assert apply(lazy_reply(REGION), root, format="lazy").ok
        assert EXPECTED == read(root)

    def test_whole_file_with_placeholder(self, root: Path) -> None:
        """The top and bottom written out, the middle elided."""
        top, bottom = FUNCS[: FUNCS.index("def f3")], FUNCS[FUNCS.index("def f19") :]
        body = top.replace("x + 1\n", "x + 100\n") + "# ... existing code ...\n" + bottom

        assert apply(lazy_reply(body), root).ok
        assert FUNCS.replace("x + 1\n", "x + 100\n") == read(root)

    def test_ambiguous_snippet_refused_with_excerpt(self, root: Path) -> None:
        """Lines next to a placeholder that occur at many places refuse, showing one of them."""
        before = snapshot_tree(root)
        body = "# ... existing code ...\n\n\ndef g():\n    pass\n# ... existing code ...\n"

        report = apply(lazy_reply(body), root)

        assert [FailureCode.AMBIGUOUS_MATCH] == [e.code for e in report.errors]
        assert report.errors[0].excerpt
        assert before == snapshot_tree(root)

    def test_snippet_for_another_file_refused(self, root: Path) -> None:
        """A region whose anchors are nowhere in the file: PATCH_CONTEXT_MISMATCH."""
        before = snapshot_tree(root)
        body = "# ... existing code ...\nclass Other:\n    pass\n# ... existing code ...\n"

        report = apply(lazy_reply(body), root)

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [e.code for e in report.errors]
        assert before == snapshot_tree(root)

    def test_never_half_applied(self, root: Path) -> None:
        """A valid region followed by one that cannot be placed: nothing is written."""
        before = snapshot_tree(root)
        body = REGION + "class Other:\n    pass\n# ... existing code ...\n"

        assert not apply(lazy_reply(body), root).ok
        assert before == snapshot_tree(root)

    def test_snippet_never_creates_a_file(self, root: Path) -> None:
        """A lazy snippet for a missing file is FILE_NOT_FOUND, not a new file of placeholders."""
        report = apply(lazy_reply(REGION, "src/missing.py"), root)

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in report.errors]
        assert not (root / "src" / "missing.py").exists()


class TestBareRegions:
    def test_bare_function_replaces_itself(self, root: Path) -> None:
        """A fenced function under the file's path is that function, not the whole file."""
        body = "def f5(x):\n    y = x + 50\n    return y * 5\n"

        assert apply(lazy_reply(body), root).ok
        assert EXPECTED == read(root)

    def test_quoted_region_is_no_change(self, root: Path) -> None:
        """Quoting part of the file, unchanged, changes nothing."""
        before = snapshot_tree(root)
        body = "def f5(x):\n    y = x + 5\n    return y * 5\n"

        report = apply(f"The logic is in `src/mod.py`:\n```python\n{body}```\n", root)

        assert [FailureCode.NO_CHANGE] == [e.code for e in report.errors]
        assert before == snapshot_tree(root)

    def test_unplaceable_bare_block_refused(self, root: Path) -> None:
        """A short block that anchors nowhere is refused, never written as the whole file."""
        before = snapshot_tree(root)

        report = apply(lazy_reply("def other():\n    return 0\n"), root)

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [e.code for e in report.errors]
        assert before == snapshot_tree(root)

    def test_explicit_whole_file_is_the_file(self, root: Path) -> None:
        """`--format whole_file` replaces the file; a big removal then needs full_rewrite."""
        body = "def f5(x):\n    return 0\n"
        before = snapshot_tree(root)

        refused = apply(lazy_reply(body), root, format="whole_file")
        assert [FailureCode.LARGE_REMOVAL] == [e.code for e in refused.errors]
        assert before == snapshot_tree(root)

        assert apply(lazy_reply(body), root, format="whole_file", full_rewrite=True).ok
        assert body == read(root)


class TestOmissionGuards:
    def test_truncated_reply_refused(self, root: Path) -> None:
        """A reply that stops inside its fence is TRUNCATED_OUTPUT."""
        before = snapshot_tree(root)
        text = "Here is the complete file:\n\nsrc/mod.py\n```python\n" + FUNCS[:300]

        report = apply(text, root)

        assert [FailureCode.TRUNCATED_OUTPUT] == [e.code for e in report.errors]
        assert "resend the rest" in (report.errors[0].hint or "")
        assert before == snapshot_tree(root)

    def test_whole_file_cut_under_half_refused(self, root: Path) -> None:
        """Cut at 45% of the file (a region's length, but from the file's first line): still a
        cut-off reply, never a region."""
        cut = "".join(FUNCS.splitlines(keepends=True)[:45]).replace("x + 1\n", "x + 9\n")
        before = snapshot_tree(root)

        report = apply(lazy_reply(cut), root)

        assert [FailureCode.TRUNCATED_OUTPUT] == [e.code for e in report.errors]
        assert before == snapshot_tree(root)

    def test_long_bare_region_inside_the_file_merged(self, root: Path) -> None:
        """45% of the file, starting below its first line, with one line changed: a region."""
        region = "".join(FUNCS.splitlines(keepends=True)[20:65]).replace("x + 5\n", "x + 50\n")

        assert apply(lazy_reply(region), root).ok
        assert EXPECTED == read(root)

    def test_whole_file_cut_short_refused_unless_full_rewrite(self, root: Path) -> None:
        """A closed fence holding the first 60% of the file is a cut-off reply."""
        cut = "".join(FUNCS.splitlines(keepends=True)[:60]).replace("x + 1\n", "x + 9\n")
        before = snapshot_tree(root)

        report = apply(lazy_reply(cut), root)

        assert [FailureCode.TRUNCATED_OUTPUT] == [e.code for e in report.errors]
        assert "truncated_write" == report.errors[0].rule
        assert before == snapshot_tree(root)
        assert apply(lazy_reply(cut), root, full_rewrite=True).ok

    def test_placeholder_never_written_by_a_diff(self, root: Path) -> None:
        """Even a diff may not add a placeholder line."""
        diff = (
            "--- a/src/mod.py\n+++ b/src/mod.py\n@@\n def f5(x):\n-    y = x + 5\n"
            "+    # ... existing code ...\n     return y * 5\n"
        )
        before = snapshot_tree(root)

        report = apply(diff, root)

        assert [FailureCode.PLACEHOLDER_WRITTEN] == [e.code for e in report.errors]
        assert before == snapshot_tree(root)

    def test_write_file_refuses_placeholder_and_large_removal(self, root: Path) -> None:
        """`write_file` is guarded the same way; `full_rewrite` lifts only the removal rule."""
        digest = sha(FUNCS.encode())
        lazy = "def f1(x):\n    return 1\n# ... rest of the file unchanged ...\n"

        placeholder = write_file(root, "src/mod.py", lazy, digest, "shorten")
        assert FailureCode.PLACEHOLDER_WRITTEN in [e.code for e in placeholder.errors]
        forced = write_file(root, "src/mod.py", lazy, digest, "shorten", full_rewrite=True)
        assert [FailureCode.PLACEHOLDER_WRITTEN] == [e.code for e in forced.errors]

        small = "def f1(x):\n    return 1\n"
        removal = write_file(root, "src/mod.py", small, digest, "shorten")
        assert [FailureCode.LARGE_REMOVAL] == [e.code for e in removal.errors]
        assert FUNCS == read(root)
        assert write_file(root, "src/mod.py", small, digest, "rewrite", full_rewrite=True).ok
        assert small == read(root)

    def test_propose_full_rewrite_field(self, root: Path) -> None:
        """A proposal's direct write that drops most of a file needs `full_rewrite`."""
        proposal: dict[str, object] = {
            "proposal_id": "p-1",
            "run_id": "r-1",
            "attempt_no": 1,
            "strategy": "DIRECT_FILE_EDIT",
            "objective": "rewrite the module",
            "operations": [
                {
                    "type": "direct_write",
                    "path": "src/mod.py",
                    "content": "VALUE = 1\n",
                    "expected_sha256": sha(FUNCS.encode()),
                }
            ],
        }
        refused = propose(proposal, root, allow_unverified=True)
        assert FailureCode.LARGE_REMOVAL in [e.code for e in refused.errors]
        assert FUNCS == read(root)

        assert propose({**proposal, "full_rewrite": True}, root, allow_unverified=True).ok
        assert "VALUE = 1\n" == read(root)

    def test_propose_lazy_patch(self, root: Path) -> None:
        """A proposal's patch operation in the lazy format is merged like `apply` does."""
        proposal = {
            "proposal_id": "p-2",
            "run_id": "r-1",
            "attempt_no": 1,
            "strategy": "HYBRID",
            "objective": "scale f5",
            "operations": [{"type": "patch", "format": "lazy_snippet", "text": lazy_reply(REGION)}],
        }

        assert propose(proposal, root, allow_unverified=True).ok
        assert EXPECTED == read(root)


class TestCli:
    def test_format_lazy_and_full_rewrite(self, root: Path, tmp_path: Path) -> None:
        """`--format lazy` merges; `--full-rewrite` lets a whole-file rewrite through."""
        reply = tmp_path / "reply.md"
        reply.write_text(lazy_reply(REGION), encoding="utf-8")
        assert 0 == main(["apply", "-C", str(root), "--format", "lazy", str(reply)])
        assert EXPECTED == read(root)

        reply.write_text(lazy_reply("VALUE = 1\n"), encoding="utf-8")
        assert 1 == main(["apply", "-C", str(root), "--format", "whole_file", str(reply)])
        assert EXPECTED == read(root)
        code = main(
            ["apply", "-C", str(root), "--format", "whole_file", "--full-rewrite", str(reply)]
        )
        assert 0 == code
        assert "VALUE = 1\n" == read(root)


class TestStructure:
    JS = (
        "function f() {\n  const a = 1;\n  log(a);\n  return a;\n}\n\n"
        "function g() {\n  const b = 1;\n  log(b);\n  return b;\n}\n"
    )
    SNIPPET = (
        "// ... existing code ...\nfunction g() {\n  const b = 2;\n  log(b);\n"
        "  // ... existing code ...\n}\n"
    )

    def _root(self, tmp_path: Path) -> Path:
        return make_tree(tmp_path / "ws", {"src/m.js": self.JS.encode()})

    def test_placeholder_inside_a_block_is_merged_by_the_block(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The closing `}` after an indented placeholder is g's (anchors alone: ambiguous)."""
        root = self._root(tmp_path)
        reply = tmp_path / "reply.md"
        reply.write_text(f"src/m.js\n```js\n{self.SNIPPET}```\n", encoding="utf-8")

        code = main(["apply", "-C", str(root), "--json", str(reply)])
        out = json.loads(capsys.readouterr().out)

        assert 0 == code, out
        assert "applied" == out["status"]
        assert ["TOLERANCE_USED"] == [w["code"] for w in out["warnings"]]
        assert "block" in out["warnings"][0]["message"]
        assert self.JS.replace("const b = 1;", "const b = 2;") == (root / "src/m.js").read_text(
            encoding="utf-8"
        )

    @pytest.mark.parametrize("syntax_guard", [True, False])
    def test_merge_that_breaks_the_parse_is_refused(
        self, tmp_path: Path, syntax_guard: bool
    ) -> None:
        """A lazy merge that leaves a clean file unparsable is SYNTAX_ERROR, with the merged
        text around the problem, even with the syntax guard switched off."""
        from patchsmith.policy import GuardSwitches, Policy

        root = self._root(tmp_path)
        before = snapshot_tree(root)
        body = "// ... existing code ...\nfunction g() {\n  const b = (2;\n  log(b);\n"
        body += "// ... existing code ...\n"
        policy = Policy(guards=GuardSwitches(syntax=syntax_guard))

        report = apply(f"src/m.js\n```js\n{body}```\n", root, policy=policy)

        assert [FailureCode.SYNTAX_ERROR] == [e.code for e in report.errors]
        assert "merged" in report.errors[0].message
        assert "const b = (2;" in (report.errors[0].excerpt or "")
        assert before == snapshot_tree(root)


# -- the property, end to end: the edit exactly or a refusal; never a placeholder on disk ----------

_LINES = st.sampled_from(
    ["x = 1", "y = 2", "", "return x", "pass", "if a:", "    b()", "z = 3", "# note"]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_LINES, min_size=1, max_size=40),
    st.lists(st.integers(0, 40), max_size=4),
    st.lists(st.sampled_from(["new_a()", "new_b = 9", ""]), min_size=1, max_size=3),
    st.integers(0, 40),
)
def test_no_placeholder_ever_reaches_disk(
    lines: list[str], elide: list[int], added: list[str], where: int
) -> None:
    """Any lazy rendering of an edit applies to exactly that edit or is refused, and no
    placeholder ever reaches the disk."""
    old = "".join(f"{line}\n" for line in lines)
    where = min(where, len(lines))
    new_lines = lines[:where] + added + lines[where:]
    new = "".join(f"{line}\n" for line in new_lines)
    rendered = list(new_lines)
    for index in sorted({i for i in elide if i < len(rendered)}, reverse=True):
        if where <= index < where + len(added):
            continue  # never elide the change itself
        rendered[index] = "# ... existing code ..."
    reply = "mod.py\n```python\n" + "".join(f"{r}\n" for r in rendered) + "```\n"
    root = Path(tempfile.mkdtemp(prefix="patchsmith-lazy-"))
    try:
        (root / "mod.py").write_text(old, encoding="utf-8", newline="")
        report = apply(reply, root, record=False)
        text = (root / "mod.py").read_text(encoding="utf-8")
        assert not placeholders_absent_from(text.splitlines(), lines, "mod.py")
        if not report.ok:
            assert old == text
        elif _in_contract(rendered, lines, where, len(added)):
            assert new == text
        else:  # outside the contract a merge may read the snippet otherwise, never lose it
            position = 0
            for shown in (r for r in rendered if r != "# ... existing code ..."):
                position = text.splitlines().index(shown, position) + 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _in_contract(rendered: list[str], old: list[str], where: int, added: int) -> bool:
    """The lazy format's contract: each placeholder's neighbours are unchanged lines that
    occur once in the file (so its anchors are at their true places)."""
    mark = "# ... existing code ..."
    for index, line in enumerate(rendered):
        if line != mark:
            continue
        for near in (index - 1, index + 1):
            if not 0 <= near < len(rendered) or rendered[near] == mark:
                continue
            if where <= near < where + added or old.count(rendered[near]) != 1:
                return False
    return True


# -- the corpora ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lazy-public.jsonl.gz", "omission-public.jsonl.gz"])
def test_lazy_corpora_never_wrong(name: str, tmp_path: Path) -> None:
    """Every case of the lazy and omission corpora (the full ones in `../shared`, else the
    vendored samples) is merged exactly or refused, never wrong; must-refuse cases are all
    refused, and at least 90% of the rest are merged."""
    wrong: list[str] = []
    correct = total = 0
    assert corpus_file(name) is not None
    for number, case in enumerate(corpus_cases(name)):
        root = tmp_path / str(number)
        make_tree(root, {p: t.encode() for p, t in case["files"].items()})
        before = snapshot_tree(root)
        report = apply(str(case["patch"]), root, record=False)
        expected = case["expected"]
        total += expected is not None
        if expected is None:
            if report.ok or snapshot_tree(root) != before:
                wrong.append(str(case["id"]))
            continue
        if not report.ok:
            continue
        files = {p: (root / p).read_text(encoding="utf-8") for p in expected}
        if files != expected:
            wrong.append(str(case["id"]))
        else:
            correct += 1
    assert [] == wrong
    assert total > 0
    assert correct >= 0.9 * total
