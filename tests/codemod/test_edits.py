"""Byte-range edit groups: applied outermost first, overlaps deferred, nothing else touched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.codemod.edits import Edit, EditGroup, apply_groups


def group(start: int, end: int, text: bytes) -> EditGroup:
    return EditGroup((Edit(start, end, text),), 1)


class TestApplyGroups:
    def test_disjoint_groups_all_apply(self) -> None:
        """Two separate edits both apply."""
        new, deferred = apply_groups(b"aaa bbb", [group(4, 7, b"B"), group(0, 3, b"A")])

        assert (b"A B", []) == (new, deferred)

    def test_nested_group_is_deferred(self) -> None:
        """An edit inside another is deferred to the next pass; the outer one applies."""
        inner = group(2, 3, b"X")
        new, deferred = apply_groups(b"f(g(1))", [inner, group(0, 7, b"h(g(1))")])

        assert (b"h(g(1))", [inner]) == (new, deferred)

    def test_out_of_range_is_deferred(self) -> None:
        """An edit past the end of the text is never applied."""
        bad = group(5, 9, b"x")

        assert (b"abc", [bad]) == apply_groups(b"abc", [bad])

    @given(st.binary(max_size=40), st.data())
    def test_identity_edits_change_nothing(self, data: bytes, draw: st.DataObject) -> None:
        """Replacing ranges with their own bytes gives the same bytes back."""
        cuts = sorted(draw.draw(st.lists(st.integers(0, len(data)), max_size=6)))
        groups = [group(a, b, data[a:b]) for a, b in zip(cuts[::2], cuts[1::2], strict=False)]

        new, _ = apply_groups(data, groups)

        assert data == new
