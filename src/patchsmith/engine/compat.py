"""The compat engine: llm-diff-patcher 0.2.1's `aider_port`, function by function.

Each function here answers exactly as the JavaScript function it names, quirks
included (they are listed in the docstrings); `None` stands for the reference's
`undefined`. `apply_hunks_compat` is the pipeline that produced the parity
goldens in `../shared/parity/`: normalise the model text, `findDiffs`, then
apply every hunk of every group in turn, keeping each JS-truthy result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from patchsmith.engine._js import (
    JS_WHITESPACE,
    char_at,
    js_trim,
    replace_first,
    split_lines,
    utf16_len,
)
from patchsmith.engine.dmp import diff_lines
from patchsmith.engine.jsdiff import format_lines, unidiff_diff_lines
from patchsmith.engine.model import (
    FileDiff,
    Hunk,
    HunkOutcome,
    HunkResult,
    SkipReason,
    Strategy,
)

__all__ = [
    "PREPROCS",
    "apply_hunk",
    "apply_hunks_compat",
    "apply_partial_hunk",
    "directly_apply_back_diff",
    "directly_apply_hunk",
    "find_diffs_compat",
    "flexi_just_search_and_replace",
    "flexible_search_and_replace",
    "hunk_to_before_after",
    "hunk_to_before_after_lines",
    "make_new_lines_explicit",
    "normalise_model_text",
    "normalize_line_endings",
    "process_fenced_block",
    "search_and_replace",
]

PREPROCS: tuple[tuple[bool, bool, bool], ...] = (
    (False, False, False),
    (True, False, False),
    (False, True, False),
    (True, True, False),
)
"""The reference's `allPreprocs` (strip blank lines, relative indent, reverse lines).

Only strip-blank-lines is implemented there: the relative-indent rows repeat the
first two, and are tried anyway.
"""

_SHORT_CONTEXT = 10
"""Below this many UTF-16 units of trimmed context, a repeated match is refused."""

_PLACEHOLDER_HEADER = "--- source\n+++ source\n"


def normalize_line_endings(text: str | None) -> str:
    """`normalizeLineEndings`: every `\\r\\n` becomes `\\n` in one pass; falsy becomes `""`."""
    return text.replace("\r\n", "\n") if text else ""


def _normalize_hunk(hunk: Sequence[str]) -> list[str]:
    return [normalize_line_endings(line) for line in hunk]


def hunk_to_before_after_lines(hunk: Sequence[str]) -> tuple[list[str], list[str]]:
    """`hunkToBeforeAfter(hunk, true)`: the lines the hunk expects, and the lines it leaves.

    A line shorter than 2 UTF-16 units counts as context whatever it holds; a
    longer line whose first unit is not ` `, `-` or `+` (a `\\` marker, a
    forgotten leading space) belongs to neither side.
    """
    before: list[str] = []
    after: list[str] = []
    for raw in hunk:
        line = normalize_line_endings(raw)
        if utf16_len(line) < 2:
            op, content = " ", line
        else:
            # When the first unit is half of a surrogate pair the line is ignored,
            # so dropping the whole first character below changes nothing.
            op, content = char_at(line, 0), line[1:]
        if op == " ":
            before.append(content)
            after.append(content)
        elif op == "-":
            before.append(content)
        elif op == "+":
            after.append(content)
    return before, after


def hunk_to_before_after(hunk: Sequence[str]) -> tuple[str, str]:
    """`hunkToBeforeAfter(hunk)`: the before and after texts, lines joined as they are."""
    before, after = hunk_to_before_after_lines(hunk)
    return "".join(before), "".join(after)


def search_and_replace(search: str, replace: str, original: str) -> str | None:
    """`searchAndReplace`: replace the first occurrence of `search`, literally; None if absent."""
    if search not in original:
        return None
    return replace_first(original, search, replace)


def _strip_blank_lines(text: str) -> str:
    # The reference trims the whole original text too, not only the hunk.
    return js_trim(text) + "\n"


@dataclass(frozen=True)
class _Replaced:
    text: str
    stripped: bool


def _flexible(search: str, replace: str, original: str) -> _Replaced | None:
    for strip, _relative_indent, _reverse in PREPROCS:
        texts = (search, replace, original)
        if strip:
            texts = (
                _strip_blank_lines(search),
                _strip_blank_lines(replace),
                _strip_blank_lines(original),
            )
        result = search_and_replace(*texts)
        if result:
            return _Replaced(result, strip)
    return None


def flexible_search_and_replace(search: str, replace: str, original: str) -> str | None:
    """`flexibleSearchAndReplace` (`searchAndReplace` over `PREPROCS`): the first truthy result."""
    found = _flexible(search, replace, original)
    return found.text if found else None


def flexi_just_search_and_replace(search: str, replace: str, original: str) -> str | None:
    """`flexiJustSearchAndReplace`: normalise line endings, then `flexible_search_and_replace`."""
    return flexible_search_and_replace(
        normalize_line_endings(search),
        normalize_line_endings(replace),
        normalize_line_endings(original),
    )


@dataclass(frozen=True)
class _Located:
    text: str
    strategy: Strategy
    line: int | None = None


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _direct(content: str, hunk: Sequence[str]) -> _Located | None:
    content = normalize_line_endings(content)
    hunk = _normalize_hunk(hunk)
    before, after = hunk_to_before_after(hunk)
    if not before:
        return None
    before_lines, _ = hunk_to_before_after_lines(hunk)
    trimmed_context = "\n".join(js_trim(line) for line in before_lines)
    if utf16_len(trimmed_context) < _SHORT_CONTEXT and content.count(before) > 1:
        return None
    search, replace, original = (
        normalize_line_endings(before),
        normalize_line_endings(after),
        content,
    )
    found = _flexible(search, replace, original)
    if found is None:
        return None
    if not found.stripped:
        return _Located(found.text, Strategy.DIRECT, _line_of(original, original.find(search)))
    trimmed = _strip_blank_lines(original)
    lead = len(original) - len(original.lstrip(JS_WHITESPACE))
    line = original.count("\n", 0, lead) + _line_of(
        trimmed, trimmed.find(_strip_blank_lines(search))
    )
    return _Located(found.text, Strategy.DIRECT_STRIPPED, line)


def directly_apply_hunk(content: str, hunk: Sequence[str]) -> str | None:
    """`directlyApplyHunk`: exact search and replace of the hunk's before text.

    None when the before text is empty, or when its trimmed lines total fewer
    than 10 UTF-16 units and it occurs more than once.
    """
    found = _direct(content, hunk)
    return found.text if found else None


def directly_apply_back_diff(text: str, diff: Sequence[str]) -> str | None:
    """`directlyApplyBackDiff`: rebuild a before text from context and `+` lines of `diff`.

    None when the diff walks past the end of `text`'s lines.
    """
    result: list[str] = []
    line_count = len(split_lines(text))
    index = 0
    for diff_line in diff:
        op, content = diff_line[:1], diff_line[1:]
        if op == " ":
            result.append(content)
            index += 1
        elif op == "-":
            index += 1
        elif op == "+":
            result.append(content)
        if index > line_count:
            return None
    return "".join(result)


def make_new_lines_explicit(content: str, hunk: Sequence[str]) -> list[str] | None:
    """`makeNewLinesExplicit`: the hunk rewritten against the file's real lines.

    Returns the (normalised) hunk unchanged when the rebuilt before text is
    under 10 UTF-16 units or lost more than a third of its lines. None where the
    reference throws (unidiff refusing jsdiff's repeated change types).
    """
    content = normalize_line_endings(content)
    hunk = _normalize_hunk(hunk)
    before, after = hunk_to_before_after(hunk)
    back_diff = [line for line in diff_lines(before, content) if not line.startswith("+")]
    rebuilt = directly_apply_back_diff(before, back_diff)
    if not rebuilt or utf16_len(js_trim(rebuilt)) < _SHORT_CONTEXT:
        return hunk
    before_lines = split_lines(before)
    new_before_lines = split_lines(rebuilt)
    after_lines = split_lines(after)
    if len(new_before_lines) < len(before_lines) * 0.66:
        return hunk
    changes = unidiff_diff_lines(
        [line + "\n" for line in new_before_lines], [line + "\n" for line in after_lines]
    )
    formatted = format_lines(changes, max(len(new_before_lines), len(after_lines)))
    if formatted is None:
        return None
    patch_lines = split_lines(formatted)
    start = next((i + 1 for i, line in enumerate(patch_lines) if line.startswith("@@")), 0)
    return [line + "\n" for line in patch_lines[start:] if line != ""]


def _partial(
    content: str, preceding: Sequence[str], changes: Sequence[str], following: Sequence[str]
) -> tuple[str, int] | None:
    """The result and how many context lines were dropped to get it."""
    use_all = len(preceding) + len(following)
    for drop in range(use_all + 1):
        use = use_all - drop
        for use_preceding in range(len(preceding), -1, -1):
            if use_preceding > use:
                continue
            use_following = use - use_preceding
            if use_following > len(following):
                continue
            head = list(preceding[-use_preceding:]) if use_preceding else []
            result = directly_apply_hunk(content, [*head, *changes, *following[:use_following]])
            if result:
                return result, drop
    return None


def apply_partial_hunk(
    content: str, preceding: Sequence[str], changes: Sequence[str], following: Sequence[str]
) -> str | None:
    """`applyPartialHunk`: retry with less and less context, preceding context kept longest."""
    found = _partial(content, preceding, changes, following)
    return found[0] if found else None


def _sections(hunk: Sequence[str]) -> list[list[str]]:
    """Cut a hunk into runs by operation, as the reference does.

    A line's operation is its first UTF-16 unit with `-`/`+` folded to one and
    `\\n` (or nothing) to context. A hunk that opens with a change gets no empty
    leading context, so its triplets are misaligned; that is the reference.
    """
    ops = []
    for line in hunk:
        op = char_at(normalize_line_endings(line), 0) or " "
        ops.append("x" if op in ("-", "+") else " " if op == "\n" else op)
    sections: list[list[str]] = []
    current_op = " "
    current: list[str] = []
    for op, line in zip(ops, hunk, strict=True):
        if op != current_op:
            if current:
                sections.append(current)
            current = []
            current_op = op
        current.append(line)
    if current:
        sections.append(current)
    if current_op != " ":
        sections.append([])
    return sections


@dataclass(frozen=True)
class _Attempt:
    located: _Located | None
    throws: bool = False


def _apply_hunk(content: str, hunk: Sequence[str]) -> _Attempt:
    content = normalize_line_endings(content)
    hunk = _normalize_hunk(hunk)
    direct = _direct(content, hunk)
    if direct is not None and direct.text:
        return _Attempt(direct)
    enhanced = make_new_lines_explicit(content, hunk)
    if enhanced is None:
        return _Attempt(None, throws=True)
    sections = _sections(enhanced)
    modified = content
    dropped = 0
    for i in range(2, len(sections), 2):
        found = _partial(modified, sections[i - 2], sections[i - 1], sections[i])
        if found is None:
            return _Attempt(None)
        modified, drop = found
        dropped = max(dropped, drop)
    explicit = enhanced != hunk and not dropped
    strategy = Strategy.NEW_LINES_EXPLICIT if explicit else Strategy.PARTIAL_CONTEXT
    return _Attempt(_Located(modified, strategy))


def apply_hunk(content: str, hunk: Sequence[str]) -> str | None:
    """`applyHunks(content, hunk)`: direct, else new-lines-explicit then partial context.

    None when a section cannot be placed (or where the reference throws). With
    fewer than three sections nothing is tried and the content comes back as is.
    """
    located = _apply_hunk(content, hunk).located
    return located.text if located else None


def process_fenced_block(
    lines: Sequence[str], start: int
) -> tuple[int, list[tuple[str | None, list[str]]]]:
    """`processFencedBlock`: the line after the closing fence, and the (file, hunk) pairs.

    A hunk is kept only if it holds a `-` or `+` line before the next `@@`;
    a `--- `/`+++ ` pair ends the hunk before it whatever it holds.
    """
    lines = _normalize_hunk(lines)
    end = start
    while end < len(lines) and not lines[end].startswith("```"):
        end += 1
    block = [*lines[start:end], "@@ @@\n"]
    fname: str | None = None
    if len(block) > 1 and block[0].startswith("--- ") and block[1].startswith("+++ "):
        fname = js_trim(block[1][4:])
        del block[:2]
    edits: list[tuple[str | None, list[str]]] = []
    keeper = False
    hunk: list[str] = []
    for line in block:
        hunk.append(line)
        if utf16_len(line) < 2:
            continue
        if line.startswith("+++ ") and len(hunk) >= 2 and hunk[-2].startswith("--- "):
            hunk = hunk[:-3] if len(hunk) >= 3 and hunk[-3] == "\n" else hunk[:-2]
            edits.append((fname, hunk))
            hunk = []
            keeper = False
            fname = js_trim(line[4:])
            continue
        op = line[0]
        if op in ("-", "+"):
            keeper = True
            continue
        if op != "@":
            continue
        if not keeper:
            hunk = []
            continue
        hunk.pop()
        edits.append((fname, hunk))
        hunk = []
        keeper = False
    return end + 1, edits


def _clean_file_path(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def find_diffs_compat(text: str) -> list[FileDiff]:
    """`findDiffs`: the hunks of every ```` ```diff ```` fence, grouped by `+++` file, in order.

    Hunks before any file header are dropped. `old_path` is the `---` name last
    paired with that `+++` name anywhere in the text, or `unknown` when that is
    empty. Where the reference throws (a file named `__proto__`, which its
    header table cannot hold), nothing is found.
    """
    content = normalize_line_endings(text)
    if not content.endswith("\n"):
        content += "\n"
    content_lines = split_lines(content)
    headers: dict[str, str] = {}
    for first, second in pairwise(content_lines):
        if first.startswith("--- ") and second.startswith("+++ "):
            headers[js_trim(second[4:])] = js_trim(first[4:])
    lines = [line + "\n" for line in content_lines]
    raw: list[tuple[str | None, list[str]]] = []
    index = 0
    while index < len(lines):
        if lines[index].startswith("```diff"):
            index, edits = process_fenced_block(lines, index + 1)
            raw.extend(edits)
        else:
            index += 1
    groups: dict[str, list[tuple[str, ...]]] = {}
    for path, hunk in raw:
        if path:
            groups.setdefault(path, []).append(tuple(hunk))
    if "__proto__" in groups:
        return []
    return [
        FileDiff(
            old_path=_clean_file_path(headers.get(path) or "unknown"),
            new_path=_clean_file_path(path),
            hunks=tuple(Hunk(lines=hunk) for hunk in hunks),
        )
        for path, hunks in groups.items()
    ]


def _starts_with_file_headers(text: str) -> bool:
    first, newline, rest = text.partition("\n")
    if not newline:
        return False
    return first.startswith("--- ") and rest.partition("\n")[0].startswith("+++ ")


def normalise_model_text(diff: str) -> str:
    """Step 1 of the parity pipeline: one ```` ```diff ```` fence with a `---`/`+++` pair first.

    Everything before the first `@@` is dropped when it is not at the start; a
    `--- source`/`+++ source` header is added unless the text starts with a pair.
    """
    at = diff.find("@@")
    if at > 0:
        diff = diff[at:]
    if not _starts_with_file_headers(diff):
        diff = _PLACEHOLDER_HEADER + diff
    return "```diff\n" + diff + "\n```"


def apply_hunks_compat(source: str, diff: str) -> HunkResult:
    """Apply model text to `source` exactly as llm-diff-patcher 0.2.1 (the parity pipeline).

    `text` is the reference's output. A hunk counts as applied only when it
    changed the text; one whose result is JS-falsy is skipped (`NO_MATCH`), one
    whose result equals its input is `NO_CHANGE`. With no hunk found, `total`
    is 0 and `text` is `source`.
    """
    text = source
    outcomes: list[HunkOutcome] = []
    for group in find_diffs_compat(normalise_model_text(diff)):
        for hunk in group.hunks:
            index = len(outcomes)
            attempt = _apply_hunk(text, hunk.lines)
            located = attempt.located
            if attempt.throws:
                outcome = HunkOutcome(
                    index,
                    False,
                    hunk.text,
                    reason=SkipReason.MALFORMED,
                    detail="the reference raises here: unidiff refuses repeated change types",
                )
            elif located is None or not located.text:
                outcome = HunkOutcome(index, False, hunk.text, reason=SkipReason.NO_MATCH)
            elif located.text == text:
                outcome = HunkOutcome(
                    index, False, hunk.text, strategy=located.strategy, reason=SkipReason.NO_CHANGE
                )
            else:
                text = located.text
                outcome = HunkOutcome(
                    index, True, hunk.text, strategy=located.strategy, line=located.line
                )
            outcomes.append(outcome)
    applied = sum(1 for outcome in outcomes if outcome.applied)
    return HunkResult(text=text, applied=applied, total=len(outcomes), outcomes=tuple(outcomes))
