"""Crash safety: a commit killed at any point leaves, after reopening, all-old or all-new files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.workspace_snapshot import TreeSnapshot, make_tree, snapshot_tree

from patchsmith.runtime.workspace import Workspace

CRASH_EXIT = 17

# Runs in a child process: stage a multi-file commit and die (os._exit, no cleanup) at the
# chosen point. argv: root, kind ("step", "replace", "fsync", "syncfs" or "list"), n. A kind
# prefixed "batch-" flushes every batch with syncfs and writes temps on threads (as a large
# commit does), not fsyncs and inline.
CHILD = textwrap.dedent(
    """
    import os, sys, threading
    from patchsmith.runtime import atomic, journal, transaction
    from patchsmith.runtime.transaction import Transaction
    from patchsmith.runtime.workspace import Workspace

    root, kind, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if kind.startswith("batch-"):
        kind = kind[len("batch-"):]
        atomic.SYNCFS_MIN_PATHS = 1
        transaction.PARALLEL_WRITES_MIN = 1
    seen = {"step": 0, "replace": 0, "fsync": 0, "syncfs": 0}
    last = [""]
    # a large commit writes and renames on threads: one count, one crash
    counting = threading.Lock()

    def crash_if_due(what):
        with counting:
            if seen[what] == target and kind == what:
                committed = last[0] in ("remove journal", "done") and not any(
                    os.path.exists(os.path.join(d, "manifest.json"))
                    for d in journal_dirs()
                )
                print("new" if committed else "old", flush=True)
                os._exit(17)
            seen[what] += 1

    def journal_dirs():
        base = os.path.join(root, ".patchsmith", "journal")
        return [os.path.join(base, d) for d in os.listdir(base)] if os.path.isdir(base) else []

    real_replace, real_fsync = os.replace, os.fsync

    def replace(src, dst):
        crash_if_due("replace")
        real_replace(src, dst)

    def fsync(fd):
        crash_if_due("fsync")
        real_fsync(fd)

    os.replace, os.fsync = replace, fsync
    real_syncfs = atomic._sync_filesystem

    def sync_filesystem(path):
        crash_if_due("syncfs")
        return real_syncfs(path)

    atomic._sync_filesystem = sync_filesystem

    def on_step(name):
        if kind == "list":
            print(name, flush=True)
        last[0] = name
        crash_if_due("step")

    txn = Transaction(Workspace(root))
    assert txn.update("a.sh", "#!/bin/sh\\necho new\\n") is None
    assert txn.create("new/dir/b.txt", "b\\r\\n") is None
    assert txn.delete("c.txt") is None
    assert txn.move("d.txt", "moved/d.txt", "caf\\xe9 moved\\n") is None
    assert txn.commit(on_step=on_step) is None
    if kind == "list":
        print("counts", seen["replace"], seen["fsync"], seen["syncfs"], flush=True)
    """
)

OLD_FILES: dict[str, bytes | tuple[bytes, int]] = {
    "a.sh": (b"#!/bin/sh\necho old\n", 0o755),
    "c.txt": b"c\n",
    "d.txt": b"caf\xe9\n",
    "keep/k.txt": b"untouched\n",
}
NEW_FILES = {
    "a.sh": b"#!/bin/sh\necho new\n",
    "new/dir/b.txt": b"b\r\n",
    "moved/d.txt": b"caf\xe9 moved\n",
    "keep/k.txt": b"untouched\n",
}
NEW_MODES = {"a.sh": 0o755, "new/dir/b.txt": 0o644, "moved/d.txt": 0o644, "keep/k.txt": 0o644}


def _run_child(root: Path, kind: str, n: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), kind, str(n)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _plan(tmp_path: Path, kind: str = "list") -> tuple[list[str], dict[str, int]]:
    root = make_tree(tmp_path / "plan", OLD_FILES)
    done = _run_child(root, kind, -1)
    assert 0 == done.returncode, done.stderr
    *steps, counts = done.stdout.split("\n")[:-1]
    _, replaces, fsyncs, syncfs = counts.split()
    return steps, {"replace": int(replaces), "fsync": int(fsyncs), "syncfs": int(syncfs)}


def _assert_all_old_or_new(root: Path, expect: str, old: TreeSnapshot) -> None:
    Workspace(root)
    now = snapshot_tree(root)
    if expect == "old":
        assert old == now
    else:
        assert NEW_FILES == now.files()
        assert NEW_MODES == now.modes()
    journal = root / ".patchsmith" / "journal"
    assert not journal.exists() or [] == list(journal.iterdir())


class TestCrashRecovery:
    @pytest.mark.parametrize("batch", ["", "batch-"])
    def test_every_step(self, tmp_path: Path, batch: str) -> None:
        """Killed before any commit step, the reopened workspace is all-old (all-new at the end)."""
        steps, _ = _plan(tmp_path, batch + "list")
        assert ["check", "journal"] == steps[:2]
        assert ["sync directories", "remove journal", "done"] == steps[-3:]
        # Every temp is written, then all are synced, before the first one replaces a file.
        assert steps.index("sync files") < min(
            n for n, step in enumerate(steps) if step.startswith("replace ")
        )
        outcomes = []
        for n, step in enumerate(steps):
            root = make_tree(tmp_path / f"step{n}", OLD_FILES)
            old = snapshot_tree(root)
            child = _run_child(root, batch + "step", n)
            assert CRASH_EXIT == child.returncode, child.stderr
            expect = child.stdout.strip()
            outcomes.append((step, expect))
            _assert_all_old_or_new(root, expect, old)

        assert [("done", "new")] == [item for item in outcomes if item[1] == "new"]

    @pytest.mark.parametrize(
        "kind", ["replace", "fsync", "batch-replace", "batch-fsync", "batch-syncfs"]
    )
    def test_every_system_call(self, tmp_path: Path, kind: str) -> None:
        """Killed at each rename, fsync or syncfs (journal and file writes), it recovers."""
        batch = kind.startswith("batch-")
        _, counts = _plan(tmp_path, "batch-list" if batch else "list")
        total = counts[kind.removeprefix("batch-")]
        assert total >= (2 if kind == "batch-syncfs" else 3)
        for n in range(total):
            root = make_tree(tmp_path / f"{kind}{n}", OLD_FILES)
            old = snapshot_tree(root)
            child = _run_child(root, kind, n)
            assert CRASH_EXIT == child.returncode, child.stderr
            _assert_all_old_or_new(root, child.stdout.strip(), old)
