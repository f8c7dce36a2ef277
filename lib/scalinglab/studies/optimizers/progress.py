"""Where a walk-protocol sweep stands, read from its stored runs (read-only).

``python -m scalinglab.studies.optimizers.matched --progress`` prints it. The tuning
phases are replayed (:func:`~scalinglab.studies.optimizers.protocol.tune_walks`) with an
objective that only *reads* finished runs: the sweep's per-run cache
(``data/<study>/.runs/<name>-<hash>/``, through :meth:`scalinglab.sweeps.RunCache.load`,
which writes nothing) and the committed ``medium`` runs whose key the sweep reuses. The
replay stops at the first run not yet finished, so everything before it is exactly what
the sweep itself did. Reported:

- per phase (A-D): runs found and the stage in progress;
- every learning-rate walk finished so far (phases A, C, D): its values tried, optimum
  and whether it is interior (a walk of phase B is reported by its evaluations only);
- the final runs and control arms found, out of those planned.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scalinglab.studies.optimizers.config import SizeSpec, SweepConfig


class _Missing(Exception):
    """A run the replay needs has not finished yet."""


def _reader(sweep: SweepConfig, runs: Any, reusable: dict) -> Callable[[Any, int], Any]:
    device = "cpu" if sweep.device == "auto" else sweep.device

    def read(cfg: Any, seed: int) -> Any:
        key = (json.dumps(cfg.to_dict(), sort_keys=True, default=str), int(seed))
        if key in reusable:
            return reusable[key]
        ok, res = runs.load([*key, device])
        return res if ok else None

    return read


def summary(sweep: SweepConfig, runs: Any, reusable: dict | None = None) -> dict[str, Any]:
    """The sweep's state from its stored runs (see the module docstring).

    Parameters
    ----------
    sweep
        A walk-protocol config (``tune_seeds`` set).
    runs
        Its :class:`~scalinglab.sweeps.RunCache` (only ``load`` is called).
    reusable
        Committed runs the sweep takes by key (:func:`.protocol.committed_results`).

    Returns
    -------
    dict
        ``phases`` ``{phase: runs found}``, ``in_progress`` (the stage the replay stopped
        in, or ``"final runs"`` once tuning is done), ``walks`` (finished lr walks:
        ``{"optimizer", "stage", "values", "best", "interior"}``), ``final``
        ``{"found", "planned"}``.
    """
    import math

    from scalinglab.studies.optimizers.arms import arm_runs
    from scalinglab.studies.optimizers.config import cell_hparams
    from scalinglab.studies.optimizers.protocol import tune_walks

    if not sweep.tune_seeds:
        raise ValueError(f"{sweep.compute_class}: not a walk-protocol sweep (no tune_seeds)")
    read = _reader(sweep, runs, reusable or {})
    phases: dict[str, int] = {}
    groups: list[tuple[str, list[tuple[str, dict, float]]]] = []
    n = len(sweep.tune_seeds)

    def evaluate(size: SizeSpec, m: float, desc: str):
        stage = desc.split(":")[0]
        evals: list[tuple[str, dict, float]] = []
        groups.append((stage, evals))

        def fn(batch):
            out = []
            for o, cfg in batch:
                got = [read(sweep.run_config(o, size, m, cfg), s) for s in sweep.tune_seeds]
                if any(g is None for g in got):
                    raise _Missing(stage)
                phases[stage[0]] = phases.get(stage[0], 0) + n
                v = sum(g.final_loss if math.isfinite(g.final_loss) else math.inf for g in got)
                evals.append((o, dict(cfg), v / n))
                out.append(v / n)
            return out

        return fn

    tuned = None
    try:
        tuned, _ = tune_walks(sweep, evaluate)
        in_progress = "final runs"
    except _Missing as stop:
        in_progress = str(stop)
    done = groups[:-1] if tuned is None else groups
    walks = []
    for stage, evals in done:
        if stage.split()[1] != "lr":
            continue
        for o in dict.fromkeys(e[0] for e in evals):
            tried = {float(c["lr"]): v for oo, c, v in evals if oo == o}
            best = min(tried, key=lambda k: tried[k])
            walks.append(
                {
                    "optimizer": o,
                    "stage": stage,
                    "values": sorted(tried),
                    "best": best,
                    "interior": min(tried) < best < max(tried),
                }
            )
    final = {"found": 0, "planned": 0}
    if tuned is not None:
        items = [
            (sweep.run_config(o, sz, m, cell_hparams(sweep, tuned, o, sz, m)), s)
            for o in sweep.optimizers
            for sz in sweep.sizes
            for m in sweep.multiples
            if sweep.runs_cell(o, sz.name, m)
            for s in sweep.seeds
        ] + [(cfg, s) for *_, s, cfg in arm_runs(sweep, tuned)]
        final = {"found": sum(read(c, s) is not None for c, s in items), "planned": len(items)}
    return {"phases": phases, "in_progress": in_progress, "walks": walks, "final": final}


def report(state: dict[str, Any]) -> str:
    """:func:`summary` as lines of text."""
    lines = [
        "tuning runs found per phase: "
        + (", ".join(f"{p} {k}" for p, k in sorted(state["phases"].items())) or "none"),
        f"in progress: {state['in_progress']}",
    ]
    w = state["walks"]
    flagged = [x for x in w if not x["interior"]]
    lines.append(f"finished learning-rate walks: {len(w)}, {len(flagged)} not interior")
    for x in w:
        mark = "interior" if x["interior"] else "ON EDGE"
        vals = ", ".join(f"{v:g}" for v in x["values"])
        lines.append(f"  {x['stage']:<14} {x['optimizer']:<13} lr {x['best']:g} [{vals}] {mark}")
    f = state["final"]
    if f["planned"]:
        lines.append(f"final runs and arms found: {f['found']} of {f['planned']}")
    return "\n".join(lines)
