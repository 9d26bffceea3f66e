"""`FleetSummary`: a run's results counted by status, as data, a text table and JSON."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from patchsmith.errors import PatchFailure
from patchsmith.fleet.result import FleetStatus, RepoResult

__all__ = ["FleetSummary"]


@dataclass(frozen=True)
class FleetSummary:
    """One run: its id and folder, the change, every repository's result so far.

    `total` counts the repositories of the run (finished or not); `results` holds the
    finished ones in the order of the repositories file; `skipped` how many a resume
    found already finished; `errors` problems with the run itself (a bad line of the
    repositories file, an executor that did not start), never a repository's.
    """

    run_id: str
    run_dir: str
    change_kind: str
    change_name: str
    change_version: str
    total: int
    results: tuple[RepoResult, ...] = ()
    skipped: int = 0
    seconds: float = 0.0
    executor: str = ""
    workers: int = 0
    errors: tuple[PatchFailure, ...] = field(default=())
    stopped: str = ""
    """Why this invocation stopped before the end (`--sample`, `--stop-when`), or ""."""

    @property
    def counts(self) -> dict[str, int]:
        """Repositories per status (every status present, zero included), plus `pending`."""
        counted = Counter(r.status for r in self.results)
        counts = {status.value: counted.get(status, 0) for status in FleetStatus}
        counts["pending"] = self.total - len(self.results)
        return counts

    @property
    def complete(self) -> bool:
        return len(self.results) == self.total

    @property
    def ok(self) -> bool:
        """Finished with no run-level error (repositories may still be refused or failed)."""
        return self.complete and not self.errors

    def to_json(self, *, diffs: bool = True) -> dict[str, object]:
        results = []
        for result in self.results:
            data = result.to_json()
            if not diffs:
                data.pop("diff")
                data.pop("report")
            results.append(data)
        return {
            "run_id": self.run_id,
            "run_dir": self.run_dir,
            "change": {
                "kind": self.change_kind,
                "name": self.change_name,
                "version": self.change_version,
            },
            "total": self.total,
            "counts": self.counts,
            "complete": self.complete,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "executor": self.executor,
            "workers": self.workers,
            "stopped": self.stopped or None,
            "results": results,
            "errors": [e.to_json() for e in self.errors],
        }

    def to_text(self, *, repos: bool = True) -> str:
        """The summary table, then (with `repos`) one row per finished repository."""
        lines = [
            f"fleet run {self.run_id}: {self.change_kind} {self.change_name} "
            f"({self.change_version[:12]}) over {self.total} repositories",
        ]
        if self.executor:
            lines[0] += f", {self.executor} executor, {self.workers} worker(s)"
        counts = self.counts
        width = max(len(k) for k in counts)
        lines.append("")
        lines.append(f"  {'status':<{width}}  repositories")
        for status, count in counts.items():
            lines.append(f"  {status:<{width}}  {count:>12}")
        if self.results:
            took = sum(r.seconds for r in self.results)
            lines.append(
                f"\n  {len(self.results)} finished, {took:.1f}s of repository time, "
                f"{took / len(self.results):.2f}s each on average"
            )
        if repos and self.results:
            key_width = min(60, max(len(r.key) for r in self.results))
            lines.append("")
            lines.append(f"  {'status':<19}  {'repository':<{key_width}}  files  seconds  detail")
            for result in self.results:
                detail = ""
                if result.errors:
                    first = result.errors[0]
                    detail = f"{first.code.value}: {first.message}"[:100]
                lines.append(
                    f"  {result.status.value:<19}  {result.key:<{key_width}}  "
                    f"{len(result.files):>5}  {result.seconds:>7.2f}  {detail}".rstrip()
                )
        for error in self.errors:
            lines.append(f"  error: {error.code.value}: {error.message}")
        if self.stopped:
            lines.append(
                f"\n  stopped: {self.stopped}; {self.total - len(self.results)} repositories "
                f"pending (`patchsmith fleet run --resume {self.run_id}` goes on)"
            )
        return "\n".join(lines) + "\n"
