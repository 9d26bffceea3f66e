"""The static HTML report, read back with html.parser."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet import FleetStatus, FleetSummary, RepoResult, fleet_report, render_html


class Page(HTMLParser):
    """What a reader of the page sees: tags, repository rows, filters, scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[dict[str, str | None]] = []
        self.boxes: list[str | None] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "tr" and values.get("class") == "repo":
            self.rows.append(values)
        if tag == "input" and values.get("type") == "checkbox":
            self.boxes.append(values.get("value"))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        else:
            self.text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_every_repository_with_its_status_and_diff(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    summary = fleet_report("done", runs_dir=runs, html=out)
    assert isinstance(summary, FleetSummary)

    page = parse(out.read_text(encoding="utf-8"))

    assert [r["data-key"] for r in page.rows] == [r.key for r in summary.results]
    assert [r["data-status"] for r in page.rows] == [r.status.value for r in summary.results]
    assert page.boxes == [s.value for s in FleetStatus]
    assert page.tags.count("details") == summary.counts["changed"]
    text = "".join(page.text)
    assert "+        assert add(0, 1) == 1" in text  # a diff line, as text
    assert "DIFF_BUDGET_EXCEEDED" in text
    assert "link" not in page.tags and page.tags.count("script") == 1  # nothing fetched
    script = "".join(page.scripts)
    assert "data" not in script or "dataset.status" in script
    assert "addEventListener" in script


def test_repository_text_cannot_inject_markup() -> None:
    hostile = "<script>alert(1)</script>"
    result = RepoResult(
        key=f"repo{hostile}",
        status=FleetStatus.CHANGED,
        commit="a" * 40,
        diff=f"diff --git a/x b/x\n+{hostile}\n-</pre><img src=x>\n@@ -1 +1 @@\n",
        files=(f"x{hostile}",),
        errors=(PatchFailure(FailureCode.IO_ERROR, hostile, file=hostile),),
    )
    summary = FleetSummary("r", "d", "recipe", hostile, "v" * 64, 1, (result,))

    page = parse(render_html(summary))

    assert page.tags.count("script") == 1  # only the page's own filter script
    assert "img" not in page.tags
    assert page.rows[0]["data-key"] == f"repo{hostile}"
    assert hostile in "".join(page.text)


class Chart(HTMLParser):
    """The bar chart's bars and the per-recipe table's cells."""

    def __init__(self) -> None:
        super().__init__()
        self.bars: dict[str, int] = {}
        self.cells: dict[str, str] = {}
        self._col: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "g" and values.get("class") == "bar":
            self.bars[values["data-status"] or ""] = int(values["data-count"] or -1)
        self._col = values.get("data-col") if tag == "td" else None

    def handle_data(self, data: str) -> None:
        if self._col is not None:
            self.cells[self._col] = data
            self._col = None


def test_a_bar_per_status_and_matches_per_recipe(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    summary = fleet_report("done", runs_dir=runs, html=out)
    assert isinstance(summary, FleetSummary)

    chart = Chart()
    chart.feed(out.read_text(encoding="utf-8"))

    assert chart.bars == summary.counts  # every status, pending included, with its count
    assert chart.cells["repositories"] == "7"
    assert chart.cells["repositories_changed"] == "5"
    assert chart.cells["repositories_matched"] == "6"  # the refused one matched too
    assert chart.cells["files_changed"] == "5"  # not the refused one's: it kept nothing
    assert chart.cells["matches"] == str(4 * 5)
