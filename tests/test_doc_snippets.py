"""The Python the README and docs show type-checks under `mypy --strict` and runs.

Every ```python block that uses patchsmith is written out as a module after a short
preamble that gives the names a reader supplies (`model_output`, an LLM client, ...)
their types; the whole set is checked in one mypy run, then each block runs in a small
world holding the folders it names. A renamed parameter, a field that moved or a call the
types do not allow fails here before a user meets it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.test_docs import DOCS, REPO, fenced_blocks

mypy_api = pytest.importorskip("mypy.api")

PREAMBLE = """\
# The names the docs leave to the reader, typed as a reader's would be.
from dataclasses import dataclass

import patchsmith

model_output: str = ""
source_text: str = ""
diff_text: str = ""


@dataclass
class ToolCall:
    arguments: dict[str, object]


call = ToolCall({})


def my_llm(*, system: str, user: str) -> str:
    return ""


@dataclass
class Grade:
    score: float
    reason: str
    veto: bool


class Grader:
    def grade(self, objective: str, diff: str) -> Grade:
        return Grade(1.0, "ok", False)


my_model = Grader()

"""

_USES_PATCHSMITH = re.compile(r"\bpatchsmith\b")


@dataclass(frozen=True)
class Snippet:
    """One python block of a doc: where it is and its text."""

    doc: Path
    line: int
    text: str

    @property
    def name(self) -> str:
        stem = re.sub(r"\W", "_", self.doc.stem.lower())
        return f"snippet_{stem}_{self.line}"


def doc_snippets() -> list[Snippet]:
    """Every ```python block of the README and docs/ that uses patchsmith."""
    docs = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    return [
        Snippet(doc, block.line, block.text)
        for doc in docs
        for block in fenced_blocks(doc.read_text(encoding="utf-8"))
        if block.info.strip() == "python" and _USES_PATCHSMITH.search(block.text)
    ]


def test_there_are_snippets_to_check() -> None:
    """The extraction finds the README's and the guides' examples (it cannot pass vacuously)."""
    found = {s.doc.name for s in doc_snippets()}

    assert {"README.md", "agents.md", "verify.md", "runs.md", "fleet.md"} <= found


def test_doc_snippets_type_check(tmp_path: Path) -> None:
    """`mypy --strict` accepts every snippet, each as a module of its own."""
    snippets = doc_snippets()
    files = []
    for snippet in snippets:
        path = tmp_path / f"{snippet.name}.py"
        path.write_text(PREAMBLE + snippet.text, encoding="utf-8")
        files.append(str(path))

    out, err, status = mypy_api.run(
        [
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--disable-error-code=no-untyped-def",
            *files,
        ]
    )

    where = {f"{s.name}.py": f"{s.doc.relative_to(REPO)} (block at {s.line})" for s in snippets}
    report = "\n".join(_attribute(line, where) for line in out.splitlines())
    assert status == 0, report + err


def test_a_broken_snippet_is_caught(tmp_path: Path) -> None:
    """The check can fail: a call the API does not allow is reported."""
    path = tmp_path / "snippet_broken.py"
    path.write_text(PREAMBLE + 'patchsmith.apply(model_output, root="x", colour=1)\n')

    out, _, status = mypy_api.run(["--strict", "--no-incremental", str(path)])

    assert status == 1
    assert "colour" in out


def _attribute(line: str, where: dict[str, str]) -> str:
    for file, doc in where.items():
        if file in line:
            return f"{doc}: {line}"
    return line


USER_CODE = """\
import patchsmith
from patchsmith import Budget, Turn
from patchsmith.verify import VerifyReport


def src(t: Turn) -> str:  # a source whose parameter is not named `turn`
    return ""


result = patchsmith.run_task({"objective": "x", "files": ["a.py"]}, src, Budget(), root=".")
report: VerifyReport = patchsmith.verify(".", ["pytest"])
"""


def test_user_code_type_checks(tmp_path: Path) -> None:
    """Calls users write that strict typing once refused: a callable `verify`, any source name."""
    path = tmp_path / "user_code.py"
    path.write_text(USER_CODE, encoding="utf-8")

    out, err, status = mypy_api.run(["--strict", "--no-incremental", str(path)])

    assert status == 0, out + err


# -- running them ----------------------------------------------------------------------------

HARNESS = """\
import runpy, sys
import patchsmith
try:
    runpy.run_path(sys.argv[1], run_name="__snippet__")
except patchsmith.PatchsmithError as exc:  # refused by the small world it runs in: fine
    print("refused:", type(exc).__name__, exc)
"""


def make_world(root: Path) -> Path:
    """The folders the snippets name (`path/to/repo`, `repo`, `web`), with a tested module."""
    repo = root / "path" / "to" / "repo"
    repo.mkdir(parents=True)
    (repo / "inventory.py").write_text("def restock(count, amount):\n    return count + amount\n")
    (repo / "test_inventory.py").write_text(
        "from inventory import restock\n\n\ndef test_restock():\n    assert restock(1, 2) == 3\n"
    )
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "inventory"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
    )
    (root / "repo").mkdir()
    (root / "web").mkdir()
    (root / "repos.txt").write_text("")
    return root


@pytest.mark.parametrize("snippet", doc_snippets(), ids=lambda s: f"{s.doc.name}:{s.line}")
def test_doc_snippet_runs(snippet: Snippet, tmp_path: Path) -> None:
    """Each snippet runs without a TypeError, AttributeError or NameError: only the
    refusals a small world earns (nothing recorded under `repo`, an empty reply) pass.

    The world is under pytest's temporary folder, which tests/conftest.py trusts, so the
    verification snippet really runs pytest in the sandbox."""
    world = make_world(tmp_path)
    path = world / f"{snippet.name}.py"
    path.write_text(PREAMBLE + snippet.text, encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-c", HARNESS, str(path)],
        cwd=world,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert 0 == done.returncode, done.stderr[-2000:]
