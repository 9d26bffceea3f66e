"""How alike two lines are: the one fuzzy measure the locator and the excerpts share."""

from __future__ import annotations

__all__ = ["bigram_similarity", "bigrams"]


def bigrams(key: str) -> frozenset[str]:
    """The character pairs of `key` (a one-character key stands for itself)."""
    if len(key) < 2:
        return frozenset({key})
    return frozenset({key[i : i + 2] for i in range(len(key) - 1)})


def bigram_similarity(a: str, b: str) -> float:
    """0 to 1: the Dice coefficient of the two strings' character bigrams (1.0 if equal).

    Callers pass lines already normalised the way they compare them (whitespace
    collapsed, punctuation folded); an identifier renamed `name_v2` or a trailing
    comment added keeps a line above 0.6, an unrelated line rarely reaches 0.5.
    """
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    ga, gb = bigrams(a), bigrams(b)
    return 2 * len(ga & gb) / (len(ga) + len(gb))
