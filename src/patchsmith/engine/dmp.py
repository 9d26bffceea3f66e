"""The reference's line-mode diff-match-patch diff (`diff_lines.diffLines`), as JS runs it.

The PyPI `diff-match-patch` port does the diffing; two places where it answers
differently from the JavaScript package (1.0.5) are overridden:

- `diff_linesToChars`: JS gives text1 at most 40000 distinct lines and stops at
  65535 in all (one UTF-16 unit per line); the Python port allows 666666/1114111.
  JS also keys its line table by a plain object, so a final line reading
  `__proto__` is never found again and gets a fresh code each time.
- `diff_cleanupSemanticLossless`: its boundary score classifies the last and first
  characters of the equalities. In line mode those characters are line codes
  (`chr(10)` is line 10), and the Python port classifies them with `str.isalnum`
  and `str.isspace` where JS uses `/[^a-zA-Z0-9]/` and `/\\s/`, so results differ
  once a text has more than a handful of distinct lines. The score is private to
  the method, hence the whole method is rewritten here.
"""

from __future__ import annotations

import re

from diff_match_patch import diff_match_patch

from patchsmith.engine._js import JS_WHITESPACE, split_lines

__all__ = ["DIFF_TIMEOUT_SECONDS", "JsDiffMatchPatch", "diff_lines", "line_diffs"]

DIFF_TIMEOUT_SECONDS = 5
"""`dmp.Diff_Timeout = 5` in the reference: the only clock the engine reads."""

_TEXT1_MAX_LINES = 40000
_MAX_LINES = 65535
_NON_ALPHANUMERIC = re.compile(r"[^a-zA-Z0-9]")
_BLANK_LINE_END = re.compile(r"\n\r?\n\Z")
_BLANK_LINE_START = re.compile(r"\A\r?\n\r?\n")

Diff = tuple[int, str]


def _boundary_score(one: str, two: str) -> int:
    """JS `diff_cleanupSemanticScore_`: 6 (edge) down to 0 (inside a word)."""
    if not one or not two:
        return 6
    char1 = one[-1]
    char2 = two[0]
    non_alphanumeric1 = bool(_NON_ALPHANUMERIC.match(char1))
    non_alphanumeric2 = bool(_NON_ALPHANUMERIC.match(char2))
    whitespace1 = non_alphanumeric1 and char1 in JS_WHITESPACE
    whitespace2 = non_alphanumeric2 and char2 in JS_WHITESPACE
    line_break1 = whitespace1 and char1 in "\r\n"
    line_break2 = whitespace2 and char2 in "\r\n"
    blank_line1 = line_break1 and bool(_BLANK_LINE_END.search(one))
    blank_line2 = line_break2 and bool(_BLANK_LINE_START.match(two))
    if blank_line1 or blank_line2:
        return 5
    if line_break1 or line_break2:
        return 4
    if non_alphanumeric1 and not whitespace1 and whitespace2:
        return 3
    if whitespace1 or whitespace2:
        return 2
    if non_alphanumeric1 or non_alphanumeric2:
        return 1
    return 0


class JsDiffMatchPatch(diff_match_patch):  # type: ignore[misc]
    """diff-match-patch answering exactly as the JavaScript package 1.0.5 does."""

    def __init__(self) -> None:
        super().__init__()
        self.Diff_Timeout = DIFF_TIMEOUT_SECONDS

    def diff_linesToChars(self, text1: str, text2: str) -> tuple[str, str, list[str]]:
        """Encode each distinct line as one character, with the JS package's limits."""
        line_array = [""]
        line_hash: dict[str, int] = {}

        def munge(text: str, max_lines: int) -> str:
            chars: list[str] = []
            line_start = 0
            line_end = -1
            while line_end < len(text) - 1:
                line_end = text.find("\n", line_start)
                if line_end == -1:
                    line_end = len(text) - 1
                line = text[line_start : line_end + 1]
                if line in line_hash:
                    chars.append(chr(line_hash[line]))
                else:
                    if len(line_array) == max_lines:
                        line = text[line_start:]
                        line_end = len(text)
                    chars.append(chr(len(line_array)))
                    # Assigning `__proto__` on a JS object is a no-op.
                    if line != "__proto__":
                        line_hash[line] = len(line_array)
                    line_array.append(line)
                line_start = line_end + 1
            return "".join(chars)

        chars1 = munge(text1, _TEXT1_MAX_LINES)
        chars2 = munge(text2, _MAX_LINES)
        return chars1, chars2, line_array

    def diff_cleanupSemanticLossless(self, diffs: list[Diff]) -> None:
        """Slide single edits between equalities to the best boundary (JS scoring)."""
        pointer = 1
        while pointer < len(diffs) - 1:
            if (
                diffs[pointer - 1][0] == self.DIFF_EQUAL
                and diffs[pointer + 1][0] == self.DIFF_EQUAL
            ):
                equality1 = diffs[pointer - 1][1]
                edit = diffs[pointer][1]
                equality2 = diffs[pointer + 1][1]
                common = self.diff_commonSuffix(equality1, edit)
                if common:
                    shared = edit[-common:]
                    equality1 = equality1[:-common]
                    edit = shared + edit[:-common]
                    equality2 = shared + equality2
                best1, best_edit, best2 = equality1, edit, equality2
                best_score = _boundary_score(equality1, edit) + _boundary_score(edit, equality2)
                while edit and equality2 and edit[0] == equality2[0]:
                    equality1 += edit[0]
                    edit = edit[1:] + equality2[0]
                    equality2 = equality2[1:]
                    score = _boundary_score(equality1, edit) + _boundary_score(edit, equality2)
                    # >= prefers trailing over leading whitespace on edits.
                    if score >= best_score:
                        best_score = score
                        best1, best_edit, best2 = equality1, edit, equality2
                if diffs[pointer - 1][1] != best1:
                    if best1:
                        diffs[pointer - 1] = (diffs[pointer - 1][0], best1)
                    else:
                        del diffs[pointer - 1]
                        pointer -= 1
                    diffs[pointer] = (diffs[pointer][0], best_edit)
                    if best2:
                        diffs[pointer + 1] = (diffs[pointer + 1][0], best2)
                    else:
                        del diffs[pointer + 1]
                        pointer -= 1
            pointer += 1


def line_diffs(search_text: str, replace_text: str) -> list[Diff]:
    """linesToChars, diff_main, cleanupSemantic, cleanupEfficiency, charsToLines: the raw runs."""
    dmp = JsDiffMatchPatch()
    chars1, chars2, line_array = dmp.diff_linesToChars(search_text, replace_text)
    diffs: list[Diff] = dmp.diff_main(chars1, chars2, False)
    dmp.diff_cleanupSemantic(diffs)
    dmp.diff_cleanupEfficiency(diffs)
    dmp.diff_charsToLines(diffs, line_array)
    return diffs


def diff_lines(search_text: str, replace_text: str) -> list[str]:
    """`diff_lines.diffLines`: the line diff as `-`/`+`/` `-prefixed lines, each ending in `\\n`."""
    search_text = search_text.replace("\r\n", "\n")
    replace_text = replace_text.replace("\r\n", "\n")
    udiff: list[str] = []
    for op, text in line_diffs(search_text, replace_text):
        prefix = "-" if op < 0 else "+" if op > 0 else " "
        pieces = split_lines(text)
        for i, piece in enumerate(pieces):
            if i < len(pieces) - 1 or piece != "":
                udiff.append(prefix + piece + "\n")
    return udiff
