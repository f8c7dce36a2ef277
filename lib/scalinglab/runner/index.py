"""The catalogue of reports: ``reports/index.html`` and ``reports/index.json``, and the
terminal listing of ``scalinglab reports``.

:func:`collect` reads every run folder (nothing is written). The page
(:func:`render_html`, template ``templates/index.html.j2`` with the one stylesheet of
:mod:`scalinglab.runner.pages`) opens with a one-screen summary: one row per study and
variant, newest run first, with the verdict counts of its latest version, whether it
is stale (:mod:`scalinglab.runner.status`) and when it last ran. The details follow:
each variant's claims ledger, its versions (status, commit subject, moves against
the previous good version, headline findings, links to each ``report.html``) and the
diff of its latest version against the most recent earlier one whose findings differ
(:mod:`scalinglab.runner.diff`). Only :func:`write_index` writes, and only when asked
(``scalinglab reports --write-index``, ``scalinglab run``, ``nox -s reports``).

Variant folders git ignores (``tiny``, a user's own data under ``user/``, runs with
custom parameters under ``<variant>-custom/``) are left out of the index, so the index
a checkout writes is the one a fresh clone writes; the terminal listing shows them,
marked ``local``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from scalinglab import atomic
from scalinglab.errors import InputError
from scalinglab.ledger import VERDICTS, summary, summary_scoped_text, summary_text
from scalinglab.paths import repo_root, reports_dir
from scalinglab.runner import store
from scalinglab.runner.diff import (
    diff_findings,
    diff_runs,
    previous_differing,
    read_claims_strict,
    summary_line,
)
from scalinglab.runner.pages import render
from scalinglab.runner.store import RunStatus
from scalinglab.runner.text import headline
from scalinglab.textfmt import fmt_ci, fmt_num, format_table, json_safe
from scalinglab.verdict_scope import summary_by_scope

#: Status of a finished run folder whose manifest cannot be read.
CORRUPT = "corrupt"


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

    Test-sized variants (``reports/*/tiny/``), a user's own data (``reports/*/user/``)
    and runs with custom parameters (``reports/*/*-custom/``) are ignored by
    ``.gitignore``: a fresh clone does not have them, so the committed index must not
    list them.
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


def _last_line(text: str | None) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip() and not set(ln) <= {"-"}]
    return lines[-1].strip() if lines else ""


def _run_record(ref: store.RunRef, root: Path) -> dict[str, Any]:
    m = store.read_manifest(ref.path)
    error = _last_line(m.get("error")) or None
    if not ref.complete:  # a .tmp- folder: still running, or left by a process killed hard
        status: str = store.unfinished_state(ref.path)
    elif not m:
        status, error = CORRUPT, f"{ref.path / 'manifest.json'}: missing or unreadable"
    else:
        status = m.get("status", RunStatus.INCOMPLETE)
    results_error = None
    try:
        claims = read_claims_strict(ref.path) if ref.complete else []
    except InputError as exc:
        claims, results_error = [], str(exc)
    damage = store.check_run(ref.path).problems if ref.complete and m else []
    if damage or results_error:  # unreadable, or not what its manifest's hash recorded
        status, claims = CORRUPT, []
        results_error = results_error or "; ".join(damage)
    if status == CORRUPT and not results_error:  # the manifest itself is unreadable
        claims, results_error = [], error
    return {
        "run_id": ref.run_id,
        "path": str(ref.path.relative_to(root)),
        "status": status,
        "started": m.get("started"),
        "duration": m.get("duration"),
        "error": error or results_error,
        "results_error": results_error,
        "git_commit": m.get("git_commit"),
        "git_dirty": m.get("git_dirty"),
        "cache_key": m.get("cache_key"),
        "has_html": (ref.path / "report.html").is_file(),
        "headline": headline(m.get("results", [])),
        "claims_summary": summary(claims),
        "claims_by_scope": summary_by_scope(claims),
        "_claims": claims,
        "_results": m.get("results", []),
    }


#: The state of a variant folder whose variant the study's header lists as ``retired``.
RETIRED = "retired"


def _retired(study: str, variant: str) -> str | None:
    """Why ``variant`` of ``study`` is retired (None when it is not, or unknown)."""
    from scalinglab.runner.study import load_study

    try:
        return load_study(study).retired.get(variant)
    except Exception:  # noqa: BLE001 - a folder whose notebook is gone is not retired
        return None


def _state(study: str, variant: str, root: Path, *, retired: str | None) -> str | None:
    """``up-to-date``, ``stale``, ``never run`` or ``retired`` (None when it cannot be
    told); ``retired`` is :func:`_retired` of the variant (read once by the caller)."""
    from scalinglab.runner.status import INVALID, study_status

    if retired is not None:
        return RETIRED
    try:
        state = study_status(study, variant, reports_root=root).state
    except Exception:  # noqa: BLE001 - the index is written whatever status can tell
        return None
    return None if state == INVALID else state


def _variant_details(srec: dict, vrec: dict, root: Path, subjects: dict[str, str]) -> None:
    latest = store.latest_run(srec["study"], vrec["variant"], reports_root=root)
    vrec["latest"] = latest.name if latest else None
    runs_by_id = {r["run_id"]: r for r in vrec["runs"]}
    latest_rec = runs_by_id.get(vrec["latest"] or "")
    vrec["claims"] = [
        {k: c.get(k) for k in ("id", "verdict", "paper", "statement", "scope", "regime")}
        for c in (latest_rec["_claims"] if latest_rec else [])
    ]
    vrec["verdicts"] = summary(vrec["claims"])
    vrec["claims_by_scope"] = summary_by_scope(vrec["claims"])
    vrec["ledger_text"] = summary_scoped_text(vrec["claims"])
    vrec["ledger_error"] = latest_rec["results_error"] if latest_rec else None
    vrec["last_run"] = max((r["started"] or "" for r in vrec["runs"]), default="") or None
    prev = None
    for r in vrec["runs"]:
        r["commit_subject"] = subjects.get(r["git_commit"] or "")
        r["moved"] = r["changed"] = None
        if r["status"] != RunStatus.OK:
            continue
        if prev is not None:
            d = diff_findings(prev["_results"], r["_results"])
            r["moved"], r["changed"] = len(d["moved"]), len(d["changed"])
        prev = r
    vrec["diff"] = None
    if latest is not None:
        base, skipped = previous_differing(latest)
        if base is not None:
            try:
                vrec["diff"] = diff_runs(base, latest)
                vrec["diff"]["note"] = (
                    f"{skipped} identical version(s) in between skipped" if skipped else ""
                )
                vrec["diff"]["summary"] = summary_line(vrec["diff"])
            except InputError as exc:
                vrec["diff_error"] = str(exc)


def collect(
    *,
    reports_root: Path | None = None,
    studies: list[str] | None = None,
    include_ignored: bool = False,
    with_state: bool = False,
) -> dict[str, Any]:
    """Machine-readable listing of every run (the content of ``index.json``); writes nothing.

    Parameters
    ----------
    reports_root
        Default ``reports/``.
    studies
        Only these studies (default: all).
    include_ignored
        Also the variant folders git ignores (``tiny``, ``user``, ``*-custom``), each
        marked ``local: true``; left out by default, so the index written here is the
        one a fresh clone writes.
    with_state
        Ask :mod:`scalinglab.runner.status` whether each declared variant is stale
        (hashes every study's inputs: seconds).

    Returns
    -------
    dict
        ``{"summary": [row, ...], "studies": [{"study", "title", "variants": [{"variant",
        "local", "state", "latest", "last_run", "verdicts", "claims", "runs": [run, ...],
        "diff": dict | None}]}]}``; ``summary`` has one row per study and variant
        (``study, variant, title, local, state, latest, last_run, last_status, versions,
        verdicts, moved, changed``), newest run first, and studies are ordered by their
        newest run too. Each run has ``run_id, path`` (relative to the reports root),
        ``status, started, duration, error, git_commit, git_dirty, commit_subject,
        headline, claims_summary, moved, changed``.
    """
    root = reports_root or reports_dir()
    by_study: dict[str, dict[str, Any]] = {}
    refs = [r for r in store.list_runs(reports_root=root) if studies is None or r.study in studies]
    ignored = git_ignored(sorted({r.path.parent for r in refs}), cwd=root)
    for ref in refs:
        local = ref.path.parent in ignored
        if local and not include_ignored:
            continue
        run = _run_record(ref, root)
        srec = by_study.setdefault(
            ref.study, {"study": ref.study, "title": ref.study, "variants": {}}
        )
        title = store.read_manifest(ref.path).get("title") if run["status"] != CORRUPT else None
        if title:
            srec["title"] = title
        vrec = srec["variants"].setdefault(
            ref.variant, {"variant": ref.variant, "local": local, "runs": []}
        )
        vrec["runs"].append(run)
    subjects = commit_subjects(
        [
            r["git_commit"]
            for s in by_study.values()
            for v in s["variants"].values()
            for r in v["runs"]
        ]
    )
    out, rows = [], []
    for srec in by_study.values():
        variants = list(srec["variants"].values())
        for vrec in variants:
            _variant_details(srec, vrec, root, subjects)
            vrec["retired"] = _retired(srec["study"], vrec["variant"])
            vrec["state"] = (
                _state(srec["study"], vrec["variant"], root, retired=vrec["retired"])
                if with_state and not vrec["local"]
                else None
            )
            for r in vrec["runs"]:
                del r["_claims"], r["_results"]
            newest = vrec["runs"][-1]
            latest_rec = next((r for r in vrec["runs"] if r["run_id"] == vrec["latest"]), None)
            rows.append(
                {
                    "study": srec["study"],
                    "variant": vrec["variant"],
                    "title": srec["title"],
                    "local": vrec["local"],
                    "state": vrec["state"],
                    "latest": vrec["latest"],
                    "latest_path": latest_rec["path"] if latest_rec else None,
                    "last_run": vrec["last_run"],
                    "last_status": newest["status"],
                    "versions": len(vrec["runs"]),
                    "verdicts": vrec["verdicts"],
                    "moved": latest_rec["moved"] if latest_rec else None,
                    "changed": latest_rec["changed"] if latest_rec else None,
                }
            )
        variants.sort(key=lambda v: v["last_run"] or "", reverse=True)
        srec["variants"] = variants
        srec["last_run"] = variants[0]["last_run"] if variants else None
        out.append(srec)
    out.sort(key=lambda s: s["last_run"] or "", reverse=True)
    rows.sort(key=lambda r: r["last_run"] or "", reverse=True)
    return {"summary": rows, "studies": out}


def summary_text_of(counts: dict[str, int]) -> str:
    """``summary_text`` from a ``{verdict: count}`` mapping ('' when no claims)."""
    if not counts:
        return ""
    return summary_text([{"verdict": k} for k, n in counts.items() for _ in range(n)])


def moved_text(r: dict) -> str:
    """How a run's findings compare with the previous good version's ('' for the first)."""
    if r.get("moved") is None:
        return ""
    if not r.get("changed"):
        return "identical to the previous"
    return f"{r['moved']} moved beyond their interval ({r['changed']} changed)"


def _moved_short(r: dict) -> str:
    if r.get("moved") is None:
        return ""
    return f"{r['moved']} moved, {r['changed']} changed" if r.get("changed") else "identical"


def shown_verdicts(rows: list[dict]) -> list[str]:
    """The summary's verdict columns: those some variant's latest version has, in
    ``VERDICTS`` order (nine possible verdicts would not fit one screen)."""
    present = {v for r in rows for v, n in (r.get("verdicts") or {}).items() if n}
    return [v for v in VERDICTS if v in present]


def render_html(index: dict[str, Any]) -> str:
    """``index.html`` (``templates/index.html.j2``): the one-screen summary, then the details."""
    return render(
        "index.html.j2",
        index=index,
        summary_text_of=summary_text_of,
        moved_text=moved_text,
        moved_short=_moved_short,
        verdicts=shown_verdicts(index.get("summary") or []),
        unfinished=store.UNFINISHED,
    )


def write_index(
    *, reports_root: Path | None = None, with_state: bool = True
) -> tuple[Path, Path, dict[str, Any]]:
    """Write ``index.html`` and ``index.json`` into the reports root (atomically)."""
    root = reports_root or reports_dir()
    root.mkdir(parents=True, exist_ok=True)
    index = json_safe(collect(reports_root=root, with_state=with_state))
    html_path, json_path = root / "index.html", root / "index.json"
    for path, text in (
        (html_path, render_html(index)),
        (json_path, json.dumps(index, indent=2, allow_nan=False) + "\n"),
    ):
        atomic.write_text(path, text)
    return html_path, json_path, index


def _when(started: str | None) -> str:
    return (started or "").replace("T", " ")[:16]


def _commit_text(r: dict) -> str:
    return f"{(r['git_commit'] or '')[:7]} {r.get('commit_subject') or ''}".strip()


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "~"


def listing_text(index: dict[str, Any], *, limit: int | None = None, detail: bool = False) -> str:
    """Terminal view of :func:`collect`'s output, at most about 120 characters a line.

    Without ``detail``: one row per study and variant, newest first (at most ``limit``
    rows). With ``detail`` (``scalinglab reports STUDY``): per variant its claims
    summary, its newest ``limit`` versions (``*`` marks ``latest``) and the latest
    version's headline findings.
    """
    if not index["studies"]:
        return "(no reports)"
    if not detail:
        rows = index["summary"][:limit] if limit else index["summary"]
        table = format_table(
            ["study/variant", "last run", "status", "versions", "claims (latest)"],
            [
                [
                    f"{r['study']}/{r['variant']}" + (" (local)" if r["local"] else ""),
                    _when(r["last_run"]),
                    r["last_status"],
                    r["versions"],
                    _cut(summary_text_of(r["verdicts"]) or "-", 72),
                ]
                for r in rows
            ],
        )
        left = len(index["summary"]) - len(rows)
        return table + (f"\n({left} more; --limit)" if left > 0 else "")
    blocks = []
    for s in index["studies"]:
        for v in s["variants"]:
            claims = v.get("claims") or []
            lines = [
                f"{s['study']} / {v['variant']}"
                + (" (local, git-ignored)" if v["local"] else "")
                + ": "
                + (
                    summary_scoped_text(claims)
                    if claims
                    else f"claims unreadable ({v['ledger_error']})"
                    if v.get("ledger_error")
                    else "no claims declared"
                )
            ]
            runs = list(reversed(v["runs"]))
            shown = runs[:limit] if limit else runs
            lines.append(
                format_table(
                    ["version (* latest)", "status", "vs previous", "commit"],
                    [
                        [
                            r["run_id"] + ("*" if r["run_id"] == v["latest"] else ""),
                            r["status"],
                            _moved_short(r),
                            _cut(_commit_text(r), 44),
                        ]
                        for r in shown
                    ],
                )
            )
            if len(runs) > len(shown):
                lines.append(f"({len(runs) - len(shown)} older versions; --limit)")
            latest = next((r for r in runs if r["run_id"] == v["latest"]), None)
            for f in latest["headline"] if latest else []:
                text = f"  {f['name']} = {fmt_num(f['point'])} {fmt_ci(f.get('ci'))}"
                lines.append(_cut(text, 118))
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
