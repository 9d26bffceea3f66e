"""The JavaScript string semantics that change what the compat engine returns.

Python strings index code points; JavaScript strings index UTF-16 code units.
The two agree on every index and length except where a character lies outside
the Basic Multilingual Plane (it is one code point but two code units). The
functions below are exact in UTF-16 units where the reference's behaviour
depends on it (`length` guards, `line[0]`), and name the JavaScript primitive
they stand for.
"""

from __future__ import annotations

import re

__all__ = [
    "JS_WHITESPACE",
    "char_at",
    "first_unit_code",
    "index_of",
    "js_trim",
    "js_trim_end",
    "last_index_of",
    "replace_first",
    "split_lines",
    "substring",
    "tokenize_lines",
    "truthy",
    "utf16_len",
]

JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""ECMAScript WhiteSpace and LineTerminator: what `trim` strips and `\\s` matches.

Python's `str.strip()` differs: it strips U+0085 and U+001C..U+001F, and keeps U+FEFF.
"""

_ASTRAL = 0x10000
_LINE_BREAK = re.compile(r"\r?\n")
_LINE_TOKEN = re.compile(r"(\n|\r\n)")


def utf16_len(text: str) -> int:
    """`text.length`: the number of UTF-16 code units."""
    return len(text) + sum(1 for char in text if ord(char) >= _ASTRAL)


def _units(text: str) -> str:
    """The text with every astral character written as its surrogate pair."""
    if all(ord(char) < _ASTRAL for char in text):
        return text
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code < _ASTRAL:
            out.append(char)
        else:
            code -= _ASTRAL
            out.append(chr(0xD800 + (code >> 10)))
            out.append(chr(0xDC00 + (code & 0x3FF)))
    return "".join(out)


def _from_units(units: str) -> str:
    """Join surrogate pairs back into characters; a lone surrogate stays as it is."""
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def char_at(text: str, index: int) -> str:
    """`text[index]` (or `charAt`): one UTF-16 code unit, `""` when out of range.

    For an astral character the unit is a lone surrogate, which never equals
    an ASCII operation character.
    """
    units = _units(text)
    return units[index] if 0 <= index < len(units) else ""


def first_unit_code(text: str) -> int:
    """`text.charCodeAt(0)`, with 0 for the empty string (where JavaScript gives NaN)."""
    first = char_at(text, 0)
    return ord(first) if first else 0


def js_trim(text: str) -> str:
    """`text.trim()`."""
    return text.strip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    """`text.trimEnd()`."""
    return text.rstrip(JS_WHITESPACE)


def replace_first(text: str, search: str, replacement: str) -> str:
    """`text.replace(search, () => replacement)`: the first match only, no `$` patterns."""
    return text.replace(search, replacement, 1)


def split_lines(text: str) -> list[str]:
    """`text.split(/\\r?\\n/)`."""
    return _LINE_BREAK.split(text)


def tokenize_lines(text: str) -> list[str]:
    """jsdiff's line tokenizer: each line keeps its `\\n` or `\\r\\n`; no empty tokens."""
    parts = _LINE_TOKEN.split(text)
    if not parts[-1]:
        parts.pop()
    tokens: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            tokens[-1] += part
        else:
            tokens.append(part)
    # jsdiff then drops empty tokens; there are none: every token but the last
    # ends with a separator, and an empty last part was popped above.
    return tokens


def _clamp(value: int, length: int) -> int:
    return min(max(value, 0), length)


def index_of(text: str, search: str, start: int = 0) -> int:
    """`text.indexOf(search, start)`, in UTF-16 units."""
    units = _units(text)
    return units.find(_units(search), _clamp(start, len(units)))


def last_index_of(text: str, search: str, start: int | None = None) -> int:
    """`text.lastIndexOf(search, start)`, in UTF-16 units."""
    units = _units(text)
    needle = _units(search)
    limit = len(units) if start is None else _clamp(start, len(units))
    return units.rfind(needle, 0, limit + len(needle))


def substring(text: str, start: int, end: int | None = None) -> str:
    """`text.substring(start, end)`, in UTF-16 units (bounds clamped, swapped if reversed)."""
    units = _units(text)
    lo = _clamp(start, len(units))
    hi = len(units) if end is None else _clamp(end, len(units))
    if lo > hi:
        lo, hi = hi, lo
    return _from_units(units[lo:hi])


def truthy(value: str | None) -> bool:
    """JavaScript truthiness of a string result: `undefined` and `""` are false."""
    return bool(value)
