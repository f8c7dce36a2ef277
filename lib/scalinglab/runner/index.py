"""The catalogue of reports: ``reports/index.html`` and ``reports/index.json``.

Lists every study, its variants and their versions (runs) with status, the
headline findings of each run with their intervals, links to each
``report.html``, and for every study/variant with at least two good runs the
diff of the latest two (:mod:`scalinglab.runner.diff`). The page is one
self-contained HTML file (inline CSS, no scripts), readable offline.
"""

from __future__ import annotations

import html
import json
import secrets
from pathlib import Path
from typing import Any

from scalinglab.paths import reports_dir
from scalinglab.runner import store
from scalinglab.runner.diff import diff_html, diff_runs
from scalinglab.runner.store import RunStatus
from scalinglab.runner.text import headline
from scalinglab.textfmt import fmt_ci, fmt_num, format_table, json_safe

CSS = """
body { font-family: system-ui, sans-serif; max-width: 75em; margin: 1em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.st-ok { color: #070; } .st-failed, .st-interrupted, .st-incomplete, .st-killed { color: #b00; }
tr.sl-moved td { background: #fff3cd; }
.sl-err { font-size: .8em; color: #700; white-space: pre-wrap; }
h2 { border-bottom: 1px solid #ddd; margin-top: 2em; }
"""


def _first_line(text: str | None) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip() and not set(ln) <= {"-"}]
    return lines[-1].strip() if lines else ""


def collect(*, reports_root: Path | None = None) -> dict[str, Any]:
    """Machine-readable listing of every run (the content of ``index.json``).

    Returns
    -------
    dict
        ``{"studies": [{"study", "title", "variants": [{"variant", "latest",
        "runs": [run, ...], "diff": dict | None}]}]}``; each run has ``run_id,
        path`` (relative to the reports root), ``status, started, duration,
        error, git_commit, git_dirty, headline`` (findings).
    """
    root = reports_root or reports_dir()
    studies: dict[str, dict[str, Any]] = {}
    for ref in store.list_runs(reports_root=root):
        m = store.read_manifest(ref.path)
        # a .tmp- folder is still running, or was left by a process killed hard
        status = m.get("status", RunStatus.INCOMPLETE) if ref.complete else store.unfinished_state(
            ref.path)
        srec = studies.setdefault(ref.study, {"study": ref.study, "title": ref.study,
                                              "variants": {}})
        if m.get("title"):
            srec["title"] = m["title"]
        vrec = srec["variants"].setdefault(ref.variant, {"variant": ref.variant, "runs": []})
        vrec["runs"].append({
            "run_id": ref.run_id,
            "path": str(ref.path.relative_to(root)),
            "status": status,
            "started": m.get("started"),
            "duration": m.get("duration"),
            "error": _first_line(m.get("error")) or None,
            "git_commit": m.get("git_commit"),
            "git_dirty": m.get("git_dirty"),
            "cache_key": m.get("cache_key"),
            "has_html": (ref.path / "report.html").is_file(),
            "headline": headline(m.get("results", [])),
        })
    out = []
    for srec in studies.values():
        variants = []
        for vrec in srec["variants"].values():
            latest = store.latest_run(srec["study"], vrec["variant"], reports_root=root)
            vrec["latest"] = latest.name if latest else None
            good = [r for r in vrec["runs"] if r["status"] == RunStatus.OK]
            vrec["diff"] = None
            if len(good) >= 2:
                vrec["diff"] = diff_runs(root / good[-2]["path"], root / good[-1]["path"])
            variants.append(vrec)
        srec["variants"] = variants
        out.append(srec)
    return {"studies": out}


def render_html(index: dict[str, Any]) -> str:
    """``index.html``: studies, versions with status and links, headline findings, diffs."""
    esc = html.escape
    parts = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>Scaling Lab reports</title>", f"<style>{CSS}</style></head><body>",
             "<h1>Scaling Lab reports</h1>"]
    if not index["studies"]:
        parts.append("<p>No reports yet: run <code>scalinglab run STUDY</code>.</p>")
    for s in index["studies"]:
        parts.append(f'<h2 id="{esc(s["study"])}">{esc(s["title"])} '
                     f'<small><code>{esc(s["study"])}</code></small></h2>')
        for v in s["variants"]:
            parts.append(f"<h3>variant <code>{esc(v['variant'])}</code>"
                         + (f" &mdash; latest {esc(v['latest'])}" if v["latest"] else "")
                         + "</h3>")
            parts.append("<table><thead><tr><th>version</th><th>status</th><th>started</th>"
                         "<th>commit</th><th>headline findings (point [CI])</th></tr></thead>"
                         "<tbody>")
            for r in reversed(v["runs"]):
                link = esc(r["path"] + "/report.html")
                name = esc(r["run_id"])
                finished = r["status"] not in store.UNFINISHED
                ref = f'<a href="{link}">{name}</a>' if finished and r["has_html"] else name
                if finished and not r["has_html"]:
                    ref += " <small>(HTML pruned; findings kept)</small>"
                if r["run_id"] == v["latest"]:
                    ref += " <b>(latest)</b>"
                heads = "<br>".join(
                    f"{esc(f['name'])}: {fmt_num(f['point'])} {fmt_ci(f.get('ci'))}"
                    for f in r["headline"]
                )
                err = f'<div class="sl-err">{esc(r["error"])}</div>' if r["error"] else ""
                commit = (r["git_commit"] or "")[:7] + (" dirty" if r["git_dirty"] else "")
                parts.append(
                    f"<tr><td>{ref}</td><td class=\"st-{esc(r['status'])}\">{esc(r['status'])}"
                    f"{err}</td><td>{esc(r['started'] or '')}</td><td>{esc(commit)}</td>"
                    f"<td>{heads}</td></tr>"
                )
            parts.append("</tbody></table>")
            if v["diff"]:
                parts.append("<p>Change between the latest two good versions:</p>")
                parts.append(diff_html(v["diff"]))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_index(*, reports_root: Path | None = None) -> tuple[Path, Path, dict[str, Any]]:
    """Write ``index.html`` and ``index.json`` into the reports root (atomically)."""
    root = reports_root or reports_dir()
    root.mkdir(parents=True, exist_ok=True)
    index = json_safe(collect(reports_root=root))
    html_path, json_path = root / "index.html", root / "index.json"
    for path, text in ((html_path, render_html(index)),
                       (json_path, json.dumps(index, indent=2, allow_nan=False) + "\n")):
        tmp = root / f"{store.TMP_PREFIX}{path.name}-{secrets.token_hex(4)}"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return html_path, json_path, index


def listing_text(index: dict[str, Any]) -> str:
    """Terminal table: one row per run, newest first within each study/variant."""
    rows = []
    for s in index["studies"]:
        for v in s["variants"]:
            for r in reversed(v["runs"]):
                heads = "; ".join(f"{f['name']}={fmt_num(f['point'])} {fmt_ci(f.get('ci'))}"
                                  for f in r["headline"])
                mark = "*" if r["run_id"] == v["latest"] else ""
                rows.append([s["study"], v["variant"], r["run_id"] + mark, r["status"], heads])
    if not rows:
        return "(no reports)"
    return format_table(["study", "variant", "version (* latest)", "status", "headline"], rows)
