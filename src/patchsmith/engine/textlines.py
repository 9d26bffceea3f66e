"""Text as a list of lines that remember their own line endings."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Lines", "dominant_ending", "join_lines", "split_lines"]


@dataclass
class Lines:
    """The lines of a text: `contents[i]` without its ending, `endings[i]` in {"\\n", "\\r\\n", ""}.

    Only the last line may have an empty ending (a file without a final newline).
    """

    contents: list[str]
    endings: list[str]

    def __len__(self) -> int:
        return len(self.contents)

    @property
    def text(self) -> str:
        return join_lines(self.contents, self.endings)


def split_lines(text: str) -> Lines:
    """Split on "\\n" only (never on other Unicode line breaks), keeping each ending."""
    if not text:
        return Lines([], [])
    contents = text.split("\n")
    last = contents.pop()
    if "\r" in text:
        endings = ["\r\n" if c.endswith("\r") else "\n" for c in contents]
        contents = [c[:-1] if c.endswith("\r") else c for c in contents]
    else:
        endings = ["\n"] * len(contents)
    if last:
        contents.append(last)
        endings.append("")
    return Lines(contents, endings)


def join_lines(contents: list[str], endings: list[str]) -> str:
    if endings.count("\n") == len(endings):
        # The final newline joined in (`+ "\n"` after the join would copy the text again).
        return "\n".join([*contents, ""]) if contents else ""
    return "".join(c + e for c, e in zip(contents, endings, strict=True))


def dominant_ending(endings: list[str]) -> str:
    """The ending new lines should get: CRLF when most lines use it, else LF."""
    return "\r\n" if endings.count("\r\n") > endings.count("\n") else "\n"
