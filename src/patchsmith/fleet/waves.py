"""Rolling a run out in waves: a seeded sample of the repositories, and a stop condition.

`--sample N` runs a first wave of N repositories, chosen by a seeded hash of their names
(the same seed and list always give the same wave) and stops; `--stop-when refused>10%`
stops the run once the condition holds over its finished repositories. A later run of the
same id (`fleet run --resume RUN`) goes on with the rest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.repos import RepoSpec
from patchsmith.fleet.result import FleetStatus

__all__ = ["StopRule", "parse_stop_rule", "wave"]

_RULE = re.compile(r"\s*([a-z_]+)\s*(>=|>)\s*(\d+(?:\.\d+)?)\s*(%?)\s*")


@dataclass(frozen=True)
class StopRule:
    """`status op value[%]`: stop when that many (or that share) of the finished
    repositories have `status`. A share is judged only once `minimum` repositories have
    finished (the wave's size), so the first result alone cannot decide it."""

    status: FleetStatus
    at_least: bool
    """`>=` (true) or `>` (false)."""
    value: float
    percent: bool
    minimum: int = 1

    @property
    def text(self) -> str:
        op = ">=" if self.at_least else ">"
        return f"{self.status.value}{op}{self.value:g}{'%' if self.percent else ''}"

    def crossed(self, counts: Mapping[str, int], finished: int) -> str | None:
        """Why the run must stop (the condition with the numbers that crossed it), or None."""
        count = counts.get(self.status.value, 0)
        if self.percent:
            if finished == 0 or finished < self.minimum:
                return None
            measured = 100.0 * count / finished
            shown = f"{count}/{finished} = {measured:.1f}%"
        else:
            measured = float(count)
            shown = f"{count}"
        hit = measured >= self.value if self.at_least else measured > self.value
        return f"--stop-when {self.text} crossed: {self.status.value} {shown}" if hit else None


def parse_stop_rule(text: str, *, minimum: int = 1) -> StopRule | PatchFailure:
    """Parse `STATUS>N`, `STATUS>=N`, `STATUS>N%` (FLEET_RUN_CONFLICT when it is not one)."""
    found = _RULE.fullmatch(text)
    statuses = ", ".join(s.value for s in FleetStatus)
    if found is None:
        return PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            f"not a stop condition: {text!r}",
            hint=f"STATUS>N, STATUS>=N or STATUS>N% (e.g. refused>10%); STATUS: {statuses}",
            rule="stop_when",
        )
    name, op, number, percent = found.groups()
    try:
        status = FleetStatus(name)
    except ValueError:
        return PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            f"no status {name!r} in --stop-when {text!r}",
            hint=f"one of {statuses}",
            rule="stop_when",
        )
    value = float(number)
    if percent and value > 100:
        return PatchFailure(
            FailureCode.FLEET_RUN_CONFLICT,
            f"--stop-when {text!r}: a share above 100%",
            hint="a share is between 0% and 100%",
            rule="stop_when",
        )
    return StopRule(status, op == ">=", value, bool(percent), max(1, minimum))


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}\0{key}".encode()).hexdigest()


def wave(todo: Sequence[RepoSpec], size: int, seed: int = 0) -> list[RepoSpec]:
    """The next wave: `size` of the unfinished repositories `todo`, chosen by a seeded hash
    of their names (stable: the same seed picks the same ones), in the run's order."""
    chosen = {r.key for r in sorted(todo, key=lambda r: _rank(seed, r.key))[:size]}
    return [r for r in todo if r.key in chosen]
