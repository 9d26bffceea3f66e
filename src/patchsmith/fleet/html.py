"""A fleet run as one static HTML page: counts, then every repository's status and diff.

The counts come as a table and as a bar chart (inline SVG), then the recipe's match
counts per recipe, then one row per repository with a link to its change description
when the run was published.

Self-contained (inline CSS and a few lines of inline JavaScript, nothing fetched), so
it opens from disk or any file server. The filters (status boxes and a text search)
only hide rows; without JavaScript every row shows. Every text from a repository is
escaped: a diff cannot inject markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from urllib.parse import quote

from patchsmith.fleet.result import FleetStatus, RepoResult
from patchsmith.fleet.summary import FleetSummary

__all__ = ["render_html"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
td.num{text-align:right}
.status{font-weight:600;white-space:nowrap}
.changed{color:#1a7f37}.no_op{color:#57606a}.refused{color:#9a6700}
.verification_failed{color:#cf222e}.error{color:#cf222e}.skipped{color:#57606a}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:40em;margin:4px 0}
.add{color:#1a7f37}.del{color:#cf222e}.hunk{color:#8250df}
#filters label{margin-right:1em}
.counts td{padding:2px 12px 2px 0;border:0}
svg.bars text{font:12px system-ui,sans-serif}
"""

_BAR_COLOURS = {
    "changed": "#1a7f37",
    "no_op": "#8c959f",
    "refused": "#9a6700",
    "verification_failed": "#cf222e",
    "verification_error": "#bc4c00",
    "error": "#82071e",
    "pending": "#d0d7de",
}

_SCRIPT = """
(function(){
  var boxes=document.querySelectorAll('#filters input[type=checkbox]');
  var search=document.getElementById('search');
  function apply(){
    var shown={};boxes.forEach(function(b){shown[b.value]=b.checked;});
    var needle=search.value.toLowerCase();var visible=0;
    document.querySelectorAll('tr.repo').forEach(function(row){
      var ok=shown[row.dataset.status]&&row.dataset.key.toLowerCase().indexOf(needle)>=0;
      row.hidden=!ok;if(ok){visible++;}
    });
    document.getElementById('visible').textContent=visible;
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  search.addEventListener('input',apply);
})();
"""


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        text = escape(line)
        if line.startswith(("+++", "---", "diff --git")):
            lines.append(f"<b>{text}</b>")
        elif line.startswith("+"):
            lines.append(f'<span class="add">{text}</span>')
        elif line.startswith("-"):
            lines.append(f'<span class="del">{text}</span>')
        elif line.startswith("@@"):
            lines.append(f'<span class="hunk">{text}</span>')
        else:
            lines.append(text)
    return "<pre>" + "\n".join(lines) + "</pre>"


def _bars(counts: Mapping[str, int]) -> str:
    """The statuses as a horizontal bar chart: inline SVG, one labelled bar per status."""
    width, label, height = 360, 150, 18
    top = max(counts.values(), default=0) or 1
    parts = []
    for index, (status, count) in enumerate(counts.items()):
        y = index * (height + 4)
        length = round(width * count / top)
        colour = _BAR_COLOURS.get(status, "#57606a")
        parts.append(
            f'<g class="bar" data-status="{escape(status)}" data-count="{count}">'
            f'<text x="0" y="{y + 13}">{escape(status)}</text>'
            f'<rect x="{label}" y="{y}" width="{length}" height="{height}" fill="{colour}">'
            f"<title>{escape(status)}: {count}</title></rect>"
            f'<text x="{label + length + 4}" y="{y + 13}">{count}</text></g>'
        )
    total_height = len(counts) * (height + 4)
    return (
        f'<svg class="bars" role="img" aria-label="repositories per status" '
        f'xmlns="http://www.w3.org/2000/svg" width="{label + width + 50}" '
        f'height="{total_height}" viewBox="0 0 {label + width + 50} {total_height}">'
        f"{''.join(parts)}</svg>"
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


RECIPE_COLUMNS = (
    "repositories",
    "repositories_matched",
    "repositories_changed",
    "files_scanned",
    "files_matched",
    "files_changed",
    "matches",
    "unchanged_matches",
)
"""The per-recipe counts, in the order the report's table shows them."""


def recipe_counts(results: tuple[RepoResult, ...]) -> dict[str, dict[str, int]]:
    """Per recipe (from each repository's recipe report): repositories matched and changed,
    files scanned and matched, then files changed and matches changed in the repositories
    that ended `changed` (a refused one kept nothing), and matches left alone."""
    table: dict[str, dict[str, int]] = {}
    for result in results:
        report = result.report
        recipe = report.get("recipe_id")
        if not isinstance(recipe, str):
            continue
        row = table.setdefault(recipe, dict.fromkeys(RECIPE_COLUMNS, 0))
        files = report.get("files")
        left = report.get("unchanged_matches")
        changed = result.status is FleetStatus.CHANGED
        row["repositories"] += 1
        row["repositories_matched"] += 1 if _int(report.get("files_matched")) else 0
        row["repositories_changed"] += 1 if changed else 0
        row["files_scanned"] += _int(report.get("files_scanned"))
        row["files_matched"] += _int(report.get("files_matched"))
        row["unchanged_matches"] += len(left) if isinstance(left, list) else 0
        if not changed:  # refused or failed: what it would have changed was not kept
            continue
        row["files_changed"] += _int(report.get("files_changed"))
        row["matches"] += sum(
            _int(f.get("matches"))
            for f in (files if isinstance(files, list) else [])
            if isinstance(f, dict)
        )
    return table


def _recipe_table(results: tuple[RepoResult, ...]) -> str:
    table = recipe_counts(results)
    if not table:
        return ""
    columns = RECIPE_COLUMNS
    head = "".join(f"<th>{c.replace('_', ' ')}</th>" for c in columns)
    rows = "".join(
        f'<tr class="recipe" data-recipe="{escape(recipe)}"><td><code>{escape(recipe)}</code></td>'
        + "".join(f'<td class="num" data-col="{c}">{row[c]}</td>' for c in columns)
        + "</tr>"
        for recipe, row in sorted(table.items())
    )
    return (
        '<h2>Matches per recipe</h2><table id="recipes"><thead><tr><th>recipe</th>'
        f"{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def _link(href: str, text: str) -> str:
    return f'<a class="change" href="{escape(quote(href, safe="/:.-_~"))}">{escape(text)}</a>'


def _row(result: RepoResult, change: str | None = None) -> str:
    status = result.status.value
    detail = []
    for error in result.errors:
        where = f" {escape(error.file)}:" if error.file else ""
        detail.append(
            f'<div class="failure"><code>{escape(error.code.value)}</code>{where} '
            f"{escape(error.message)}</div>"
        )
    if result.diff:
        files = ", ".join(escape(f) for f in result.files)
        detail.append(
            f"<details><summary>diff: {len(result.files)} file(s): {files}</summary>"
            f"{_diff_html(result.diff)}</details>"
        )
    commit = escape(result.commit[:12]) if result.commit else ""
    if change is not None:
        markdown = change[: -len(".json")] + ".md" if change.endswith(".json") else change
        detail.insert(
            0,
            f'<div class="description">change description: {_link(markdown, "Markdown")} · '
            f"{_link(change, 'JSON')}</div>",
        )
    return (
        f'<tr class="repo" data-status="{status}" data-key="{escape(result.key)}">'
        f'<td class="status {status}">{status}</td>'
        f"<td>{escape(result.key)}</td><td><code>{commit}</code></td>"
        f'<td class="num">{len(result.files)}</td><td class="num">{result.seconds:.2f}</td>'
        f"<td>{''.join(detail)}</td></tr>"
    )


def render_html(summary: FleetSummary, changes: Mapping[str, str] | None = None) -> str:
    """The run's report page; `changes` maps a repository to its change description's
    JSON file (a link relative to the page), for the published ones."""
    links = changes or {}
    counts = summary.counts
    title = f"patchsmith fleet run {summary.run_id}"
    count_rows = "".join(
        f'<tr><td class="status {escape(k)}">{escape(k)}</td><td class="num">{v}</td></tr>'
        for k, v in counts.items()
    )
    boxes = "".join(
        f'<label><input type="checkbox" value="{s.value}" checked> {s.value} '
        f"({counts[s.value]})</label>"
        for s in FleetStatus
    )
    rows = "".join(_row(r, links.get(r.key)) for r in summary.results)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"<p>{escape(summary.change_kind)} <code>{escape(summary.change_name)}</code> "
        f"(version <code>{escape(summary.change_version[:12])}</code>) over "
        f'<span id="total">{summary.total}</span> repositories.</p>'
        f'<table class="counts">{count_rows}</table>'
        f"{_bars(counts)}"
        f"{_recipe_table(summary.results)}"
        f'<p id="filters">{boxes}<input id="search" type="search" '
        'placeholder="filter repositories" aria-label="filter repositories"> '
        f'showing <span id="visible">{len(summary.results)}</span></p>'
        '<table id="repos"><thead><tr><th>status</th><th>repository</th><th>commit</th>'
        "<th>files</th><th>seconds</th><th>detail</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
