"""Fuzzing journal recovery: random and damaged manifests against random file states.

Whatever the journal says and whatever the files hold, recovery never raises (beyond
an `OSError` from the disk), never writes outside the root, into `.git/` or into the
state directory, and changes a file only from the journaled new content back to the
journaled old content.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests.workspace_snapshot import TreeSnapshot, snapshot_tree

from patchsmith.runtime.journal import JournalEntry, open_journal, recover_journals

# Paths a journal may name: fine ones, and every kind a patch path could never be.
PATHS = [
    "a.txt",
    "d/b.txt",
    "d/e/c.txt",
    ".git/config",
    ".git/hooks/post-commit",
    "../outside/x.txt",
    "/etc/hostname-not-really",
    ".patchsmith/patchsmith.db",
    "link/x.txt",
    "d/../a.txt",
    "",
]
CONTENTS = [None, b"", b"old\n", b"new\n", b"other\n", b"\x00bin"]
MODES = [0o644, 0o755, 0o4755, 0o444]


entries = st.lists(
    st.tuples(
        st.sampled_from(PATHS),
        st.sampled_from(CONTENTS),
        st.sampled_from(MODES),
        st.sampled_from(CONTENTS),
        st.sampled_from(MODES),
    ),
    max_size=4,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
damage = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["version", "id", "entries", "created_dirs", "entry"]), json_values),
    st.binary(max_size=40),
)
# The state of each workspace path before recovery: 0 old, 1 new, 2 other bytes, 3 absent.
states = st.lists(st.integers(0, 3), min_size=len(PATHS), max_size=len(PATHS))


def _damage(manifest_path: Path, how: object) -> None:
    if how is None:
        return
    if isinstance(how, bytes):
        manifest_path.write_bytes(how)
        return
    assert isinstance(how, tuple)
    key, value = how
    manifest = json.loads(manifest_path.read_text())
    if key == "entry" and manifest["entries"]:
        manifest["entries"][0] = value
    else:
        manifest[key] = value
    manifest_path.write_text(json.dumps(manifest))


def _writable(path: str) -> bool:
    return path in ("a.txt", "d/b.txt", "d/e/c.txt")


def _set(root: Path, path: str, data: bytes | None, mode: int) -> None:
    target = root / path
    if data is None:
        if target.is_file():
            target.unlink()
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    os.chmod(target, mode)


def _scene(
    base: Path, items: list[tuple[str, bytes | None, int, bytes | None, int]], chosen: list[int]
) -> tuple[Path, dict[str, tuple[bytes | None, bytes | None]]]:
    root = base / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_bytes(b"[core]\n")
    (base / "outside").mkdir()
    (base / "outside" / "x.txt").write_bytes(b"outside\n")
    (root / "link").symlink_to(base / "outside", target_is_directory=True)
    journal_root = root / ".patchsmith" / "journal"
    journal_root.mkdir(parents=True)
    (root / ".patchsmith" / "patchsmith.db").write_bytes(b"db")
    seen: dict[str, tuple[bytes | None, bytes | None]] = {}
    journaled = []
    for path, old, old_mode, new, new_mode in items:
        journaled.append(
            JournalEntry(path, old, old_mode, new, new_mode if new is not None else None)
        )
        if _writable(path) and path not in seen:
            seen[path] = (old, new)
    open_journal(journal_root, journaled, ["d", "d/e"])
    for path, state in zip(PATHS, chosen, strict=True):
        if not _writable(path):
            continue
        old, new = seen.get(path, (b"untouched\n", b"untouched\n"))
        wanted = [old, new, b"other\n", None][state]
        mode = next((m for p, o, m, *_ in items if p == path), 0o644)
        _set(root, path, wanted, mode)
    return root, seen


@settings(max_examples=150)
@given(items=entries, how=damage, chosen=states)
def test_recovery_never_harms(
    items: list[tuple[str, bytes | None, int, bytes | None, int]], how: object, chosen: list[int]
) -> None:
    """No exception, nothing outside the root or in .git/.patchsmith touched, and a file
    changes only from its journaled new content to its journaled old content."""
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        root, journaled = _scene(base, items, chosen)
        journal_dir = next((root / ".patchsmith" / "journal").iterdir())
        _damage(journal_dir / "manifest.json", how)
        before = snapshot_tree(root, exclude=())
        outside = snapshot_tree(base / "outside")

        result = recover_journals(root, root / ".patchsmith" / "journal")
        event("rolled back" if result.rolled_back else "quarantined")

        after = snapshot_tree(root, exclude=())
        assert outside == snapshot_tree(base / "outside")
        _assert_only_rollbacks(before, after, journaled)
        assert len(result.rolled_back) + len(result.quarantined) <= 1
        assert [] == list((root / ".patchsmith" / "journal").iterdir())


def _assert_only_rollbacks(
    before: TreeSnapshot,
    after: TreeSnapshot,
    journaled: dict[str, tuple[bytes | None, bytes | None]],
) -> None:
    old_files, new_files = before.files(), after.files()
    for path in set(old_files) | set(new_files):
        if path.startswith(".patchsmith/"):
            continue  # the journal itself is removed or quarantined
        was, now = old_files.get(path), new_files.get(path)
        if was == now:
            continue
        assert path in journaled, f"{path} changed but was never journaled"
        old, new = journaled[path]
        assert (was, now) == (new, old), f"{path}: {was!r} -> {now!r}"
    assert before.files().get(".git/config") == after.files().get(".git/config")
    assert ".patchsmith/patchsmith.db" in new_files
    assert not [p for p in new_files if p.startswith(".git/hooks")]
