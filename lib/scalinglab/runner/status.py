"""Which reports are up to date, and why the others are stale, without running anything.

:func:`study_status` prepares each run request exactly as ``scalinglab run`` would
(parameters merged and validated, inputs hashed, cache key computed) and compares
it with the manifest of the variant's ``latest`` good run. When the keys differ,
it names what changed, part by part of the cache key:

- **cells**: which code or markdown cells were edited, added or removed (by
  position, kind and first line);
- **parameters**: which merged parameter values differ;
- **inputs**: which input files were added, removed or changed;
- **library**: which of the ``scalinglab`` modules the notebook imports (directly
  or through other modules) changed, or which it imports now or no longer; an edit
  to a module it does not import leaves it up to date;
- **lock**: the pinned environment;
- **hardware**: a hardware record among the inputs was added or re-measured; or,
  for a study whose inputs include ``data/hardware/``, this machine has no record
  and none is committed to reuse, so running it would measure this machine afresh
  (when another machine's committed record would be reused, that is a note).

A latest run whose ``manifest.json`` or ``results.json`` is unreadable, or whose
``results.json`` differs from the SHA-256 in its manifest, is ``corrupt`` (naming the
file), never up to date.

It also lists unfinished (``.tmp-``) run folders as ``running``, ``killed`` or
``incomplete``.

When only markdown cells changed (same execution key), the state is ``prose
changed``: ``scalinglab run`` re-renders the report from the latest run's executed
notebook and findings in seconds, without a kernel. A manifest written before the
per-study key (no ``key_format`` 2) is ``stale`` with the reason "key format changed":
its key covered the whole library, so it runs in full once and records the new key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalinglab.runner import store
from scalinglab.runner.manifest import KEY_FORMAT, cell_hashes
from scalinglab.runner.render import unrenderable_reason

#: Statuses of a study/variant.
UP_TO_DATE, STALE, NEVER_RUN, INVALID = "up-to-date", "stale", "never run", "invalid"
#: Only markdown changed: ``run`` re-renders the report without executing the notebook.
PROSE_CHANGED = "prose changed"

#: The reason given for a manifest whose cache key predates the per-study key.
KEY_FORMAT_CHANGED = (
    "key format changed: this run predates per-study keys (it hashed all of lib/); "
    "it runs in full once"
)

#: The latest good run's ``manifest.json`` or ``results.json`` is damaged (store.check_run).
CORRUPT = "corrupt"


@dataclass
class StudyStatus:
    """The state of one study at one variant."""

    study: str
    variant: str
    state: str  # up-to-date | prose changed | stale | never run | invalid | corrupt
    run_id: str | None = None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth knowing, not why it is stale

    def to_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "variant": self.variant,
            "state": self.state,
            "run_id": self.run_id,
            "reasons": self.reasons,
            "notes": self.notes,
        }


def _first_line(cell: str) -> str:
    kind, _, text = cell.partition(":")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"{kind} {line[:60]!r}"


def cell_changes(old: list[str] | None, cells: list[str]) -> list[str]:
    """What changed between a run's per-cell hashes ``old`` and the current ``cells``.

    Parameters
    ----------
    old
        The manifest's ``cell_hashes`` (None for manifests written before they
        were recorded).
    cells
        The study's current cells (:meth:`~scalinglab.runner.study.Study.cell_sources`).

    Returns
    -------
    list of str
        One line per edited, added or removed cell (1-based positions).
    """
    new = cell_hashes(cells)
    if old is None:
        return ["cells: the notebook's cells changed (this run predates per-cell hashes)"]
    out = []
    old_set, new_set = set(old), set(new)
    for i, (h, cell) in enumerate(zip(new, cells, strict=True), start=1):
        if h not in old_set:
            verb = "edited" if i <= len(old) else "added"
            out.append(f"cell {i} {verb}: {_first_line(cell)}")
    removed = [i for i, h in enumerate(old, start=1) if h not in new_set]
    if len(old) > len(new) or (removed and len(removed) > len(out)):
        out.append(f"{len(old)} cells then, {len(new)} now (removed or moved)")
    if not out and old != new:
        out.append("cells reordered")
    return out


def _dict_changes(what: str, old: dict, new: dict, fmt=repr) -> list[str]:
    out = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            out.append(f"{what} added: {key}" + ("" if what == "input" else f" = {fmt(new[key])}"))
        elif key not in new:
            out.append(f"{what} removed: {key}")
        elif old[key] != new[key]:
            out.append(
                f"{what} changed: {key}"
                if what == "input"
                else f"{what} {key}: {fmt(old[key])} -> {fmt(new[key])}"
            )
    return out


def hardware_reason(inputs: list[str]) -> tuple[str, bool] | None:
    """What this machine means for a study that reads ``data/hardware/``, or None.

    Returns
    -------
    (text, stale) or None
        None when the study reads no hardware record or this machine has its own.
        Otherwise ``stale`` is True when running the study would measure this machine
        afresh (no committed record to reuse) and False when it reuses the one
        committed record of another machine (then the text is a note: its roofline
        findings are that machine's until the hardware is re-measured here).
    """
    if not any("data/hardware" in pattern for pattern in inputs):
        return None
    from scalinglab.cost_model.hardware import hardware_path, machine_key

    path = hardware_path()
    if path.exists():
        return None
    known = sorted(p.stem for p in path.parent.glob("*.json")) if path.parent.is_dir() else []
    if len(known) == 1:
        return (
            f"hardware: this machine ({machine_key()}) has no record; the committed one of "
            f"{known[0]} is reused unless the study is asked to re-measure",
            False,
        )
    return (
        f"hardware: this machine ({machine_key()}) has no record in data/hardware/ "
        f"(recorded: {', '.join(known) or 'none'}); running the study measures it",
        True,
    )


def module_changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """One line per imported library module that changed, or is imported now or no more.

    Parameters
    ----------
    old, new
        ``{module: hash}`` of a run's manifest (``lib_modules``) and of the request.
    """
    out = []
    for name in sorted(set(old) | set(new)):
        if name not in old:
            out.append(f"library: imports {name} now")
        elif name not in new:
            out.append(f"library: no longer imports {name}")
        elif old[name] != new[name]:
            out.append(f"library: {name} changed")
    return out


def why_stale(prep: Any, manifest: dict) -> list[str]:
    """Reasons ``prep`` (a :class:`~scalinglab.runner.pipeline.PreparedRun`) differs from
    the run recorded in ``manifest``; empty when their cache keys agree."""
    if manifest.get("cache_key") == prep.cache_key:
        return []
    hashes = prep.hashes
    cells = prep.study.cell_sources()
    reasons: list[str] = []
    new_format = manifest.get("key_format") == KEY_FORMAT
    if not new_format:
        reasons.append(KEY_FORMAT_CHANGED)
    old_cells = manifest.get("cell_hashes")
    if old_cells is not None:
        reasons += cell_changes(old_cells, cells)
    reasons += _dict_changes("parameter", manifest.get("parameters") or {}, prep.parameters)
    reasons += [
        r.replace("input ", "input (hardware record) ", 1) if "data/hardware/" in r else r
        for r in _dict_changes("input", manifest.get("input_hashes") or {}, hashes["input_hashes"])
    ]
    if new_format:
        reasons += module_changes(manifest.get("lib_modules") or {}, hashes["lib_modules"])
    if manifest.get("lock_hash") != hashes["lock_hash"]:
        reasons.append("lock: lib/constraints.txt changed")
    return reasons or ["cache key changed (no single part identified)"]


def prose_only(prep: Any, manifest: dict) -> bool:
    """True when ``manifest``'s run differs from ``prep`` in its markdown cells only."""
    return (
        manifest.get("key_format") == KEY_FORMAT
        and manifest.get("execution_key") == prep.hashes["execution_key"]
        and manifest.get("cache_key") != prep.cache_key
    )


def study_status(study: str, variant: str, *, reports_root: Path | None = None) -> StudyStatus:
    """The state of ``study`` at ``variant``: compare the request with its latest good run."""
    from scalinglab.errors import ScalingLabError
    from scalinglab.runner.pipeline import prepare_run

    try:
        prep = prepare_run(study, variant=variant)
    except ScalingLabError as exc:
        return StudyStatus(study, variant, INVALID, reasons=[str(exc)])
    hw = hardware_reason(prep.study.inputs)
    stale_hw = [hw[0]] if hw and hw[1] else []
    notes = [hw[0]] if hw and not hw[1] else []
    latest = store.latest_run(study, variant, reports_root=reports_root)
    if latest is None:
        return StudyStatus(
            study, variant, NEVER_RUN, reasons=["no good report yet", *stale_hw], notes=notes
        )
    integrity = store.check_run(latest)
    if integrity.corrupt:
        return StudyStatus(
            study,
            variant,
            CORRUPT,
            run_id=latest.name,
            reasons=[
                *integrity.problems,
                f"run it again: scalinglab run {study} --variant {variant}",
            ],
            notes=notes,
        )
    manifest = store.read_manifest(latest)
    reasons = why_stale(prep, manifest)
    state = STALE if reasons or stale_hw else UP_TO_DATE
    if reasons and not stale_hw and prose_only(prep, manifest):
        blocked = unrenderable_reason(prep, latest)
        if blocked is None:
            state = PROSE_CHANGED
            notes.append(f"'scalinglab run' re-renders it from {latest.name} without running it")
        else:
            reasons.append(f"prose only, but it cannot be re-rendered: {blocked}")
    reasons += stale_hw
    return StudyStatus(study, variant, state, run_id=latest.name, reasons=reasons, notes=notes)


def status_all(
    *,
    studies: list[str] | None = None,
    variants: list[str] | None = None,
    reports_root: Path | None = None,
) -> list[StudyStatus]:
    """:func:`study_status` of every study (or ``studies``) at each of its variants
    (or only those in ``variants``)."""
    from scalinglab.runner.study import discover_studies, load_study

    out = []
    for name in studies or discover_studies():
        for variant in load_study(name).variants:
            if variants is None or variant in variants:
                out.append(study_status(name, variant, reports_root=reports_root))
    return out


def unfinished_runs(*, reports_root: Path | None = None) -> list[tuple[store.RunRef, str]]:
    """Leftover ``.tmp-`` run folders and their state (``running``, ``killed``, ``incomplete``)."""
    return [
        (ref, store.unfinished_state(ref.path))
        for ref in store.list_runs(reports_root=reports_root)
        if not ref.complete
    ]
