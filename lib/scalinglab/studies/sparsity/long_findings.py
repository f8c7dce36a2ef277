"""Findings of the sparsity study's long size design (section 8d): its runs as one frame
with each seed's machine and passes over the corpus, their provenance and seed blocks,
each size's limit (:func:`.long_limits.group_limits`, the limit rule) and the size pairs
compared on identified limits, with the repetition confound each pair carries; the words
the claims read (horizons, sizes, parameters). Intervals over seeds are Student t
(:mod:`.seed_means`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from scalinglab.estimate import Estimate
from scalinglab.studies.sparsity import analysis as sa
from scalinglab.studies.sparsity import limits as slim
from scalinglab.studies.sparsity import seed_means
from scalinglab.studies.sparsity import trends as strd
from scalinglab.studies.sparsity.long_limits import group_limits, pair_estimate
from scalinglab.studies.sparsity.steps import Named, Step


def long_frame(long: Mapping[str, xr.Dataset], *, min_ffn_gain: float) -> pd.DataFrame | None:
    """The long design's runs as one curves frame (None when it is not run), with a
    ``looks`` column: the looks each size's limit rule is corrected over (the Dataset's
    ``plateau_looks``, set by :func:`~scalinglab.studies.sparsity.long_runs.cached_long`;
    1 when absent), and ``looks_why``, why (its ``plateau_looks_why``, else "as seeds
    were added")."""
    if not long:
        return None
    frames = []
    for d in long.values():
        f = sa.curves_frame(d, min_ffn_gain=min_ffn_gain)
        corpus = float(d.attrs.get("corpus_train_tokens", np.nan))
        machine_of = {
            int(sd): _machine(b.get("train_machine")) for b in _seed_blocks(d) for sd in b["seeds"]
        }
        f = f.assign(
            looks=int(d.attrs.get("plateau_looks", 1)),
            looks_why=str(d.attrs.get("plateau_looks_why", "as seeds were added")),
            passes=f["tokens"] / corpus,
            machine=[machine_of[int(sd)] for sd in f["seed"]],
        )
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def _seed_blocks(d: xr.Dataset) -> list[dict]:
    """A long-design Dataset's seed blocks (its ``seed_blocks`` attribute: seeds, config
    hash and training machine of each block), or the Dataset itself as one block."""
    blocks = json.loads(d.attrs.get("seed_blocks") or "null")
    return blocks or [
        {
            "seeds": [int(v) for v in d["seed"].values],
            "config_hash": d.attrs.get("config_hash"),
            "train_machine": d.attrs.get("train_machine"),
        }
    ]


def _machine(info: str | None) -> str:
    """Where a block was trained, in words: its GPU's name, else this project's CPU."""
    if not info:
        return "the project's CPU machine"
    return json.loads(info).get("cuda_device") or "a CPU"


def block_checks(ldf: pd.DataFrame, *, level: float) -> Step:
    """Whether a size's seeds trained on two machines (seed blocks of separate calls)
    differ: per (activation, size) whose seeds come from two machines (``machine`` of
    :func:`long_frame`), the mean of the seeds of the machine the first seed used minus
    that of the other's, of the per-seed relative last-decade trend and of the per-seed
    level over the last decade, each a Welch t interval at a Bonferroni level over every
    check made (``1 - (1 - level) / checks``). An interval that excludes 0 says the
    machines' seeds differ beyond seed noise, so pooling them mixes two populations.

    Returns
    -------
    Step
        Findings ``long/<act>/<model>/blocks/{trend,level}_difference``; ``table`` one
        row per check. Empty when no size's seeds come from two machines.
    """
    out = Step()
    if "machine" not in ldf:
        return out
    groups = [
        (str(a), str(m), g)
        for (a, m), g in ldf.groupby(["activation", "model"], sort=False)
        if g["machine"].nunique() == 2
    ]
    checks = 2 * len(groups)
    rows = []
    words = {
        "trend": "relative last-decade trend (fraction of the level per decade)",
        "level": "mean ratio over the last decade",
    }
    for act, model, g in groups:
        late = slim.own_last_decade(g)
        rel = strd.relative_slopes(late, x="tokens_per_param").set_index("seed")["relative"]
        level_of = slim.plateau_levels(g)
        machine = g.groupby("seed")["machine"].first()
        first, other = machine.iloc[0], next(v for v in machine if v != machine.iloc[0])
        for what, per_seed in (("trend", rel), ("level", level_of)):
            parts = [
                per_seed[(machine[per_seed.index] == k).to_numpy()].to_numpy(float)
                for k in (first, other)
            ]
            est = seed_means.welch_estimate(
                parts,
                lambda m: float(m[1] - m[0]),
                level=1 - (1 - level) / checks,
                method=f"Welch t over the two blocks' seeds, Bonferroni over {checks} checks",
            )
            name = f"long/{act}/{model}/blocks/{what}_difference"
            out.findings.append(
                Named(
                    name,
                    est,
                    f"{act}, model {model}: seeds trained on {other} ({parts[1].size}) minus "
                    f"those on {first} ({parts[0].size}), {words[what]}",
                )
            )
            rows.append({"check": name, "difference": str(est), "method": est.method})
    out.table = pd.DataFrame(rows, columns=["check", "difference", "method"])
    return out


#: A size pair whose two sizes passed the training corpus more than this many times as
#: often as each other reads the limit's change with size confounded by repetition (it
#: moves with size), so a size claim resting on it is a proxy (:func:`repetition_confounded`).
PASSES_CONFOUND = 2.0


def end_passes(ldf: pd.DataFrame) -> dict[str, float]:
    """Passes over the training corpus each size's runs reach (``passes`` of
    :func:`long_frame`; NaN when its Dataset does not record the corpus size)."""
    if "passes" not in ldf:
        return {str(m): float("nan") for m in ldf["model"].unique()}
    return {str(m): float(v) for m, v in ldf.groupby("model")["passes"].max().items()}


def repetition_confounded(pair: str, passes: Mapping[str, float]) -> bool:
    """Whether size pair ``"<small>-<large>"`` passed the corpus more than
    :data:`PASSES_CONFOUND` times as often in one size as in the other (unknown passes:
    not confounded, as nothing says so)."""
    sizes = pair.split("-")
    if len(sizes) != 2:  # "none": no pair
        return False
    a, b = (passes.get(m, float("nan")) for m in sizes)
    return bool(np.isfinite(a) and np.isfinite(b) and max(a, b) > PASSES_CONFOUND * min(a, b))


def long_provenance(long: Mapping[str, xr.Dataset], *, compact_over: int = 3) -> str:
    """Per long-design size: how many runs are ok, and per seed block its seeds, where it
    was trained (the GPU's name, or this project's CPU) and its config hash.

    A size of more than ``compact_over`` blocks (one block a seed, as the 16000 family)
    is summarised per machine and commit instead: its seeds, the number of blocks (each
    its own config hash, in its file's name) and the commit they were trained at.
    """
    lines = []
    for name, d in long.items():
        blocks = _seed_blocks(d)
        if len(blocks) <= compact_over:
            parts = [
                f"seeds {_seed_span(b['seeds'])} on {_machine(b.get('train_machine'))} "
                f"(config {b.get('config_hash')})"
                for b in blocks
            ]
        else:
            groups: dict[tuple[str, str], list[dict]] = {}
            for b in blocks:
                key = (_machine(b.get("train_machine")), str(b.get("git_commit") or "?")[:7])
                groups.setdefault(key, []).append(b)
            parts = [
                f"seeds {_seed_span(sorted(sd for b in g for sd in b['seeds']))} on {machine} "
                f"({len(g)} block{'s' * (len(g) != 1)}, a config hash each, trained at {commit})"
                for (machine, commit), g in groups.items()
            ]
        ok = int((d["status"] == "ok").sum())
        lines.append(f"{name}: {ok} runs ok; " + "; ".join(parts))
    return "\n".join(lines)


def _seed_span(seeds: list[int]) -> str:
    """``[0, 1, 2]`` as ``"0-2"`` when consecutive, else comma-separated."""
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def horizons_text(
    ldf: pd.DataFrame | None,
    fallback: Mapping[str, tuple[float, int]],
    *,
    design: Mapping[str, tuple[float, int]] | None = None,
) -> str:
    """Each size's horizon and seeds in words, from the long design's runs (``ldf``), else
    from ``fallback`` (``{model: (tokens per parameter, seeds)}``, the design's configs):
    e.g. ``"s to 2000 tokens per parameter (5 seeds), m to 500 (3 seeds)"``, each with the
    passes over the training corpus its runs reach when ``ldf`` records them
    (:func:`end_passes`: ``"(5 seeds, 3.7 passes over the corpus)"``). A size whose
    runs stop short of its horizon in ``design`` (same form) says so: the runs read are
    those of the horizon the design extends, until its own are trained."""
    passes: dict[str, float] = {}
    if ldf is not None and not ldf.empty:
        g = ldf.groupby("model", sort=False)
        have = {
            m: (
                float(g.get_group(m)["tokens_per_param"].max()),
                int(g.get_group(m)["seed"].nunique()),
            )
            for m in g.groups
        }
        order = ldf.groupby("model")["n_params"].first().sort_values().index
        items = [(m, *have[m]) for m in order]
        passes = {m: p for m, p in end_passes(ldf).items() if np.isfinite(p)}
    else:
        items = [(m, *v) for m, v in fallback.items()]
    parts = []
    for k, (m, tpp, n) in enumerate(items):
        text = f"{m} to {tpp:.0f}" + (" tokens per parameter" if k == 0 else "") + f" ({n} seeds"
        if m in passes:
            text += f", {passes[m]:.1f} passes" + (" over the corpus" if k == 0 else "")
        target = (design or {}).get(m)
        if target is not None and tpp < 0.99 * target[0]:
            text += f"; the design's {target[0]:.0f} not yet trained"
        parts.append(text + ")")
    shown = {m for m, _, _ in items}
    for m, (tpp, _) in (design or {}).items():
        if m not in shown:
            parts.append(f"{m} not yet trained (the design's {tpp:.0f})")
    return ", ".join(parts)


def params_text(n: float) -> str:
    """A parameter count in words: ``3376`` -> ``"3.4k"``, ``25248`` -> ``"25k"``."""
    return f"{n / 1e3:.2g}k" if n < 1e6 else f"{n / 1e6:.2g}M"


def sizes_text(ldf: pd.DataFrame | None, fallback: Mapping[str, float]) -> str:
    """The long design's sizes in words, smallest first, from its runs (``ldf``), else
    from ``fallback`` (``{model: non-embedding parameters}``, the design's configs): e.g.
    ``"sizes xs, s and m (3.4k, 25k and 83k non-embedding parameters)"``."""
    if ldf is not None and not ldf.empty:
        n = ldf.groupby("model")["n_params"].first().sort_values()
        have = {str(m): float(v) for m, v in n.items()}
    else:
        have = dict(sorted(fallback.items(), key=lambda kv: kv[1]))

    def words(xs: list[str]) -> str:
        return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]

    label = "size" if len(have) == 1 else "sizes"
    counts = words([params_text(v) for v in have.values()])
    return f"{label} {words(list(have))} ({counts} non-embedding parameters)"


def long_design(
    ldf: pd.DataFrame,
    *,
    min_trend: Mapping[str, float],
    reps: int,
    level: float,
    seed: int,
    coverage_sims: int | None = None,
) -> Step:
    """Section 8d: the long design's laws per size, each limit by the limit rule
    (:func:`.limits.decide_limit`: the law's identified ``A0``, else a plateau shown flat
    over the size's own last decade by an equivalence test at ``min_trend[activation]``,
    else not identified), each size's relative last-decade trend and their mean, the
    held-out loss change over each size's last decade, and the limit's change per 10x
    parameters between every pair of sizes whose limits are identified
    (:func:`size_comparisons`).

    A limit by the law route states its number of runs as ``n`` and the coverage of its
    group bootstrap over runs, simulated on these runs (:func:`.run_coverage.group_coverage`,
    ``coverage_sims`` simulated experiments (default ``min(reps, 200)``) of ``min(reps, 200)``
    refits each).

    ``extra["limits"]``: one row per (activation, model) with the route and its reasons;
    ``extra["pairs"]``: one row per (activation, size pair) compared.
    """
    out = Step()
    lim = group_limits(
        ldf, min_trend=min_trend, reps=reps, level=level, seed=seed, coverage_sims=coverage_sims
    )
    out.findings += lim.findings
    out.messages += lim.messages
    decided = lim.extra["decided"]
    for model, g in ldf.groupby("model", sort=False):
        out.findings += [
            Named(
                f"long/{model}/tokens_per_param",
                Estimate(
                    float(g["tokens_per_param"].max()),
                    method="the runs' last checkpoint (the design's horizon for this size)",
                ),
                f"model {model}: tokens per non-embedding parameter its runs reach",
                unit="tokens per parameter",
            ),
            Named(
                f"long/{model}/seeds",
                Estimate(float(g["seed"].nunique()), method="seeds with finished runs"),
                f"model {model}: seeds per activation",
                unit="seeds",
            ),
        ]
    for act, g in ldf.groupby("activation", sort=False):
        try:
            est = slim.last_decade_trend(g, level=level)
        except ValueError as err:
            out.messages.append(f"long/{act}: no last-decade trend ({err})")
            continue
        out.findings.append(
            Named(
                f"long/{act}/trend/relative_last_decade",
                est,
                f"{act}: slope over each size's own last decade of tokens per parameter "
                "over the run's mean ratio there, mean over sizes (each size's window is its "
                "own last decade, so sizes with different horizons average different windows)",
                unit="fraction of the level per 10x tokens",
            )
        )
    pairs = []
    for act in ("relu", "silu"):
        step = size_comparisons(
            ldf[ldf["activation"] == act],
            decided,
            act=act,
            level=level,
            seed=seed,
            coverage_sims=coverage_sims or min(reps, 200),
            coverage_reps=min(reps, 200),
        )
        out.findings += step.findings
        out.messages += step.messages
        pairs.append(step.table)
    out.extra["pairs"] = pd.concat(pairs, ignore_index=True)
    out.table = lim.table
    out.extra["limits"] = lim.extra["limits"]
    return out


#: The columns of :func:`size_comparisons`' table.
PAIR_COLUMNS = [
    "activation",
    "pair",
    "routes",
    "decades of parameters",
    "A0 change per 10x parameters (fraction of the mean)",
    "method",
]


def size_comparisons(
    ldf: pd.DataFrame,
    decided: Mapping[tuple[str, str], tuple[str, Any, float]],
    *,
    act: str,
    level: float,
    seed: int,
    coverage_sims: int = 0,
    coverage_reps: int = 200,
) -> Step:
    """The identified limits of one activation compared between every pair of sizes.

    Parameters
    ----------
    ldf
        The long design's curves of ``act`` (every size, for the horizons in words).
    decided
        ``{(activation, model): (route, evidence, n_params)}`` of the sizes whose limit
        is identified (route ``law`` with its fit, ``plateau`` with its per-seed levels);
        a size left out has no identified limit and enters no comparison.
    act
        The activation.
    level, seed
        The intervals' level; the seed of a mixed-route bootstrap.
    coverage_sims, coverage_reps
        A pair of two law limits states its interval's coverage simulated on these runs
        (:func:`.run_coverage.pair_coverage`: ``coverage_sims`` simulated experiments of
        ``coverage_reps`` refits per size), a pair of two plateaus on their seeds' levels
        (:func:`.run_coverage.plateau_pair_coverage`, 10x as many experiments); 0
        simulates none (:func:`.long_limits.pair_estimate`).

    Returns
    -------
    Step
        One finding ``long/<act>/scale/<small>-<large>/A0_relative_slope`` per pair of
        identified sizes, smallest first (:func:`.limits.size_pair_slope`); ``table``
        (:data:`PAIR_COLUMNS`), one row per pair. Each interval is at ``level`` on its own;
        the claim read on several pairs (SPARSE-5) corrects for their number (Holm, in
        the claims ledger) and holds only when every pair does. No finding when fewer
        than two sizes are identified (a message says so).
    """
    out = Step()
    have = sorted(
        ((float(v[2]), m) for (a, m), v in decided.items() if a == act), key=lambda t: t[0]
    )
    models = [m for _, m in have]
    rows = []
    if len(models) < 2:
        out.messages.append(
            f"long/{act}: identified limits at {len(models)} size(s) "
            f"({', '.join(models) or 'none'}); the size claim needs two"
        )
    k = len(models) * (len(models) - 1) // 2
    use = ldf[ldf["usable"]]
    for i, small in enumerate(models):
        for large in models[i + 1 :]:
            a, b = decided[(act, small)], decided[(act, large)]
            est = pair_estimate(
                a,
                b,
                (use[use["model"] == small], use[use["model"] == large]),
                level=level,
                seed=seed,
                coverage_sims=coverage_sims,
                coverage_reps=coverage_reps,
            )
            routes = f"{a[0]}-{b[0]}"
            decades = float(np.log10(b[2] / a[2]))
            both = ldf[ldf["model"].isin([small, large])]
            horizons = horizons_text(both, {})
            tpp = both.groupby("model")["tokens_per_param"].max()
            same = bool(np.isclose(tpp.min(), tpp.max(), rtol=0.01))
            passes = end_passes(both)
            reps_text = (
                f"; {small} passed the corpus {passes[small]:.1f} times, {large} "
                f"{passes[large]:.1f}"
                if all(np.isfinite(v) for v in passes.values())
                else ""
            )
            out.findings.append(
                Named(
                    f"long/{act}/scale/{small}-{large}/A0_relative_slope",
                    est,
                    f"{act}: change of the identified limit from {small} ({a[0]}) to {large} "
                    f"({b[0]}) over its mean, per 10x parameters ({decades:.2f} decades "
                    f"apart); one of {k} size pair(s) with identified limits (the claim "
                    f"corrects for them); the sizes' horizons "
                    f"{'are the same' if same else 'differ'} ({horizons}){reps_text}",
                    unit="fraction of the limit per 10x parameters",
                )
            )
            rows.append(
                {
                    "activation": act,
                    "pair": f"{small}-{large}",
                    "routes": routes,
                    "decades of parameters": decades,
                    "A0 change per 10x parameters (fraction of the mean)": str(est),
                    "method": est.method,
                }
            )
    out.table = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    return out


__all__ = [
    "PASSES_CONFOUND",
    "block_checks",
    "end_passes",
    "horizons_text",
    "long_design",
    "long_frame",
    "long_provenance",
    "params_text",
    "repetition_confounded",
    "size_comparisons",
    "sizes_text",
]
