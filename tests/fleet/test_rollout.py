"""Waves (`--sample`, `--stop-when`, `--resume`), `--keep-checkouts`, and the CLI end to end."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.cli import main
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet import FleetStatus, FleetSummary, RepoSpec, resume_fleet, run_fleet
from patchsmith.fleet.waves import StopRule, parse_stop_rule, wave

from .forge import SIZE, git_out, make_forge_fleet


@pytest.mark.parametrize(
    ("text", "status", "at_least", "value", "percent"),
    [
        ("refused>10%", FleetStatus.REFUSED, False, 10.0, True),
        (" error >= 3 ", FleetStatus.ERROR, True, 3.0, False),
        ("verification_error>0", FleetStatus.VERIFICATION_ERROR, False, 0.0, False),
        ("no_op>=12.5%", FleetStatus.NO_OP, True, 12.5, True),
    ],
)
def test_stop_rules_parse(
    text: str, status: FleetStatus, at_least: bool, value: float, percent: bool
) -> None:
    rule = parse_stop_rule(text)

    assert rule == StopRule(status, at_least, value, percent)


@pytest.mark.parametrize("text", ["", "refused", "refused<3", "bogus>1", "refused>101%", "x>1%%"])
def test_bad_stop_rules_are_structured_errors(text: str) -> None:
    rule = parse_stop_rule(text)

    assert isinstance(rule, PatchFailure) and rule.code is FailureCode.FLEET_RUN_CONFLICT


def test_stop_rule_arithmetic() -> None:
    share = parse_stop_rule("refused>10%", minimum=10)
    count = parse_stop_rule("refused>=2")
    assert isinstance(share, StopRule) and isinstance(count, StopRule)

    assert (
        share.crossed({"refused": 1}, 1) is None
    )  # the wave is not done: one result decides nothing
    assert share.crossed({"refused": 1}, 10) is None  # 10% is not above 10%
    assert share.crossed({"refused": 2}, 10) == (
        "--stop-when refused>10% crossed: refused 2/10 = 20.0%"
    )
    assert count.crossed({"refused": 1}, 1) is None
    assert count.crossed({"refused": 2}, 50) == "--stop-when refused>=2 crossed: refused 2"


@given(
    st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=30),
    st.integers(min_value=1, max_value=40),
    st.integers(min_value=0, max_value=5),
)
def test_a_wave_is_a_stable_seeded_subset(keys: list[str], size: int, seed: int) -> None:
    repos = [RepoSpec(k, k) for k in keys]

    chosen = wave(repos, size, seed)

    assert len(chosen) == min(size, len(repos))
    assert chosen == [r for r in repos if r in chosen]  # in the run's order
    assert wave(list(reversed(repos)), size, seed) == list(reversed(chosen))  # same members
    rest = [r for r in repos if r not in chosen]
    assert set(wave(rest, size, seed)).isdisjoint(chosen)


@pytest.fixture(name="fleet")
def _fleet(forge_fleet: Path) -> Path:
    return forge_fleet


def test_waves_then_resume_give_the_same_result(
    fleet: Path, forge_done: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    listed = [RepoSpec(f"repo{n:04d}", "") for n in range(SIZE)]

    first = run_fleet("unittest-to-assert", fleet, runs_dir=runs, run_id="w", sample=6, seed=3)

    assert len(first.results) == 6 and first.counts["pending"] == SIZE - 6
    assert first.stopped == "--sample 6: the first wave is done" and not first.complete
    assert [r.key for r in first.results] == [r.key for r in wave(listed, 6, 3)]
    assert "stopped: --sample 6" in first.to_text() and first.to_json()["stopped"]

    second = resume_fleet("w", runs_dir=runs, sample=6, seed=3)  # the next wave
    assert len(second.results) == 12 and second.skipped == 6
    rest = resume_fleet("w", runs_dir=runs)

    assert rest.complete and rest.stopped == "" and rest.skipped == 12
    done = run_fleet("unittest-to-assert", fleet, runs_dir=forge_done, run_id="mig")
    assert [r.outcome() for r in rest.results] == [r.outcome() for r in done.results]


def test_stop_when_stops_handing_out_repositories(fleet: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"

    stopped = run_fleet(
        "unittest-to-assert", fleet, runs_dir=runs, run_id="s", workers=1, stop_when="refused>=1"
    )

    # repo0006 is the first refused one; at most the two queued behind it still land
    assert stopped.stopped == "--stop-when refused>=1 crossed: refused 1"
    assert 7 <= len(stopped.results) <= 9 and not stopped.complete
    seen: list[object] = []
    again = resume_fleet(
        "s", runs_dir=runs, stop_when="refused>=1", progress=lambda r, d, t: seen.append(r)
    )
    assert seen == [None] and again.stopped.startswith("--stop-when refused>=1")  # nothing ran


def test_a_share_is_judged_when_the_wave_is_done(fleet: Path, tmp_path: Path) -> None:
    summary = run_fleet(
        "unittest-to-assert",
        fleet,
        runs_dir=tmp_path,
        run_id="p",
        sample=4,
        stop_when="changed>=0%",
    )

    assert len(summary.results) == 4  # not stopped after the first result
    assert summary.stopped.startswith("--stop-when changed>=0% crossed: changed")


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"sample": 0}, FailureCode.FLEET_RUN_CONFLICT),
        ({"stop_when": "refused"}, FailureCode.FLEET_RUN_CONFLICT),
    ],
)
def test_bad_wave_options(
    fleet: Path, tmp_path: Path, options: dict[str, object], code: FailureCode
) -> None:
    summary = run_fleet("unittest-to-assert", fleet, runs_dir=tmp_path, **options)  # type: ignore[arg-type]

    assert [e.code for e in summary.errors] == [code] and summary.results == ()


def test_resume_of_no_run(tmp_path: Path) -> None:
    summary = resume_fleet("nope", runs_dir=tmp_path)

    assert isinstance(summary, FleetSummary)
    assert [e.code for e in summary.errors] == [FailureCode.FILE_NOT_FOUND]


def test_keep_checkouts_keeps_only_changed_ones(small_fleet: Path, tmp_path: Path) -> None:
    summary = run_fleet(
        "unittest-to-assert", small_fleet, runs_dir=tmp_path, run_id="k", keep_checkouts=True
    )

    kept = list((tmp_path / "k" / "work").iterdir())
    assert summary.counts["changed"] == 5 and len(kept) == 5  # not the no-op nor the refused one
    for folder in kept:
        assert "assert add(" in (folder / "checkout" / "tests" / "test_core.py").read_text()


# -- the CLI -------------------------------------------------------------------------------------


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.rects = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("class") == "change":
            self.hrefs.append(values["href"] or "")
        self.rects += tag == "rect"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_cli_wave_resume_publish_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = make_forge_fleet(tmp_path / "fleet", 5)
    monkeypatch.chdir(tmp_path)

    code, first = run_json(
        capsys,
        *("fleet", "run", "unittest-to-assert", "--repos", str(listing), "--run-id", "c"),
        *("--sample", "2", "--json"),
    )
    assert code == 1 and first["stopped"] and first["counts"]["pending"] == 3  # type: ignore[index]

    code, rest = run_json(
        capsys,
        *("fleet", "run", "--resume", "c", "--publish", "--push", "forge"),
        *("--branch", "cli/{run}", "--json"),
    )
    assert code == 0 and rest["complete"] is True and rest["stopped"] is None
    publish = rest["publish"]
    assert isinstance(publish, dict)
    assert publish["counts"] == {"published": 4, "skipped": 1, "failed": 0}
    for item in publish["publications"]:
        if item["status"] == "published":
            bare = tmp_path / "fleet" / "forge" / f"{item['key']}.git"
            assert git_out(bare, "rev-parse", "cli/c") == item["commit"]

    code, again = run_json(capsys, "fleet", "publish", "c", "--branch", "cli/{run}", "--json")
    assert code == 0 and again["publications"] == publish["publications"]
    assert main(["fleet", "publish", "c", "--branch", "cli/{run}"]) == 0
    assert "published  repo0000" in capsys.readouterr().out

    (tmp_path / "out").mkdir()
    assert main(["fleet", "report", "c", "--html", "out/report.html"]) == 0
    capsys.readouterr()
    page = Links()
    page.feed((tmp_path / "out" / "report.html").read_text())
    assert len(page.hrefs) == 2 * 4  # Markdown and JSON for each published repository
    for href in page.hrefs:
        assert (tmp_path / "out" / href).resolve().is_file()
    assert page.rects == len(FleetStatus) + 1  # one bar per status, and one for pending


@pytest.mark.parametrize(
    "argv",
    [
        ["fleet", "run", "--resume", "c", "unittest-to-assert", "--json"],
        ["fleet", "run", "--json"],
        ["fleet", "run", "unittest-to-assert", "--json"],
        ["fleet", "run", "unittest-to-assert", "--repos", "r.txt", "--sample", "0", "--json"],
        ["fleet", "publish", "nope", "--json"],
        ["fleet", "run", "--resume", "nope", "--json"],
    ],
)
def test_cli_usage_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.txt").write_text("x\n")

    code, payload = run_json(capsys, *argv)

    assert code == 2 and payload["status"] == "error"
