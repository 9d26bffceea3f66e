"""False positives of the secret guard on every line the public corpora add.

The corpora hold real code and docs (expected - files), none of which carries a
live credential, so every finding here is a false positive. Run from the repo root:

    .venv/bin/python bench/secrets_false_positives.py [--corpus DIR] [--show N]

Prints one line per finding and a summary; exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from patchsmith.formats.script import Action
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import diff_stat
from patchsmith.runtime.secrets import find_secrets

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def corpus_changes(corpus: Path) -> Iterator[tuple[str, FileChange]]:
    """(case id, change) for every file a corpus case expects to exist afterwards."""
    for path in sorted(corpus.glob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                case = json.loads(line)
                for name, after in (case.get("expected") or {}).items():
                    if after is None:
                        continue
                    before = case["files"].get(name)
                    yield (
                        case["id"],
                        FileChange(
                            path=name,
                            action=Action.UPDATE if before is not None else Action.CREATE,
                            old_path=name if before is not None else None,
                            old_bytes=before.encode() if before is not None else None,
                            new_bytes=after.encode(),
                            old_text=before,
                            new_text=after,
                        ),
                    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--show", type=int, default=50, help="findings to print")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus} (expected ../shared/corpus/)", file=sys.stderr)
        return 2
    files = lines = 0
    kinds: Counter[str] = Counter()
    shown = 0
    started = time.perf_counter()
    for case_id, change in corpus_changes(args.corpus):
        added = diff_stat(change).added
        if not added:
            continue
        files += 1
        lines += len(added)
        text = dict(added)
        for finding in find_secrets(change):
            kinds[finding.kind] += 1
            if shown < args.show:
                shown += 1
                print(f"{case_id}: line {finding.line}: {finding.kind}: {text[finding.line][:100]}")
    elapsed = time.perf_counter() - started
    total = sum(kinds.values())
    print(
        f"secret guard: {total} false positives over {lines} added lines in {files} files "
        f"({elapsed:.1f} s, {1e6 * elapsed / max(lines, 1):.0f} us/line)"
    )
    for kind, count in kinds.most_common():
        print(f"  {kind}: {count}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
