"""The width-depth families' limits (SPARSE-4 at the limit) and the words of the claim
they decide.

Two families of ReLU shapes at xs's parameter count, stated in
:mod:`~scalinglab.studies.sparsity.config` and run by :mod:`.wd_runs`:

- at 8000 tokens per parameter (:data:`~scalinglab.studies.sparsity.long_config.LONG_WD`: u2
  and u4 beside the long design's xs), section 8e, findings under ``long_wd/``;
- at 16000 (:data:`~scalinglab.studies.sparsity.long_config.LONG_WD16`: u4 and xs, trained
  anew, each shape's equivalence test over 2 looks), section 8f, under ``long_wd16/``.

Each shape's limit comes from :func:`.long_limits.group_limits` (the limit rule every
long design applies); :func:`width_depth_limits` compares the limits per 10x width/depth
by :func:`.long_limits.pair_estimate`, the routine the size pairs use (its ``x`` here
the width/depth ratio, not the parameters). :func:`wd_claim_values` gives the claim's
words and its deciding finding: the family at 16000's u4-xs pair once every one of its
runs is in, else the family at 8000's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from scalinglab.estimate import Estimate
from scalinglab.stats.calibration import welch_interval
from scalinglab.studies.sparsity import limits as slim
from scalinglab.studies.sparsity.config import SparsitySweepConfig
from scalinglab.studies.sparsity.long_findings import horizons_text, params_text
from scalinglab.studies.sparsity.long_limits import group_limits, pair_estimate
from scalinglab.studies.sparsity.steps import Named, Step

#: The columns of :func:`width_depth_limits`' pair table.
WD_PAIR_COLUMNS = [
    "pair",
    "width/depth",
    "routes",
    "decades of width/depth",
    "A0 change per 10x width/depth (fraction of the mean)",
    "method",
]


def width_depth_frame(ldf: pd.DataFrame | None, family: pd.DataFrame | None) -> pd.DataFrame | None:
    """The width-depth family's curves: its runs (``family``, the
    :func:`.long_findings.long_frame` of
    :func:`~scalinglab.studies.sparsity.wd_runs.cached_long_wd`) and the long design's
    ReLU xs runs (from ``ldf``, with their ``looks``) as one long frame; None when either
    is missing."""
    if family is None or family.empty or ldf is None:
        return None
    xs = ldf[(ldf["model"] == "xs") & (ldf["activation"] == "relu")]
    if xs.empty:
        return None
    return pd.concat([xs, family], ignore_index=True)


def width_depth_limits(
    wdf: pd.DataFrame,
    *,
    min_trend: float,
    reps: int,
    level: float,
    seed: int,
    coverage_sims: int | None = None,
    deciding: tuple[str, str] | None = ("u4", "xs"),
    prefix: str = "long_wd",
) -> Step:
    """Sections 8e-8f: a width-depth family's ReLU limits and their change per 10x
    width/depth.

    Parameters
    ----------
    wdf
        :func:`width_depth_frame`: ReLU runs of the family's shapes (one parameter count,
        one horizon in tokens per parameter).
    min_trend
        ReLU's minimum trend effect (the limit rule's equivalence margin).
    reps, level, seed, coverage_sims
        As :func:`group_limits`.
    deciding
        The pair the claim is decided on, ``(deeper, wider)``: the extreme width/depth
        ratios, stated with the design (:data:`~scalinglab.studies.sparsity.long_config.LONG_WD`);
        None when another family decides (every pair is then shown only).
    prefix
        The findings' first name part (``long_wd`` at 8000, ``long_wd16`` at 16000).

    Returns
    -------
    Step
        :func:`group_limits`' findings under ``<prefix>/``; one finding
        ``<prefix>/relu/<deeper>-<wider>/A0_relative_slope`` per pair of shapes whose
        limits are identified, smaller width/depth first: the change of the limit over
        its mean per 10x width/depth (:func:`.limits.size_pair_slope`, each side by its
        route); ``<prefix>/relu/<model>/width_depth`` per shape; where a limit of the
        extreme shapes is not identified, ``<prefix>/relu/<deeper>-<wider>/
        last_decade_level_difference`` (their levels over their own last decades, Welch
        t over seeds; shown, never deciding). ``table`` one row per
        pair (:data:`WD_PAIR_COLUMNS`); ``extra["limits"]`` and ``extra["laws"]`` as
        :func:`group_limits`' ``limits`` and ``table``; ``extra["A0"]`` ``{model:
        Estimate}``. Only the ``deciding`` pair
        decides the claim, so no correction for the others, which are shown as a check
        of the claim's linear form.
    """
    step = group_limits(
        wdf,
        min_trend={"relu": min_trend},
        reps=reps,
        level=level,
        seed=seed,
        coverage_sims=coverage_sims,
        prefix=prefix,
    )
    out = Step(findings=list(step.findings), messages=list(step.messages))
    ratio = wdf.groupby("model")["width_depth_ratio"].first()
    for model, r in ratio.items():
        shape = wdf[wdf["model"] == model].iloc[0]
        out.findings.append(
            Named(
                f"{prefix}/relu/{model}/width_depth",
                Estimate(float(r), method="d_model over layers of the shape"),
                f"model {model}: d_model {int(shape['d_model'])}, {int(shape['n_layer'])} "
                f"layer(s), {float(shape['n_params']):.0f} non-embedding parameters",
                unit="width/depth",
            )
        )
    decided = {
        m: (route, ev, float(ratio[m])) for (_, m), (route, ev, _) in step.extra["decided"].items()
    }
    order = sorted(decided, key=lambda m: decided[m][2])
    missing = [m for m in ratio.index if m not in decided]
    if missing:
        out.messages.append(
            f"{prefix}/relu: limits not identified at {', '.join(map(str, missing))}; "
            "no pair with them"
        )
    rows = []
    use = wdf[wdf["usable"]]
    for i, deep in enumerate(order):
        for wide in order[i + 1 :]:
            a, b = decided[deep], decided[wide]
            est = pair_estimate(
                a,
                b,
                (use[use["model"] == deep], use[use["model"] == wide]),
                level=level,
                seed=seed,
                coverage_sims=coverage_sims or min(reps, 200),
                coverage_reps=min(reps, 200),
            )
            decades = float(np.log10(b[2] / a[2]))
            role = (
                "decides deeper-sparser"
                if (deep, wide) == deciding
                else "shown, a check of the linear form (not in the verdict)"
                if deciding is not None
                else "shown, not in the verdict (another family decides)"
            )
            out.findings.append(
                Named(
                    f"{prefix}/relu/{deep}-{wide}/A0_relative_slope",
                    est,
                    f"relu: change of the identified limit from {deep} ({a[0]}, width/depth "
                    f"{a[2]:g}) to {wide} ({b[0]}, width/depth {b[2]:g}) over its mean, per "
                    f"10x width/depth ({decades:.2f} decades apart), at one parameter count "
                    f"and horizon; {role}",
                    unit="fraction of the limit per 10x width/depth",
                )
            )
            rows.append(
                {
                    "pair": f"{deep}-{wide}",
                    "width/depth": f"{a[2]:g} to {b[2]:g}",
                    "routes": f"{a[0]}-{b[0]}",
                    "decades of width/depth": decades,
                    "A0 change per 10x width/depth (fraction of the mean)": str(est),
                    "method": est.method,
                }
            )
    deep, wide = str(ratio.idxmin()), str(ratio.idxmax())
    if deep != wide and (deep not in decided or wide not in decided):
        out.findings.append(_level_difference(wdf, deep, wide, level=level, prefix=prefix))
    out.table = pd.DataFrame(rows, columns=WD_PAIR_COLUMNS)
    out.extra["limits"] = step.extra["limits"]
    out.extra["laws"] = step.table
    out.extra["A0"] = {m: est for (_, m), est in step.extra["A0"].items()}
    return out


def _level_difference(
    wdf: pd.DataFrame, deep: str, wide: str, *, level: float, prefix: str
) -> Named:
    """The extreme shapes' difference in level over their own last decades, deeper minus
    wider, when a limit of theirs is not identified: which shape is sparser there, shown
    beside the claim, never a limit."""
    a, b = (slim.plateau_levels(wdf[wdf["model"] == m]).to_numpy() for m in (deep, wide))
    d, lo, hi = welch_interval(a, b, level=level)
    est = Estimate(
        float(d),
        float(lo),
        float(hi),
        level=level,
        method=f"Welch t over {len(a)} and {len(b)} seeds (each seed's mean ratio over its "
        "shape's own last decade)",
        n=min(len(a), len(b)),
    )
    return Named(
        f"{prefix}/relu/{deep}-{wide}/last_decade_level_difference",
        est,
        f"relu: {deep}'s mean ratio over its last decade minus {wide}'s (deeper minus wider; "
        "a limit of the pair is not identified, so these are levels at the horizon, not "
        "limits); shown, not in the verdict",
        unit="activation ratio",
    )


#: The command that trains the family at 16000 (resumable block by block).
WD16_COMMAND = "python -m scalinglab.studies.sparsity.long_runs run --design wd16"


def _shapes_words(configs: Mapping[str, SparsitySweepConfig]) -> dict[str, str]:
    """``wd_shapes``, ``wd_params`` and ``wd_ratios`` of a family's configs ``{model:
    config}``, deepest first."""
    shapes, params, ratios = [], [], []
    for name, cfg in sorted(
        configs.items(), key=lambda kv: kv[1].models[0].d_model / kv[1].models[0].n_layer
    ):
        (m,) = cfg.models
        mc = cfg.model_config(m, "relu")
        n = mc.n_params()
        params.append(n)
        ratios.append(m.d_model / m.n_layer)
        shapes.append(
            f"{name} {m.d_model} x {m.n_layer} (width/depth {m.d_model / m.n_layer:g}, "
            f"{params_text(n)}, F {mc.ffn_width})"
        )
    return {
        "wd_shapes": "; ".join(shapes),
        "wd_params": "-".join(dict.fromkeys((params_text(min(params)), params_text(max(params))))),
        "wd_ratios": f"{min(ratios):g}-{max(ratios):g}",
    }


def _unread(prefix: str, notes: Mapping[str, str], *, at: str) -> str:
    """Why the deciding pair (u4, xs) of the family under ``prefix`` cannot be read: each
    shape whose limit is not identified and the limit rule's reason (its note after
    ``"no plateau: "``)."""
    why = []
    for model in ("u4", "xs"):
        note = notes.get(f"{prefix}/relu/{model}/A0", "")
        if note.startswith("route: none"):
            reason = note.split("no plateau: ", 1)[-1]
            why.append(f"{model}'s limit is not identified ({reason})")
    if not why:
        return f"a limit of the deciding pair (u4, xs){at} is not identified (the report says why)"
    return f"the deciding pair (u4, xs){at} cannot be read: " + "; ".join(why)


def wd16_runs_text(runs: Mapping[str, tuple[int, int]] | None) -> str:
    """The family at 16000's runs in, in words (``runs``: ``{shape: (in, stated)}``, as
    :attr:`.wd_runs.Wd16Family.progress`), e.g. ``"3 of 27 runs in (wd16-u4 2 of 15, wd16-xs 1
    of 12)"``; ``"not counted"`` when None."""
    if runs is None:
        return "not counted"
    if not runs:
        return "no runs: this class has no such family"
    have, total = sum(v[0] for v in runs.values()), sum(v[1] for v in runs.values())
    each = ", ".join(f"{s} {k} of {n}" for s, (k, n) in runs.items())
    return f"{have} of {total} runs in ({each})"


def wd_claim_values(
    compute_class: str,
    notes: Mapping[str, str],
    wd: pd.DataFrame | None = None,
    *,
    wd16: pd.DataFrame | None = None,
    wd16_runs: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, object]:
    """The width-depth claim's words and deciding finding.

    The family at 16000 decides once it was read (its u4 limit recorded under
    ``long_wd16/``, which :func:`.wd_runs.wd16_family` allows only with every run
    in); until then the family at 8000 does.

    Parameters
    ----------
    compute_class
        The class whose designs are described (``small``; ``tiny`` has no family).
    notes
        The recorded findings' notes, ``{name: note}``.
    wd, wd16
        The families' frames at 8000 (:func:`width_depth_frame`) and 16000
        (:func:`.long_findings.long_frame` of :func:`.wd_runs.wd16_family`), for
        each shape's horizon, seeds and passes in words (else the configs' horizon).
    wd16_runs
        ``{shape: (runs in, runs stated)}`` of the family at 16000
        (:attr:`.wd_runs.Wd16Family.progress`), said where the family at 8000 cannot decide.

    Returns
    -------
    dict
        ``wd_deciding`` (a one-name list: the deciding pair's finding), ``wd_family``
        (which family, in words), ``wd_check`` (what else is shown), ``wd_shapes`` (each
        shape's d_model x layers, width/depth, parameters and FFN width ``F`` a layer),
        ``wd_params`` and ``wd_ratios`` (their ranges), ``wd_horizon`` and ``wd_missing``
        (why the deciding finding is missing, where it is).
    """
    from scalinglab.studies.sparsity.long_config import (
        LONG_WD16_HORIZONS,
        LONG_WD_HORIZON,
        long_configs,
        long_wd16_blocks,
        long_wd_configs,
    )

    family = long_wd_configs(compute_class)
    if not family:
        return {
            "wd_deciding": ["long_wd/relu/u4-xs/A0_relative_slope"],
            "wd_family": "the long width-depth family",
            "wd_check": "",
            "wd_shapes": "none",
            "wd_horizon": "none",
            "wd_missing": f"the {compute_class} class has no long width-depth family",
            "wd_params": "none",
            "wd_ratios": "none",
        }
    if "long_wd16/relu/u4/A0" in notes:
        blocks = long_wd16_blocks(compute_class)
        configs = {name.split("-", 1)[1]: next(iter(b.values())) for name, b in blocks.items()}
        looks = max(h.looks for h in LONG_WD16_HORIZONS.values())
        horizon = (
            horizons_text(wd16, {})
            if wd16 is not None and not wd16.empty
            else "each to 16000 tokens per parameter"
        )
        return {
            "wd_deciding": ["long_wd16/relu/u4-xs/A0_relative_slope"],
            "wd_family": (
                "the width-depth family at 16000 tokens per parameter, trained anew, at one "
                "parameter count; a second look, since at 8000 u4's limit was not identified, "
                f"so each shape's equivalence test is Bonferroni-corrected over {looks} looks"
            ),
            "wd_check": "; the family at 8000 (with u2, width/depth 6) is shown, not decided",
            **_shapes_words(configs),
            "wd_horizon": horizon,
            "wd_missing": _unread("long_wd16", notes, at=" at 16000"),
        }
    configs = {"xs": long_configs(compute_class)["size-xs"]} | {
        c.models[0].name: c for c in family.values()
    }
    if "long_wd/relu/u4/A0" not in notes:
        missing = (
            "the long width-depth family is not in data/sparsity_laws/ yet: python -m "
            "scalinglab.studies.sparsity.long_runs run --design wd"
        )
    else:
        missing = _unread("long_wd", notes, at="") + (
            f"; the family at 16000 that would decide it has {wd16_runs_text(wd16_runs)} "
            f"({WD16_COMMAND})"
            if wd16_runs is not None
            else ""
        )
    horizon = (
        horizons_text(wd, {})
        if wd is not None and not wd.empty
        else f"each to {LONG_WD_HORIZON.tokens_per_param:.0f} tokens per parameter"
    )
    return {
        "wd_deciding": ["long_wd/relu/u4-xs/A0_relative_slope"],
        "wd_family": "the long width-depth family at one parameter count and one horizon",
        "wd_check": "; u2's pairs are shown as a check of the linear form",
        **_shapes_words(configs),
        "wd_horizon": horizon,
        "wd_missing": missing,
    }


__all__ = [
    "WD16_COMMAND",
    "WD_PAIR_COLUMNS",
    "wd16_runs_text",
    "wd_claim_values",
    "width_depth_frame",
    "width_depth_limits",
]
