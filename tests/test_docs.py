"""The reference docs stay true: every failure code documented, every format example applies."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith import EditFormat, FailureCode, PatchFailure, parse_edits
from patchsmith.cli import main

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
ERRORS_MD = DOCS / "errors.md"
FORMATS_MD = DOCS / "formats.md"
DECISIONS = DOCS / "decisions"

_HEADING = re.compile(r"^## ([A-Z][A-Z0-9_]*)\s*$", re.MULTILINE)
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_EXAMPLE = re.compile(r"^<!-- example: (.*?) -->\s*$")
_WORKSPACE = re.compile(r"^<!-- workspace: (\S+) -->\s*$")
_RESULT = re.compile(r"^<!-- result: (\S+) -->\s*$")
_LINK = re.compile(r"\]\(((?:\.\./)?docs/[^)#\s]+)(?:#[^)]*)?\)|`(docs/[\w./-]+\.md)`")


# -- reading the docs ----------------------------------------------------------------------------


def documented_codes(markdown: str) -> list[str]:
    """The `## CODE` headings of a markdown text, in order."""
    return _HEADING.findall(markdown)


@dataclass(frozen=True)
class Block:
    """A fenced block: its info string, its text, and the 1-based line of its opening fence."""

    info: str
    text: str
    line: int


def fenced_blocks(markdown: str) -> list[Block]:
    """Every top-level fenced block; a fence closes only on a bare fence of its own length."""
    lines = markdown.splitlines(keepends=True)
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i].rstrip("\n"))
        if opening is None:
            i += 1
            continue
        marks = opening.group(1)
        end = i + 1
        while end < len(lines) and lines[end].rstrip("\n") != marks:
            end += 1
        blocks.append(Block(opening.group(2).strip(), "".join(lines[i + 1 : end]), i + 1))
        i = end + 1
    return blocks


def _block_after(lines: list[str], index: int) -> Block:
    """The fenced block that starts on the first non-blank line after `lines[index]`."""
    start = index + 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    found = fenced_blocks("".join(lines[start:]))
    if not found or found[0].line != 1:
        raise AssertionError(f"line {index + 1}: a marker must be followed by a fenced block")
    block = found[0]
    return Block(block.info, block.text, start + 1)


def _sections(markdown: str) -> dict[str, str]:
    """The body of every `## CODE` section, keyed by its code."""
    parts = _HEADING.split(markdown)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@dataclass(frozen=True)
class Example:
    """A format example: the model text, the format it must parse as, and the expected code."""

    text: str
    format: EditFormat
    refused: FailureCode | None
    line: int
    results: tuple[tuple[str, str], ...] = ()
    """(path, text) pairs: what each file holds once the example is applied."""


def format_examples(markdown: str) -> list[Example]:
    """Every block marked `<!-- example: format=NAME [refused=CODE] -->`, with its results."""
    lines = markdown.splitlines(keepends=True)
    examples: list[Example] = []
    for index, line in enumerate(lines):
        result = _RESULT.match(line)
        if result is not None:
            if not examples:
                raise AssertionError(f"line {index + 1}: a result marker before any example")
            last = examples[-1]
            pair = (result.group(1), _block_after(lines, index).text)
            examples[-1] = replace(last, results=(*last.results, pair))
            continue
        marker = _EXAMPLE.match(line)
        if marker is None:
            continue
        fields = dict(part.split("=", 1) for part in marker.group(1).split())
        refused = fields.get("refused")
        block = _block_after(lines, index)
        examples.append(
            Example(
                text=block.text,
                format=EditFormat(fields["format"]),
                refused=None if refused is None else FailureCode(refused),
                line=block.line,
            )
        )
    return examples


def workspace_files(markdown: str) -> dict[str, str]:
    """The files declared by `<!-- workspace: PATH -->` markers, with their fenced content."""
    lines = markdown.splitlines(keepends=True)
    files = {}
    for index, line in enumerate(lines):
        marker = _WORKSPACE.match(line)
        if marker is not None:
            files[marker.group(1)] = _block_after(lines, index).text
    return files


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


FORMAT_EXAMPLES = format_examples(_read(FORMATS_MD)) if FORMATS_MD.exists() else []


# -- docs/errors.md ------------------------------------------------------------------------------


class TestErrorsDoc:
    def test_every_code_has_a_section(self) -> None:
        """Each FailureCode value has a `## CODE` heading in docs/errors.md."""
        documented = set(documented_codes(_read(ERRORS_MD)))

        assert [] == [code.value for code in FailureCode if code.value not in documented]

    def test_no_section_for_a_removed_code(self) -> None:
        """docs/errors.md documents no code that FailureCode no longer has."""
        known = {code.value for code in FailureCode}

        assert [] == [c for c in documented_codes(_read(ERRORS_MD)) if c not in known]

    def test_each_code_documented_once(self) -> None:
        """No code has two sections."""
        codes = documented_codes(_read(ERRORS_MD))

        assert sorted(set(codes)) == sorted(codes)

    def test_json_examples_have_the_failure_keys(self) -> None:
        """Every JSON block parses and has exactly the keys of `PatchFailure.to_json()`
        (`similarity` and `candidates` only where a failed edit sets them)."""
        keys = set(PatchFailure(FailureCode.NO_CHANGE, "m").to_json())
        optional = {"similarity", "candidates", "lookalikes"}
        blocks = [b for b in fenced_blocks(_read(ERRORS_MD)) if b.info == "json"]

        assert blocks
        for block in blocks:
            value = json.loads(block.text)
            assert isinstance(value, dict), f"line {block.line}"
            assert keys == set(value) - optional, f"line {block.line}"

    def test_each_section_shows_its_own_code(self) -> None:
        """Each section has exactly one JSON example, whose `code` is the section's code."""
        for code, body in _sections(_read(ERRORS_MD)).items():
            examples = [json.loads(b.text) for b in fenced_blocks(body) if b.info == "json"]

            assert [code] == [example["code"] for example in examples]

    @pytest.mark.parametrize("field", ["Means", "When", "Next"])
    def test_each_section_answers_the_questions(self, field: str) -> None:
        """Each section says what the code means, when it happens and what to do next."""
        sections = _sections(_read(ERRORS_MD))

        assert [] == [code for code, body in sections.items() if f"**{field}**" not in body]


# -- docs/formats.md -----------------------------------------------------------------------------


@pytest.fixture(name="workspace")
def _workspace(tmp_path: Path) -> Path:
    """A fresh copy of the workspace docs/formats.md declares."""
    root = tmp_path / "ws"
    for name, text in workspace_files(_read(FORMATS_MD)).items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


class TestFormatsDoc:
    def test_every_format_has_an_example(self) -> None:
        """Each concrete format has at least one example that applies."""
        shown = {e.format for e in FORMAT_EXAMPLES if e.refused is None}

        assert set(EditFormat) - {EditFormat.AUTO} == shown

    def test_workspace_is_declared(self) -> None:
        """The examples' workspace holds the files they edit."""
        assert {"app.js", "app.py", "notes.txt"} == set(workspace_files(_read(FORMATS_MD)))

    @pytest.mark.parametrize("example", FORMAT_EXAMPLES, ids=lambda e: f"line{e.line}")
    def test_example_parses_as_its_format(self, example: Example) -> None:
        """Auto-detection reads each example as the format it is shown under."""
        assert example.format == parse_edits(example.text).format

    @pytest.mark.parametrize("example", FORMAT_EXAMPLES, ids=lambda e: f"line{e.line}")
    def test_example_applies(
        self,
        example: Example,
        workspace: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """`patchsmith apply --check --json` applies each example (or refuses it as marked)."""
        patch = tmp_path / "reply.md"
        patch.write_text(example.text, encoding="utf-8")
        before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}

        code = main(["apply", str(patch), "-C", str(workspace), "--check", "--json", "--no-record"])

        report = json.loads(capsys.readouterr().out)
        errors = [e["code"] for e in report["errors"]]
        if example.refused is None:
            assert (0, "applied", []) == (code, report["status"], errors)
            assert report["diff"]
        else:
            assert (1, "refused") == (code, report["status"])
            assert example.refused.value in errors
        assert before == {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}

    @pytest.mark.parametrize(
        "example", [e for e in FORMAT_EXAMPLES if e.results], ids=lambda e: f"line{e.line}"
    )
    def test_example_result(
        self,
        example: Example,
        workspace: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Applying an example for real leaves each file as its result block shows."""
        patch = tmp_path / "reply.md"
        patch.write_text(example.text, encoding="utf-8")

        code = main(["apply", str(patch), "-C", str(workspace), "--json", "--no-record"])

        capsys.readouterr()
        assert 0 == code
        for path, text in example.results:
            assert text == (workspace / path).read_text(encoding="utf-8"), path

    def test_results_are_shown(self) -> None:
        """The rules a bare reading gets wrong (EOF append, move target) show their result."""
        assert 2 <= sum(len(e.results) for e in FORMAT_EXAMPLES)


# -- helpers, decisions and README ---------------------------------------------------------------


class TestExtraction:
    @given(st.lists(st.sampled_from(list(FailureCode)), unique=True))
    def test_headings_round_trip(self, codes: list[FailureCode]) -> None:
        """`documented_codes` finds exactly the `## CODE` headings written, in order."""
        text = "# Failure codes\n\n" + "".join(f"## {c.value}\n\nsome text\n\n" for c in codes)

        assert [c.value for c in codes] == documented_codes(text)

    def test_nested_fences_stay_inside_their_block(self) -> None:
        """A three-backtick fence inside a four-backtick block does not end it."""
        text = "<!-- example: format=whole_file -->\n````text\na.py\n```\nx\n```\n````\n"

        (example,) = format_examples(text)

        assert "a.py\n```\nx\n```\n" == example.text

    def test_result_attaches_to_previous_example(self) -> None:
        """A result marker belongs to the example above it."""
        text = (
            "<!-- example: format=udiff -->\n```\n@@\n-a\n+b\n```\n\n"
            "<!-- result: a.txt -->\n```\nb\n```\n"
        )

        (example,) = format_examples(text)

        assert (("a.txt", "b\n"),) == example.results

    def test_marker_without_block_is_an_error(self) -> None:
        """A marker not followed by a fenced block fails loudly instead of being skipped."""
        with pytest.raises(AssertionError, match="fenced block"):
            format_examples("<!-- example: format=udiff -->\nprose\n")


class TestDecisions:
    def test_numbers_are_unique_and_titled(self) -> None:
        """ADRs are `NNNN-title.md`, numbered 0001 upwards without gaps or repeats."""
        names = sorted(p.name for p in DECISIONS.glob("*.md"))
        numbers = [int(name[:4]) for name in names]

        assert all(re.fullmatch(r"\d{4}-[a-z0-9-]+\.md", name) for name in names)
        assert list(range(1, len(names) + 1)) == numbers

    def test_each_has_context_decision_consequences(self) -> None:
        """Every ADR has the three sections, in order."""
        for path in sorted(DECISIONS.glob("*.md")):
            headings = re.findall(r"^## (\w+)", _read(path), re.MULTILINE)
            core = [h for h in headings if h in ("Context", "Decision", "Consequences")]

            assert ["Context", "Decision", "Consequences"] == core, path.name


class TestReadmeLinks:
    def test_linked_docs_exist(self) -> None:
        """Every `docs/...` path README.md names exists."""
        readme = _read(REPO / "README.md")
        named = {a or b for a, b in _LINK.findall(readme)}

        assert named
        assert [] == sorted(p for p in named if not (REPO / p).exists())

    def test_docs_are_linked_from_readme(self) -> None:
        """README.md links the reference docs and every decision record."""
        readme = _read(REPO / "README.md")
        wanted = ["docs/errors.md", "docs/formats.md", "docs/policy.md"]
        wanted += [f"docs/decisions/{p.name}" for p in sorted(DECISIONS.glob("*.md"))]

        assert [] == [p for p in wanted if f"]({p})" not in readme]
