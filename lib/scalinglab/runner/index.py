"""The catalogue of reports: ``reports/index.html`` and ``reports/index.json``.

Lists every study with the claims ledger of its latest version (each published
claim and its verdict), its variants and their versions (runs) with status, the
subject of the commit that produced each, how many findings moved beyond their
interval against the previous good version, the headline findings with their
intervals, links to each ``report.html``, and the diff of the latest version
against the most recent earlier one whose findings differ
(:mod:`scalinglab.runner.diff`). The page is one self-contained HTML file
(inline CSS, no scripts), readable offline.
"""

from __future__ import annotations

import html
import json
import secrets
import subprocess
from pathlib import Path
from typing import Any

from scalinglab.claims import summary, summary_scoped_text, summary_text
from scalinglab.verdict_scope import summary_by_scope
from scalinglab.paths import repo_root, reports_dir
from scalinglab.runner import store
from scalinglab.runner.diff import (
    diff_findings,
    diff_html,
    diff_runs,
    previous_differing,
    run_claims,
)
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
.sl-scroll { overflow-x: auto; max-width: 100%; }
.v-reproduces { color: #00734f; font-weight: bold; } .v-contradicts { color: #b13c00;
  font-weight: bold; } .v-inconclusive { color: #8a5a00; font-weight: bold; }
.v-not-identified, .v-untested { color: #666; font-weight: bold; }
.sl-subject { font-size: .85em; color: #333; }
"""


def commit_subjects(commits: list[str], *, cwd: Path | None = None) -> dict[str, str]:
    """Commit hash -> subject line, from git (missing commits and no git: left out)."""
    commits = sorted({c for c in commits if c})
    if not commits:
        return {}
    try:
        out = subprocess.run(
            ["git", "log", "--no-walk=unsorted", "--format=%H%x09%s", *commits],
            cwd=cwd or repo_root(),
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0:  # an unknown commit fails the batch: ask one at a time
        if len(commits) == 1:
            return {}
        res: dict[str, str] = {}
        for c in commits:
            res.update(commit_subjects([c], cwd=cwd))
        return res
    return dict(line.split("\t", 1) for line in out.stdout.splitlines() if "\t" in line)


def git_ignored(paths: list[Path], *, cwd: Path) -> set[Path]:
    """The ``paths`` that git ignores in the repository at ``cwd`` (none outside a repository).

    Test-sized variants (``reports/*/tiny/`` and the like) are ignored by ``.gitignore``:
    a fresh clone does not have them, so the committed index must not list them.
    """
    if not paths:
        return set()
    try:
        out = subprocess.run(
            ["git", "check-ignore", "--stdin", "-z"],
            cwd=cwd,
            input="\0".join(str(p) for p in paths) + "\0",
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    if out.returncode not in (0, 1):  # 128: not a repository, or git failed
        return set()
    return {Path(p) for p in out.stdout.split("\0") if p}


def _first_line(text: str | None) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip() and not set(ln) <= {"-"}]
    return lines[-1].strip() if lines else ""


def collect(*, reports_root: Path | None = None) -> dict[str, Any]:
    """Machine-readable listing of every run (the content of ``index.json``).

    Variants that git ignores (test-sized ones such as ``tiny``) are left out, so the
    index written here is the one a fresh clone writes.

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
    refs = store.list_runs(reports_root=root)
    ignored = git_ignored(sorted({r.path.parent for r in refs}), cwd=root)
    for ref in refs:
        if ref.path.parent in ignored:  # a test-sized variant, never committed
            continue
        m = store.read_manifest(ref.path)
        # a .tmp- folder is still running, or was left by a process killed hard
        status = (
            m.get("status", RunStatus.INCOMPLETE)
            if ref.complete
            else store.unfinished_state(ref.path)
        )
        srec = studies.setdefault(
            ref.study, {"study": ref.study, "title": ref.study, "variants": {}}
        )
        if m.get("title"):
            srec["title"] = m["title"]
        vrec = srec["variants"].setdefault(ref.variant, {"variant": ref.variant, "runs": []})
        vrec["runs"].append(
            {
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
                "claims_summary": summary(run_claims(ref.path)),
                "claims_by_scope": summary_by_scope(run_claims(ref.path)),
            }
        )
    subjects = commit_subjects(
        [
            r["git_commit"]
            for s in studies.values()
            for v in s["variants"].values()
            for r in v["runs"]
            if r["git_commit"]
        ]
    )
    out = []
    for srec in studies.values():
        variants = []
        for vrec in srec["variants"].values():
            latest = store.latest_run(srec["study"], vrec["variant"], reports_root=root)
            vrec["latest"] = latest.name if latest else None
            vrec["claims"] = [
                {
                    "id": c["id"],
                    "verdict": c["verdict"],
                    "paper": c["paper"],
                    "statement": c["statement"],
                }
                for c in (run_claims(latest) if latest else [])
            ]
            prev = None
            for r in vrec["runs"]:
                r["commit_subject"] = subjects.get(r["git_commit"] or "")
                r["moved"] = r["changed"] = None
                if r["status"] != RunStatus.OK:
                    continue
                if prev is not None:
                    d = diff_findings(
                        store.read_manifest(root / prev["path"]).get("results", []),
                        store.read_manifest(root / r["path"]).get("results", []),
                    )
                    r["moved"], r["changed"] = len(d["moved"]), len(d["changed"])
                prev = r
            vrec["diff"] = None
            if latest is not None:
                base, skipped = previous_differing(latest)
                if base is not None:
                    vrec["diff"] = diff_runs(base, latest)
                    vrec["diff"]["note"] = (
                        f"{skipped} identical version(s) in between skipped" if skipped else ""
                    )
            variants.append(vrec)
        srec["variants"] = variants
        out.append(srec)
    return {"studies": out}


def _ledger_html(claims: list[dict]) -> str:
    esc = html.escape
    if not claims:
        return "<p>Claims ledger: no published claims declared.</p>"
    rows = "".join(
        f"<tr><td><b>{esc(c['id'])}</b></td><td>{esc(c['statement'])}</td>"
        f"<td>{esc(c['paper'])}</td>"
        f'<td class="v-{esc(c["verdict"].replace(" ", "-"))}">{esc(c["verdict"])}</td></tr>'
        for c in claims
    )
    return (
        f"<p>Claims ledger of the latest version: {esc(summary_scoped_text(claims))}.</p>"
        '<div class="sl-scroll"><table><thead><tr><th>claim</th><th>statement</th>'
        f"<th>paper</th><th>verdict</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _moved_text(r: dict) -> str:
    if r.get("moved") is None:
        return ""
    if not r.get("changed"):
        return "identical to the previous"
    return f"{r['moved']} moved beyond their interval ({r['changed']} changed)"


def render_html(index: dict[str, Any]) -> str:
    """``index.html``: studies with their ledgers, versions with status, commit subject,
    moves and links, headline findings, and the latest real change."""
    esc = html.escape
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        "<title>Scaling Lab reports</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Scaling Lab reports</h1>",
    ]
    if not index["studies"]:
        parts.append("<p>No reports yet: run <code>scalinglab run STUDY</code>.</p>")
    for s in index["studies"]:
        parts.append(
            f'<h2 id="{esc(s["study"])}">{esc(s["title"])} '
            f"<small><code>{esc(s['study'])}</code></small></h2>"
        )
        for v in s["variants"]:
            parts.append(
                f"<h3>variant <code>{esc(v['variant'])}</code>"
                + (f" &mdash; latest {esc(v['latest'])}" if v["latest"] else "")
                + "</h3>"
            )
            parts.append(_ledger_html(v.get("claims") or []))
            parts.append(
                '<div class="sl-scroll"><table><thead><tr><th>version</th>'
                "<th>status</th><th>commit</th><th>claims</th>"
                "<th>findings vs previous version</th>"
                "<th>headline findings (point [CI])</th></tr></thead><tbody>"
            )
            for r in reversed(v["runs"]):
                link = esc(r["path"] + "/report.html")
                name = esc(r["run_id"])
                finished = r["status"] not in store.UNFINISHED
                ref = f'<a href="{link}">{name}</a>' if finished and r["has_html"] else name
                if finished and not r["has_html"]:
                    ref += " <small>(HTML pruned; findings kept)</small>"
                if r["run_id"] == v["latest"]:
                    ref += " <b>(latest)</b>"
                if r.get("started"):
                    ref += f"<br><small>{esc(r['started'])}</small>"
                heads = "<br>".join(
                    f"{esc(f['name'])}: {fmt_num(f['point'])} {fmt_ci(f.get('ci'))}"
                    for f in r["headline"]
                )
                err = f'<div class="sl-err">{esc(r["error"])}</div>' if r["error"] else ""
                commit = (r["git_commit"] or "")[:7] + (
                    " + uncommitted changes" if r["git_dirty"] else ""
                )
                subject = r.get("commit_subject")
                commit_html = f"<code>{esc(commit)}</code>" + (
                    f'<div class="sl-subject">{esc(subject)}</div>' if subject else ""
                )
                parts.append(
                    f'<tr><td>{ref}</td><td class="st-{esc(r["status"])}">{esc(r["status"])}'
                    f"{err}</td><td>{commit_html}</td>"
                    f"<td>{esc(summary_text_of(r.get('claims_summary') or {}))}</td>"
                    f"<td>{esc(_moved_text(r))}</td><td>{heads}</td></tr>"
                )
            parts.append("</tbody></table></div>")
            if v["diff"]:
                parts.append(
                    "<p>What changed in the latest version, against the latest "
                    "earlier version whose findings differ "
                    f"({esc(v['diff']['a'].split('/')[-1])}):</p>"
                )
                parts.append(diff_html(v["diff"]))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def summary_text_of(counts: dict[str, int]) -> str:
    """``summary_text`` from a ``{verdict: count}`` mapping ('' when no claims)."""
    if not counts:
        return ""
    return summary_text([{"verdict": k} for k, n in counts.items() for _ in range(n)])


def write_index(*, reports_root: Path | None = None) -> tuple[Path, Path, dict[str, Any]]:
    """Write ``index.html`` and ``index.json`` into the reports root (atomically)."""
    root = reports_root or reports_dir()
    root.mkdir(parents=True, exist_ok=True)
    index = json_safe(collect(reports_root=root))
    html_path, json_path = root / "index.html", root / "index.json"
    for path, text in (
        (html_path, render_html(index)),
        (json_path, json.dumps(index, indent=2, allow_nan=False) + "\n"),
    ):
        tmp = root / f"{store.TMP_PREFIX}{path.name}-{secrets.token_hex(4)}"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return html_path, json_path, index


def listing_text(index: dict[str, Any]) -> str:
    """Terminal view: per study/variant its ledger, then one row per run, newest first.

    Headline findings are printed for the latest run only (the index page has them all).
    """
    blocks = []
    for s in index["studies"]:
        for v in s["variants"]:
            claims = v.get("claims") or []
            lines = [
                f"{s['study']} / {v['variant']}: claims ledger "
                + (summary_scoped_text(claims) if claims else "(none declared)")
            ]
            lines += [f"  {c['verdict']:<15s} {c['id']}" for c in claims]
            rows = []
            for r in reversed(v["runs"]):
                mark = "*" if r["run_id"] == v["latest"] else ""
                heads = (
                    "; ".join(
                        f"{f['name']}={fmt_num(f['point'])} {fmt_ci(f.get('ci'))}"
                        for f in r["headline"]
                    )
                    if mark
                    else ""
                )
                subject = (r.get("commit_subject") or "")[:60]
                rows.append([r["run_id"] + mark, r["status"], subject, _moved_text(r), heads])
            lines.append(
                format_table(
                    ["version (* latest)", "status", "commit subject", "vs previous", "headline"],
                    rows,
                )
            )
            blocks.append("\n".join(lines))
    if not blocks:
        return "(no reports)"
    return "\n\n".join(blocks)
