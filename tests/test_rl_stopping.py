"""The plateau stopping rule and the learning-rate stage's selection, on hand-made curves."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

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
