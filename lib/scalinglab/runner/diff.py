"""Which findings and verdicts moved between two versions of a report, and by how much.

For every finding name in both runs: point A, point B, ``delta = B - A``, the
CI half-width (mean of both runs' half-widths ``(hi - lo) / 2``; one run's when
only one has an interval), ``delta / half_width``, and ``moved`` when
``|delta| > half_width``. A finding without any interval counts as moved when
its point changed beyond numerical noise (relative change above :data:`NOISE_RTOL`, absolute above :data:`NOISE_ATOL`: the same
fit on another machine's BLAS differs by about 1e-9). Names only in A are ``removed``, only in B ``added``.

Reading order: claims whose verdict changed lead, then findings that moved
beyond their interval (largest move first), then those that changed within it;
unchanged findings are only counted. By default a study's latest version is
compared with the most recent earlier good version whose findings differ
(:func:`previous_differing`), so re-runs that reproduce a report exactly do not
hide the last real change.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalinglab.errors import StudyError
from scalinglab.record import load_claims
from scalinglab.runner import store
from scalinglab.textfmt import fmt_ci, fmt_num, format_table

#: Relative change below which a finding without an interval has not moved.
NOISE_RTOL = 1e-6
#: ... and absolute change below which one near zero has not moved.
NOISE_ATOL = 1e-12


def _half_width(ci: Any) -> float | None:
    if not ci:
        return None
    lo, hi = float(ci[0]), float(ci[1])
    if math.isnan(lo) or math.isnan(hi):
        return None
    return (hi - lo) / 2


def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _same_num(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    fa, fb = float(a), float(b)
    return fa == fb or (math.isnan(fa) and math.isnan(fb))


def _same_finding(fa: dict, fb: dict) -> bool:
    ca, cb = fa.get("ci"), fb.get("ci")
    same_ci = (not ca and not cb) or (
        bool(ca) and bool(cb) and all(_same_num(x, y) for x, y in zip(ca, cb, strict=True))
    )
    return _same_num(fa.get("point"), fb.get("point")) and same_ci


def same_findings(a: Sequence[dict], b: Sequence[dict]) -> bool:
    """True when both lists have the same names, points and intervals (NaN equals NaN)."""
    by_a = {f["name"]: f for f in a}
    by_b = {f["name"]: f for f in b}
    return by_a.keys() == by_b.keys() and all(_same_finding(by_a[n], by_b[n]) for n in by_a)


def _sort_key(r: dict) -> tuple:
    rel = r["relative"]
    size = abs(rel) if rel is not None else (math.inf if r["moved"] else 0.0)
    return (0 if r["moved"] else 1 if r["changed"] else 2, -size, r["name"])


def diff_findings(a: list[dict], b: list[dict]) -> dict[str, Any]:
    """Compare two ``findings`` lists (as in ``results.json``).

    Returns
    -------
    dict
        ``{"findings": [row, ...], "added": [name, ...], "removed": [name, ...],
        "moved": [name, ...], "changed": [name, ...], "unchanged": int}``. Rows
        (``name, point_a, point_b, ci_a, ci_b, delta, half_width, relative,
        moved, changed``; NaN written as None) are ordered moved first (largest
        ``|delta / half-width|`` first), then changed, then unchanged.
    """
    by_a = {f["name"]: f for f in a}
    by_b = {f["name"]: f for f in b}
    rows = []
    for name in [n for n in by_a if n in by_b]:
        fa, fb = by_a[name], by_b[name]
        pa, pb = float(fa["point"]), float(fb["point"])
        delta = pb - pa
        widths = [
            w for w in (_half_width(fa.get("ci")), _half_width(fb.get("ci"))) if w is not None
        ]
        hw = sum(widths) / len(widths) if widths else None
        if math.isnan(delta):
            moved = not (math.isnan(pa) and math.isnan(pb))
            rel = None
        elif hw is None:
            noise = max(NOISE_RTOL * max(abs(pa), abs(pb)), NOISE_ATOL)
            moved, rel = math.isinf(delta) or abs(delta) > noise, None
        else:
            moved = abs(delta) > hw
            rel = delta / hw if hw > 0 else (0.0 if delta == 0 else math.copysign(math.inf, delta))
        rows.append(
            {
                "name": name,
                "point_a": _nan_to_none(pa),
                "point_b": _nan_to_none(pb),
                "ci_a": fa.get("ci"),
                "ci_b": fb.get("ci"),
                "delta": _nan_to_none(delta),
                "half_width": hw,
                "relative": None if rel is None or math.isinf(rel) else rel,
                "moved": bool(moved),
                "changed": not _same_finding(fa, fb),
            }
        )
    rows.sort(key=_sort_key)
    return {
        "findings": rows,
        "added": [n for n in by_b if n not in by_a],
        "removed": [n for n in by_a if n not in by_b],
        "moved": [r["name"] for r in rows if r["moved"]],
        "changed": [r["name"] for r in rows if r["changed"]],
        "unchanged": sum(1 for r in rows if not r["changed"]),
    }


def diff_claims(a: Sequence[dict], b: Sequence[dict]) -> list[dict]:
    """Claims whose verdict differs (``verdict_a``/``verdict_b``; None where absent).

    Ordered as in B, claims only in A last.
    """
    va = {c["id"]: c.get("verdict") for c in a}
    vb = {c["id"]: c.get("verdict") for c in b}
    ids = list(vb) + [i for i in va if i not in vb]
    return [
        {"id": i, "verdict_a": va.get(i), "verdict_b": vb.get(i)}
        for i in ids
        if va.get(i) != vb.get(i)
    ]


def run_label(run_dir: Path) -> str:
    """``study/variant/run_id`` of a run folder (from its manifest)."""
    m = store.read_manifest(run_dir)
    if m:
        return f"{m.get('study')}/{m.get('variant')}/{m.get('run_id')}"
    return str(run_dir)


def run_findings(run_dir: Path) -> list[dict]:
    """The findings of a run (its manifest's ``results``)."""
    return store.read_manifest(run_dir).get("results", [])


def run_claims(run_dir: Path) -> list[dict]:
    """The claims ledger of a run (``results.json``; ``[]`` before ledgers existed)."""
    path = Path(run_dir) / "results.json"
    try:
        return load_claims(path) if path.is_file() else []
    except (OSError, ValueError):
        return []


def diff_runs(run_a: Path, run_b: Path) -> dict[str, Any]:
    """:func:`diff_findings` and :func:`diff_claims` of two run folders, labelled.

    Raises
    ------
    StudyError
        Either run is corrupt (:func:`~scalinglab.runner.store.check_run`), rather than
        reporting its unreadable findings as removed.
    """
    for run in (run_a, run_b):
        damage = store.check_run(Path(run)).problems
        if damage:
            raise StudyError("cannot diff a corrupt run: " + "; ".join(damage))
    out = diff_findings(run_findings(run_a), run_findings(run_b))
    return {
        "a": run_label(run_a),
        "b": run_label(run_b),
        "verdicts": diff_claims(run_claims(run_a), run_claims(run_b)),
        **out,
    }


def good_runs(run_dir: Path) -> list[Path]:
    """The finished ``ok`` runs of ``run_dir``'s study and variant, oldest first."""
    run_dir = Path(run_dir).resolve()
    vdir = run_dir.parent
    out = []
    for p in sorted(vdir.iterdir()):
        if p.is_symlink() or not p.is_dir() or p.name.startswith((store.TMP_PREFIX, "latest")):
            continue
        ok = store.read_manifest(p).get("status") == store.RunStatus.OK
        if ok and not store.check_run(p).corrupt:
            out.append(p.resolve())
    return out


def previous_differing(run_dir: Path) -> tuple[Path | None, int]:
    """The most recent earlier good run whose findings differ from ``run_dir``'s.

    Returns
    -------
    (Path | None, int)
        That run (or, when every earlier one is identical, the one just before;
        None when there is none) and how many identical versions were skipped.
    """
    run_dir = Path(run_dir).resolve()
    runs = [p for p in good_runs(run_dir) if p.name < run_dir.name]
    mine = run_findings(run_dir)
    for skipped, p in enumerate(reversed(runs)):
        if not same_findings(run_findings(p), mine):
            return p, skipped
    return (runs[-1] if runs else None), max(len(runs) - 1, 0)


def diff_text(d: dict[str, Any]) -> str:
    """The diff for a terminal: verdict changes, then moved and changed findings, a count."""
    lines = [f"A: {d['a']}", f"B: {d['b']}"]
    if d.get("note"):
        lines.append(d["note"])
    if d.get("verdicts"):
        lines += [
            "",
            "verdicts that changed:",
            format_table(
                ["claim", "A", "B"],
                [
                    [v["id"], v["verdict_a"] or "(absent)", v["verdict_b"] or "(absent)"]
                    for v in d["verdicts"]
                ],
            ),
        ]
    shown = [r for r in d["findings"] if r["changed"]]
    if shown:
        rows = [
            [
                r["name"],
                fmt_num(r["point_a"]) + " " + fmt_ci(r["ci_a"]),
                fmt_num(r["point_b"]) + " " + fmt_ci(r["ci_b"]),
                fmt_num(r["delta"]),
                fmt_num(r["relative"]),
                "MOVED" if r["moved"] else "",
            ]
            for r in shown
        ]
        lines += ["", format_table(["finding", "A", "B", "delta", "delta/hw", ""], rows)]
    if d["added"]:
        lines.append("added: " + ", ".join(d["added"]))
    if d["removed"]:
        lines.append("removed: " + ", ".join(d["removed"]))
    lines.append(
        f"{len(d['moved'])} of {len(d['findings'])} shared findings moved beyond "
        f"their CI half-width; {len(d['changed']) - len(d['moved'])} changed within "
        f"it; {d['unchanged']} unchanged"
    )
    return "\n".join(lines)


def diff_html(d: dict[str, Any]) -> str:
    """The diff as HTML (used by ``reports/index.html``): verdicts first, unchanged counted."""
    esc = html.escape
    parts = []
    if d.get("note"):
        parts.append(f"<p>{esc(d['note'])}</p>")
    if d.get("verdicts"):
        parts.append(
            "<p><b>Verdicts that changed:</b> "
            + "; ".join(
                f"{esc(v['id'])}: {esc(v['verdict_a'] or '(absent)')} &rarr; "
                f"{esc(v['verdict_b'] or '(absent)')}"
                for v in d["verdicts"]
            )
            + "</p>"
        )
    moved_attr = ' class="sl-moved"'
    body = "".join(
        f"<tr{moved_attr if r['moved'] else ''}><td>{esc(r['name'])}</td>"
        f"<td>{fmt_num(r['point_a'])} {fmt_ci(r['ci_a'])}</td>"
        f"<td>{fmt_num(r['point_b'])} {fmt_ci(r['ci_b'])}</td>"
        f"<td>{fmt_num(r['delta'])}</td><td>{fmt_num(r['relative'])}</td>"
        f"<td>{'moved' if r['moved'] else ''}</td></tr>"
        for r in d["findings"]
        if r["changed"]
    )
    if body:
        parts.append(
            f'<div class="sl-scroll"><table class="sl-diff"><thead><tr><th>finding</th>'
            f"<th>A {esc(d['a'].split('/')[-1])}</th><th>B {esc(d['b'].split('/')[-1])}</th>"
            "<th>delta</th><th>delta / CI half-width</th><th></th></tr></thead>"
            f"<tbody>{body}</tbody></table></div>"
        )
    parts.append(
        f"<p>{len(d['moved'])} moved beyond their interval, "
        f"{len(d['changed']) - len(d['moved'])} changed within it, "
        f"{d['unchanged']} unchanged.</p>"
    )
    if d["added"]:
        parts.append(f"<p>added: {esc(', '.join(d['added']))}</p>")
    if d["removed"]:
        parts.append(f"<p>removed: {esc(', '.join(d['removed']))}</p>")
    return "".join(parts)
