"""The plateau stopping rule and the learning-rate stage's selection, on hand-made curves."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as sps

from scalinglab.studies.rl.lr_stage import lr_scores, lr_stage_dataset, select_lr
from scalinglab.studies.rl.stopping import PlateauRule, plateaued, should_stop, window_gain

STEPS = np.arange(0, 1001, 25)
C = STEPS * 1e9  # compute proportional to steps


def _rising(steps):
    return 0.03 + 0.6 * steps / 1000.0


def _plateau(steps):  # rises by step 300, flat after
    return 0.03 + 0.6 * np.minimum(steps / 300.0, 1.0)


def test_window_gain_of_a_line_is_slope_times_span_with_no_noise():
    gain, se, n = window_gain(C, _rising(STEPS), window_frac=0.2)
    assert n == 9  # steps 800..1000
    assert gain == pytest.approx(0.6 * 0.2) and se == pytest.approx(0.0, abs=1e-12)
    nan_gain, _, n2 = window_gain(C[:2], _rising(STEPS[:2]))
    assert np.isnan(nan_gain) and n2 == 1
    with pytest.raises(ValueError, match="same length"):
        window_gain(C, _rising(STEPS)[:-1])


def test_plateau_needs_min_steps_a_take_off_and_a_flat_window():
    rule = PlateauRule(min_steps=400)
    y = _plateau(STEPS)
    k = int(np.searchsorted(STEPS, 600)) + 1  # evaluations up to step 600: flat window
    assert plateaued(STEPS[:k], C[:k], y[:k], rule)
    k350 = int(np.searchsorted(STEPS, 350)) + 1
    assert not plateaued(STEPS[:k350], C[:k350], y[:k350], rule)  # before min_steps
    assert not plateaued(STEPS, C, _rising(STEPS), rule)  # still climbing
    flat_low = np.full(STEPS.shape, 0.03)  # never took off: a slow start, not a plateau
    assert not plateaued(STEPS, C, flat_low, rule)


def test_noisy_window_is_within_noise_but_a_clear_rise_is_not():
    rng = np.random.default_rng(0)
    rule = PlateauRule(min_steps=0, tol=0.0)
    noisy = 0.6 + rng.normal(0, 0.02, STEPS.size)
    noisy[0] = 0.03
    assert plateaued(STEPS, C, noisy, rule)
    assert not plateaued(STEPS, C, _rising(STEPS) + rng.normal(0, 0.002, STEPS.size), rule)


def test_should_stop_waits_for_patience_consecutive_plateaus():
    rule = PlateauRule(min_steps=400, patience=3)
    y = _plateau(STEPS)
    first = next(k for k in range(1, STEPS.size + 1) if plateaued(STEPS[:k], C[:k], y[:k], rule))
    assert not should_stop(STEPS[:first], C[:first], y[:first], rule)
    assert should_stop(STEPS[: first + 2], C[: first + 2], y[: first + 2], rule)
    with pytest.raises(ValueError, match="window_frac"):
        PlateauRule(window_frac=1.0)


def _result(rates):
    return SimpleNamespace(
        pass_rate=np.asarray(rates, float), eval_flops=np.linspace(0, 1, len(rates))
    )


def test_select_lr_takes_the_best_end_of_run_rate_ties_to_the_smaller():
    sweep = SimpleNamespace(
        lr_grid=(0.5, 1.0, 2.0),
        lr_seeds=(0, 1),
        lr_last=2,
        sizes=(SimpleNamespace(name="a"),),
        eval_every=1,
        lr_steps=3,
        rule_lr=lambda s: 1e-3,
    )
    res = {
        (0, 0.5, 0): _result([0, 0.1, 0.2, 0.3]),
        (0, 0.5, 1): _result([0, 0.1, 0.2, 0.3]),
        (0, 1.0, 0): _result([0, 0.5, 0.6, 0.2]),  # fast, then collapses: loses
        (0, 1.0, 1): _result([0, 0.5, 0.1, 0.1]),
        (0, 2.0, 0): _result([0, 0.1, 0.2, 0.3]),
    }  # one seed failed
    scores = lr_scores(sweep, res, 0)
    assert scores[0.5] == pytest.approx(0.25) and scores[1.0] == pytest.approx(0.25)
    assert select_lr(sweep, res, 0) == 0.5  # tie: the smaller multiplier
    res[(0, 2.0, 1)] = _result([0, 0.4, 0.5, 0.6])
    assert select_lr(sweep, res, 0) == 2.0
    assert select_lr(sweep, {}, 0) == 1.0  # nothing finished: the width rule
    ds = lr_stage_dataset(sweep, res)
    assert ds.lr_pass_rate.dims == ("model_size", "lr_mult", "lr_seed", "lr_eval")
    assert ds.lr_eval_step.values.tolist() == [0, 1, 2, 3]
    assert float(ds.lr_score.sel(model_size="a", lr_mult=2.0)) == pytest.approx(0.4)


def test_run_outcomes_flags_declines_and_collapses():
    import pandas as pd

    from scalinglab.studies.rl.stopping import run_outcomes

    def run(seed, rates):
        return pd.DataFrame(
            {
                "model_size": "s",
                "variant": "baseline",
                "seed": seed,
                "step": np.arange(len(rates)) * 25,
                "pass_rate": rates,
            }
        )

    curves = pd.concat(
        [
            run(0, [0.05, 0.3, 0.6, 0.62, 0.61]),  # plateau: neither
            run(1, [0.05, 0.3, 0.6, 0.55, 0.45]),  # 0.15 below its peak: declined
            run(2, [0.05, 0.2, 0.1, 0.03, 0.0]),  # back below R0: declined and collapsed
        ]
    )
    out = run_outcomes(curves).set_index("seed")
    assert out["declined"].tolist() == [False, True, True]
    assert out["collapsed"].tolist() == [False, False, True]
    assert out.loc[1, "peak"] == 0.6 and out.loc[1, "peak_step"] == 50
    assert out.loc[2, "last_step"] == 100 and out.loc[2, "R0"] == 0.05


def test_select_lr_excludes_a_multiplier_under_which_a_run_collapsed():
    from scalinglab.studies.rl.lr_stage import lr_collapses

    sweep = SimpleNamespace(lr_grid=(0.5, 1.0), lr_seeds=(0, 1), lr_last=2)
    res = {
        (0, 0.5, 0): _result([0.04, 0.1, 0.2, 0.3]),
        (0, 0.5, 1): _result([0.04, 0.1, 0.2, 0.3]),
        (0, 1.0, 0): _result([0.04, 0.5, 0.8, 0.9]),  # the best end by far ...
        (0, 1.0, 1): _result([0.04, 0.01, 0.0, 0.0]),  # ... but this seed collapsed
    }
    assert lr_collapses(sweep, res, 0) == {0.5: 0, 1.0: 1}
    assert lr_scores(sweep, res, 0)[1.0] > lr_scores(sweep, res, 0)[0.5]
    assert select_lr(sweep, res, 0) == 0.5
    # a run still at its R0 (a slow start) is not a collapse
    res[(0, 1.0, 1)] = _result([0.04, 0.03, 0.04, 0.05])
    assert lr_collapses(sweep, res, 0)[1.0] == 0 and select_lr(sweep, res, 0) == 1.0
    # every multiplier collapsed somewhere: the best score among all of them
    res[(0, 1.0, 1)] = _result([0.04, 0.01, 0.0, 0.0])
    res[(0, 0.5, 1)] = _result([0.04, 0.01, 0.0, 0.0])
    assert select_lr(sweep, res, 0) == 1.0


def test_plateau_onset_is_where_the_rule_would_have_stopped():
    from scalinglab.studies.rl.stopping import plateau_onset

    rule = PlateauRule(min_steps=400, patience=3)
    y = _plateau(STEPS)
    k = plateau_onset(STEPS, C, y, rule)
    assert k >= 0 and should_stop(STEPS[: k + 1], C[: k + 1], y[: k + 1], rule)
    assert not should_stop(STEPS[:k], C[:k], y[:k], rule)
    assert plateau_onset(STEPS, C, _rising(STEPS), rule) == -1


def _curves(runs):
    import pandas as pd

    return pd.concat(
        pd.DataFrame(
            {
                "model_size": "s",
                "variant": "baseline",
                "seed": seed,
                "step": steps,
                "compute": steps * 1e9,
                "pass_rate": rates,
            }
        )
        for seed, (steps, rates) in enumerate(runs)
    )


def test_gain_after_plateau_from_runs_that_continued_past_their_onset():
    from scalinglab.studies.rl.stopping import gain_after_plateau, plateau_onset, run_outcomes

    rule = PlateauRule(min_steps=400)
    flat = _plateau(STEPS)
    onset = plateau_onset(STEPS, C, flat, rule)
    # a false plateau: flat at 0.33 from step 300 to 700 (noise-free), then a second rise
    second = np.where(STEPS < 700, 0.03 + 0.3 * np.minimum(STEPS / 300, 1), 0.33)
    second = second + np.clip((STEPS - 700) / 300, 0, 1) * 0.3
    stopped = (STEPS[: onset + 1], flat[: onset + 1])  # a run the rule stopped at its onset
    out = run_outcomes(
        _curves([(STEPS, flat), (STEPS, second), stopped, (STEPS, _rising(STEPS))]), rule=rule
    ).set_index("seed")
    assert out.loc[0, "plateau_step"] == STEPS[onset]
    assert out.loc[0, "gain_after_plateau"] == pytest.approx(0.0, abs=1e-12)
    # the end: the mean of the 3 evaluations before the last (the scope rule judges the last)
    rise = 0.3 * np.mean([225, 250, 275]) / 300
    assert out.loc[1, "gain_after_plateau"] == pytest.approx(rise, abs=1e-9)
    assert out.loc[2, "plateau_step"] == STEPS[onset]  # fired at its last evaluation ...
    assert np.isnan(out.loc[2, "gain_after_plateau"])  # ... so nothing after it is known
    assert np.isnan(out.loc[3, "plateau_step"])  # still climbing: no plateau
    g = gain_after_plateau(out.reset_index())
    assert (g["n_runs"], g["n_plateau"], g["n_total"]) == (2, 3, 4)
    assert np.isnan(g["mean"]) and g["share_gaining"] == 0.5  # fewer than 3 runs: no mean
    many = _curves([(STEPS, flat + d) for d in (0.0, 0.01, 0.02)] + [(STEPS, second)])
    g = gain_after_plateau(run_outcomes(many, rule=rule))
    assert g["mean"] == pytest.approx(rise / 4, abs=1e-9)
    assert g["ci"][0] <= g["mean"] <= g["ci"][1] and g["ci"][1] > g["ci"][0]
    # Student t over the 4 runs' gains (0, 0, 0, rise): a percentile bootstrap of 4
    # values would be narrower than it covers
    gains = np.array([0.0, 0.0, 0.0, rise])
    half = sps.t.ppf(0.975, 3) * gains.std(ddof=1) / 2
    assert g["ci"] == pytest.approx((gains.mean() - half, gains.mean() + half))


def test_run_outcomes_tells_a_collapse_from_a_run_that_never_took_off():
    from scalinglab.studies.rl.stopping import run_outcomes

    steps = np.arange(5) * 25
    out = run_outcomes(
        _curves(
            [
                (steps, [0.04, 0.05, 0.04, 0.05, 0.04]),  # slow start: not taken off
                (steps, [0.04, 0.01, 0.0, 0.0, 0.0]),  # fell below half its R0
                (steps, [0.04, 0.3, 0.2, 0.1, 0.04]),  # took off, then back to R0
            ]
        )
    ).set_index("seed")
    assert out["took_off"].tolist() == [False, False, True]
    assert out["collapsed"].tolist() == [False, True, True]


def test_a_conservative_keep_takes_the_smallest_stable_rate_near_the_best_gain():
    sweep = SimpleNamespace(lr_grid=(0.25, 0.5, 1.0), lr_seeds=(0,), lr_last=1, lr_keep=0.8)
    res = {
        (0, 0.25, 0): _result([0.05, 0.20]),  # gain 0.15
        (0, 0.5, 0): _result([0.05, 0.30]),  # gain 0.25: 83% of the best
        (0, 1.0, 0): _result([0.05, 0.35]),  # gain 0.30: the best end
    }
    assert select_lr(sweep, res, 0) == 0.5
    assert select_lr(SimpleNamespace(**{**vars(sweep), "lr_keep": 1.0}), res, 0) == 1.0
    assert select_lr(SimpleNamespace(**{**vars(sweep), "lr_keep": 0.9}), res, 0) == 1.0
    assert select_lr(SimpleNamespace(**{**vars(sweep), "lr_keep": 0.5}), res, 0) == 0.25


def test_a_slow_start_is_not_a_plateau_and_base_models_are_the_units():
    from scalinglab.studies.rl.stopping import EquivalenceRule, gain_after_plateau, run_outcomes

    rule = EquivalenceRule(min_steps=400)
    # flat at R0 until step 500 (a slow start), then a rise to a plateau
    late = np.where(STEPS < 500, 0.03, 0.03 + 0.5 * np.minimum((STEPS - 500) / 200, 1))
    out = run_outcomes(_curves([(STEPS, late)]), rule=rule)
    assert out.loc[0, "plateau_step"] >= 700  # the rule's min_gain: judged once it took off
    # two base models with 3 runs each: the interval is over the 2 model means
    many = _curves([(STEPS, _plateau(STEPS) + d) for d in (0.0, 0.01, 0.02, 0.03, 0.04, 0.05)])
    out = run_outcomes(many, rule=rule)
    out["warm_start"] = [0, 0, 0, 1, 1, 1]
    out["gain_after_plateau"] = [0.0, 0.0, 0.03, 0.1, 0.1, 0.13]
    g = gain_after_plateau(out)
    assert g["n_runs"] == 6 and g["n_units"] == 2 and np.isnan(g["mean"])  # 2 units: none
    out["warm_start"] = [0, 0, 1, 1, 2, 2]
    g = gain_after_plateau(out)
    means = np.array([0.0, 0.065, 0.115])
    half = sps.t.ppf(0.975, 2) * means.std(ddof=1) / np.sqrt(3)
    assert g["mean"] == pytest.approx(means.mean())
    assert g["ci"] == pytest.approx((means.mean() - half, means.mean() + half))
