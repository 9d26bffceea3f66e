"""A fleet run as one static HTML page: counts, then every repository's status and diff.

Self-contained (inline CSS and a few lines of inline JavaScript, nothing fetched), so
it opens from disk or any file server. The filters (status boxes and a text search)
only hide rows; without JavaScript every row shows. Every text from a repository is
escaped: a diff cannot inject markup.
"""

from __future__ import annotations

from html import escape

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
"""

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


def _row(result: RepoResult) -> str:
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
    return (
        f'<tr class="repo" data-status="{status}" data-key="{escape(result.key)}">'
        f'<td class="status {status}">{status}</td>'
        f"<td>{escape(result.key)}</td><td><code>{commit}</code></td>"
        f'<td class="num">{len(result.files)}</td><td class="num">{result.seconds:.2f}</td>'
        f"<td>{''.join(detail)}</td></tr>"
    )


def render_html(summary: FleetSummary) -> str:
    """The run's report page."""
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
    rows = "".join(_row(r) for r in summary.results)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"<p>{escape(summary.change_kind)} <code>{escape(summary.change_name)}</code> "
        f"(version <code>{escape(summary.change_version[:12])}</code>) over "
        f'<span id="total">{summary.total}</span> repositories.</p>'
        f'<table class="counts">{count_rows}</table>'
        f'<p id="filters">{boxes}<input id="search" type="search" '
        'placeholder="filter repositories" aria-label="filter repositories"> '
        f'showing <span id="visible">{len(summary.results)}</span></p>'
        '<table id="repos"><thead><tr><th>status</th><th>repository</th><th>commit</th>'
        "<th>files</th><th>seconds</th><th>detail</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
