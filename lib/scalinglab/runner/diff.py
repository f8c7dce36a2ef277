"""What differs between two versions of a report, and which findings moved.

In the spirit of ``dvc params diff`` / ``dvc metrics diff``, a diff reads in this order:

1. **what the runs were made from** (:func:`diff_provenance`): parameters (old ->
   new), input files (added, removed, changed), the notebook's cells, the library
   and lock hashes, the git commit, Python and package versions;
2. **claims whose verdict changed** (:func:`diff_claims`);
3. **findings that changed beyond numerical noise** (:func:`diff_findings`), those
   that moved beyond their interval first (largest ``|delta| / half-width`` first).
   Unchanged findings are only counted.

A finding *changed* when its point, or a bound of its interval, differs by more than
``atol + rtol * scale`` with ``scale = max(|point A|, |point B|, CI half-width)``
(:data:`NOISE_RTOL`, :data:`NOISE_ATOL`; the same fit on another machine's BLAS
differs by about 1e-9 relative), or when one run has an interval and the other not.
It *moved* when ``|delta| = |B - A|`` exceeds the CI half-width (the mean of both
runs' ``(hi - lo) / 2``; one run's when only one has an interval); a finding without
any interval moved when its point changed. Names only in A are ``removed``, only in B
``added``.

Run folders are read strictly: a missing or corrupt ``manifest.json`` (or a corrupt
``results.json``) is an :class:`~scalinglab.errors.InputError` naming the file, never
"every finding removed". By default a study's latest version is compared with the most
recent earlier good version whose findings differ (:func:`previous_differing`), so
re-runs that reproduce a report exactly do not hide the last real change.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalinglab.errors import InputError
from scalinglab.runner import store
from scalinglab.runner.pages import render
from scalinglab.textfmt import fmt_ci, fmt_num, format_table

#: Relative change (to the finding's scale) below which a number has not changed.
NOISE_RTOL = 1e-6
#: ... and absolute change below which one near zero has not changed.
NOISE_ATOL = 1e-12


# --- reading runs strictly --------------------------------------------------------------


def read_manifest_strict(run_dir: Path) -> dict[str, Any]:
    """A run's ``manifest.json``.

    Raises
    ------
    InputError
        The file is missing, unreadable, not JSON or not a run manifest (names the file).
    """
    path = Path(run_dir) / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("missing: not a run folder", file=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"corrupt manifest, cannot be read ({exc})", file=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("results", []), list):
        raise InputError("corrupt manifest: not a run manifest with a 'results' list", file=path)
    return data


def read_claims_strict(run_dir: Path) -> list[dict]:
    """The claims ledger of a run's ``results.json`` (``[]`` when the file is absent).

    Raises
    ------
    InputError
        The file exists but is not readable JSON with a ``claims`` list.
    """
    path = Path(run_dir) / "results.json"
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"corrupt results, cannot be read ({exc})", file=path) from None
    claims = data.get("claims", []) if isinstance(data, dict) else None
    if not isinstance(claims, list):
        raise InputError("corrupt results: 'claims' is not a list", file=path)
    return claims


def run_label(run_dir: Path) -> str:
    """``study/variant/run_id`` of a run folder (from its manifest; the path if unreadable)."""
    m = store.read_manifest(run_dir)
    if m:
        return f"{m.get('study')}/{m.get('variant')}/{m.get('run_id')}"
    return str(run_dir)


def run_findings(run_dir: Path) -> list[dict]:
    """The findings of a run (its manifest's ``results``; ``[]`` when unreadable)."""
    return store.read_manifest(run_dir).get("results", [])


def run_claims(run_dir: Path) -> list[dict]:
    """The claims ledger of a run (``[]`` when absent or unreadable; see
    :func:`read_claims_strict` for the checked reader)."""
    try:
        return read_claims_strict(run_dir)
    except InputError:
        return []


# --- findings ----------------------------------------------------------------------------


def _half_width(ci: Any) -> float | None:
    if not ci:
        return None
    lo, hi = float(ci[0]), float(ci[1])
    if math.isnan(lo) or math.isnan(hi):
        return None
    return (hi - lo) / 2


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _differs(a: float, b: float, tol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a != b
    return abs(b - a) > tol


def _changed(fa: dict, fb: dict, scale: float, *, rtol: float, atol: float) -> bool:
    tol = atol + rtol * scale
    if _differs(_num(fa.get("point")), _num(fb.get("point")), tol):
        return True
    ca, cb = fa.get("ci"), fb.get("ci")
    if bool(ca) != bool(cb):
        return True
    return bool(ca) and any(_differs(_num(x), _num(y), tol) for x, y in zip(ca, cb, strict=True))


def _scale(pa: float, pb: float, hw: float | None) -> float:
    finite = [abs(x) for x in (pa, pb, hw) if x is not None and math.isfinite(x)]
    return max(finite, default=0.0)


def same_findings(a: Sequence[dict], b: Sequence[dict]) -> bool:
    """True when both lists have the same names and no finding changed beyond noise."""
    d = diff_findings(list(a), list(b))
    return not (d["changed"] or d["added"] or d["removed"])


def _sort_key(r: dict) -> tuple:
    rel = r["relative"]
    size = abs(rel) if rel is not None else (math.inf if r["moved"] else 0.0)
    return (0 if r["moved"] else 1, -size, r["name"])


def diff_findings(
    a: list[dict], b: list[dict], *, rtol: float = NOISE_RTOL, atol: float = NOISE_ATOL
) -> dict[str, Any]:
    """Compare two ``findings`` lists (as in ``results.json``).

    Parameters
    ----------
    a, b
        Findings of version A and version B (dicts with ``name``, ``point``, ``ci``).
    rtol, atol
        Noise threshold: a change within ``atol + rtol * scale`` is no change.

    Returns
    -------
    dict
        ``{"findings": [row, ...], "added": [name, ...], "removed": [name, ...],
        "moved": [name, ...], "changed": [name, ...], "unchanged": int, "shared": int,
        "rtol": float, "atol": float}``. ``findings`` holds only the changed findings
        (``name, point_a, point_b, ci_a, ci_b, delta, half_width, relative, moved,
        changed, point_changed``; NaN written as None; ``point_changed`` False when only
        the interval changed), those that moved first (largest
        ``|delta / half-width|`` first). ``moved`` is a subset of ``changed``.
    """
    if not (rtol >= 0 and atol >= 0):
        raise ValueError(f"rtol and atol must be >= 0, got {rtol}, {atol}")
    by_a = {f["name"]: f for f in a}
    by_b = {f["name"]: f for f in b}
    rows = []
    shared = [n for n in by_a if n in by_b]
    for name in shared:
        fa, fb = by_a[name], by_b[name]
        pa, pb = _num(fa.get("point")), _num(fb.get("point"))
        delta = pb - pa
        widths = [
            w for w in (_half_width(fa.get("ci")), _half_width(fb.get("ci"))) if w is not None
        ]
        hw = sum(widths) / len(widths) if widths else None
        changed = _changed(fa, fb, _scale(pa, pb, hw), rtol=rtol, atol=atol)
        if not changed:
            continue
        rel = None
        if math.isnan(delta):
            moved = not (math.isnan(pa) and math.isnan(pb))
        elif hw is None:
            moved = _differs(pa, pb, atol + rtol * _scale(pa, pb, None))
        else:
            moved = abs(delta) > hw
            if hw > 0:
                rel = delta / hw
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
                "changed": True,
                "point_changed": _differs(pa, pb, atol + rtol * _scale(pa, pb, hw)),
            }
        )
    rows.sort(key=_sort_key)
    return {
        "findings": rows,
        "added": [n for n in by_b if n not in by_a],
        "removed": [n for n in by_a if n not in by_b],
        "moved": [r["name"] for r in rows if r["moved"]],
        "changed": [r["name"] for r in rows],
        "unchanged": len(shared) - len(rows),
        "shared": len(shared),
        "rtol": rtol,
        "atol": atol,
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


# --- what the runs were made from --------------------------------------------------------


def _short(x: Any) -> str:
    if x is None:
        return "(none)"
    if isinstance(x, str) and len(x) == 64 and all(c in "0123456789abcdef" for c in x):
        return x[:12]  # a SHA-256
    return json.dumps(x) if not isinstance(x, str) else repr(x)


def _mapping_changes(what: str, old: dict, new: dict) -> list[dict]:
    return [
        {
            "what": what,
            "name": key,
            "a": _short(old[key]) if key in old else "(absent)",
            "b": _short(new[key]) if key in new else "(absent)",
        }
        for key in sorted(set(old) | set(new))
        if key not in old or key not in new or old[key] != new[key]
    ]


def diff_provenance(ma: dict[str, Any], mb: dict[str, Any]) -> list[dict]:
    """What differs between the runs behind two manifests.

    Returns
    -------
    list of dict
        One ``{"what", "name", "a", "b"}`` per difference (values as short text):
        ``what`` is ``parameter``, ``input`` (files by path, SHA-256 shown short),
        ``notebook`` (cells edited, added or removed), ``library``, ``lock``,
        ``commit``, ``python`` or ``package``. Empty when the runs were made from
        the same things.
    """
    out = _mapping_changes("parameter", ma.get("parameters") or {}, mb.get("parameters") or {})
    out += _mapping_changes("input", ma.get("input_hashes") or {}, mb.get("input_hashes") or {})
    ca, cb = ma.get("cell_hashes"), mb.get("cell_hashes")
    if ca is not None and cb is not None and ca != cb:
        edited = sum(1 for x, y in zip(ca, cb, strict=False) if x != y)
        out.append(
            {
                "what": "notebook",
                "name": "cells",
                "a": f"{len(ca)} cells",
                "b": f"{len(cb)} cells, {edited} of the first {min(len(ca), len(cb))} differ",
            }
        )
    elif ma.get("source_hash") != mb.get("source_hash"):
        out.append(
            {
                "what": "notebook",
                "name": "source",
                "a": _short(ma.get("source_hash")),
                "b": _short(mb.get("source_hash")),
            }
        )
    for key, what in (("lib_hash", "library"), ("lock_hash", "lock")):
        if ma.get(key) != mb.get(key):
            out.append(
                {"what": what, "name": key, "a": _short(ma.get(key)), "b": _short(mb.get(key))}
            )

    def commit(m: dict) -> str:
        c = (m.get("git_commit") or "(no git)")[:7]
        return c + (" + uncommitted changes" if m.get("git_dirty") else "")

    if commit(ma) != commit(mb) or (ma.get("git_dirty") and ma.get("diff") != mb.get("diff")):
        out.append({"what": "commit", "name": "git", "a": commit(ma), "b": commit(mb)})
    ea, eb = ma.get("environment") or {}, mb.get("environment") or {}
    if ea.get("python") != eb.get("python"):
        out.append(
            {
                "what": "python",
                "name": "python",
                "a": str(ea.get("python")),
                "b": str(eb.get("python")),
            }
        )
    for row in _mapping_changes("package", ea.get("packages") or {}, eb.get("packages") or {}):
        out.append({**row, "a": row["a"].strip("'"), "b": row["b"].strip("'")})
    return out


# --- two runs ----------------------------------------------------------------------------


def diff_runs(
    run_a: Path, run_b: Path, *, rtol: float = NOISE_RTOL, atol: float = NOISE_ATOL
) -> dict[str, Any]:
    """Provenance, verdicts and findings of two run folders, labelled ``study/variant/run_id``.

    Raises
    ------
    InputError
        Either run's ``manifest.json`` is missing or corrupt, or its ``results.json`` corrupt.
    """
    ma, mb = read_manifest_strict(run_a), read_manifest_strict(run_b)
    claims_a, claims_b = read_claims_strict(run_a), read_claims_strict(run_b)
    for run in (run_a, run_b):  # parsable, but not what its manifest recorded
        damage = store.check_run(Path(run)).problems
        if damage:
            raise InputError("cannot diff a corrupt run: " + "; ".join(damage))
    return {
        "a": f"{ma.get('study')}/{ma.get('variant')}/{ma.get('run_id')}",
        "b": f"{mb.get('study')}/{mb.get('variant')}/{mb.get('run_id')}",
        "changes": diff_provenance(ma, mb),
        "verdicts": diff_claims(claims_a, claims_b),
        **diff_findings(ma.get("results", []), mb.get("results", []), rtol=rtol, atol=atol),
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
    """The most recent earlier good run whose findings differ (beyond noise) from ``run_dir``'s.

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


# --- output ------------------------------------------------------------------------------


def change_kind(row: dict) -> str:
    """``MOVED`` (beyond the CI half-width), ``interval`` (the point within noise, the
    interval not) or ``''`` (the point changed within the interval)."""
    if row["moved"]:
        return "MOVED"
    return "" if row["point_changed"] else "interval"


def summary_line(d: dict[str, Any]) -> str:
    """E.g. ``2 of 6 shared findings moved beyond their CI half-width; 1 changed within it;
    3 unchanged (within rtol 1e-06)``."""
    moved, changed = len(d["moved"]), len(d["changed"])
    return (
        f"{moved} of {d['shared']} shared findings moved beyond their CI half-width; "
        f"{changed - moved} changed within it; {d['unchanged']} unchanged "
        f"(within rtol {d['rtol']:g})"
    )


def diff_text(d: dict[str, Any]) -> str:
    """The diff for a terminal: what differs, verdict changes, changed findings, a count."""
    lines = [f"A: {d['a']}", f"B: {d['b']}"]
    if d.get("note"):
        lines.append(d["note"])
    changes = d.get("changes") or []
    lines.append("")
    if changes:
        lines += [
            "what differs between the runs:",
            format_table(
                ["what", "name", "A", "B"],
                [[c["what"], c["name"], c["a"], c["b"]] for c in changes],
            ),
        ]
    else:
        lines.append("same parameters, inputs, notebook, library, lock, commit and packages")
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
    if d["findings"]:
        rows = [
            [
                r["name"],
                fmt_num(r["point_a"]) + " " + fmt_ci(r["ci_a"]),
                fmt_num(r["point_b"]) + " " + fmt_ci(r["ci_b"]),
                fmt_num(r["delta"]),
                fmt_num(r["relative"]),
                change_kind(r),
            ]
            for r in d["findings"]
        ]
        lines += ["", format_table(["finding", "A", "B", "delta", "delta/hw", ""], rows)]
    for key in ("added", "removed"):
        if d[key]:
            lines.append(
                textwrap.fill(
                    f"{key} ({len(d[key])}): " + ", ".join(d[key]),
                    width=100,
                    subsequent_indent="  ",
                    break_on_hyphens=False,
                )
            )
    lines.append(summary_line(d))
    return "\n".join(lines)


def diff_html(d: dict[str, Any]) -> str:
    """The diff as an HTML fragment (``templates/diff.html.j2``; used by the index)."""
    return render("diff.html.j2", d=d, summary=summary_line(d))
