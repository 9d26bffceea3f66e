"""The edit formats, in the order auto-detection tries them."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from patchsmith.formats import (
    apply_patch,
    lazy_snippet,
    search_replace,
    str_replace,
    udiff,
    whole_file,
)
from patchsmith.formats.script import EditFormat, EditScript

__all__ = ["FORMATS", "FormatParser", "format_named", "parser_for"]


class FormatParser(NamedTuple):
    """One format: a cheap content test and its parser."""

    format: EditFormat
    detect: Callable[[str], bool]
    parse: Callable[[str], EditScript]


# Most specific markers first; lazy snippets, then whole files (any path-named fence) last.
FORMATS: tuple[FormatParser, ...] = (
    FormatParser(EditFormat.STR_REPLACE, str_replace.detect, str_replace.parse),
    FormatParser(EditFormat.APPLY_PATCH, apply_patch.detect, apply_patch.parse),
    FormatParser(EditFormat.SEARCH_REPLACE, search_replace.detect, search_replace.parse),
    FormatParser(EditFormat.UDIFF, udiff.detect, udiff.parse),
    FormatParser(EditFormat.LAZY_SNIPPET, lazy_snippet.detect, lazy_snippet.parse),
    FormatParser(EditFormat.WHOLE_FILE, whole_file.detect, whole_file.parse),
)

_ALIASES = {
    "diff": EditFormat.UDIFF,
    "unified": EditFormat.UDIFF,
    "unified_diff": EditFormat.UDIFF,
    "envelope": EditFormat.APPLY_PATCH,
    "aider": EditFormat.SEARCH_REPLACE,
    "editblock": EditFormat.SEARCH_REPLACE,
    "whole": EditFormat.WHOLE_FILE,
    "lazy": EditFormat.LAZY_SNIPPET,
    "lazy_edit": EditFormat.LAZY_SNIPPET,
    "snippet": EditFormat.LAZY_SNIPPET,
    "str_replace_json": EditFormat.STR_REPLACE,
    "str_replace_editor": EditFormat.STR_REPLACE,
}


def format_named(name: str) -> EditFormat | None:
    """The format a name or common alias means (`udiff`, `search-replace`, `diff`...), if any."""
    key = name.strip().lower().replace("-", "_")
    try:
        return EditFormat(key)
    except ValueError:
        return _ALIASES.get(key)


def parser_for(fmt: EditFormat) -> FormatParser | None:
    """The parser of a concrete format (`None` for `AUTO`)."""
    return next((entry for entry in FORMATS if entry.format is fmt), None)
