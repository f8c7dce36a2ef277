"""The RL post-training laws, with the forms and parameter names of
``docs/studies/fitting.md`` and analytic Jacobians: ScaleRL's sigmoid in compute
(``scalerl``), Tan et al.'s ``loglinear_kn``, and the two reward-trajectory laws in
training progress (``exp_saturation``, ``logistic_progress``).

Conventions as :mod:`scalinglab.fitting.builtin_laws` (which registers these laws with
the others): inputs ``(n,)``, internal parameters ``(S, 1)`` (``(S, G)`` per group),
results ``(S, n)``; positive scales on the log scale.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from scalinglab.fitting.laws import Law, Param, product_grid

LN10 = float(np.log(10.0))
_TINY = 1e-12


# --------------------------------------------------------------------------- scalerl
def _srl_fn(C, A, B, log_C_mid, R0):
    s = expit(-B * (log_C_mid - np.log(C)))
    return R0 + (A - R0) * s


def _srl_jac(C, A, B, log_C_mid, R0):
    d = log_C_mid - np.log(C)
    s = expit(-B * d)
    ds = -(A - R0) * s * (1.0 - s)  # d value / d z with z = B * d
    return R0 + (A - R0) * s, {"A": s, "B": ds * d, "log_C_mid": ds * B, "R0": 1.0 - s}


def _srl_init(x, y, groups, n_groups):
    lc = np.log(x[:, 0])
    ymax, ymin = float(np.max(y)), float(np.min(y))
    a_vals = [min(ymax + f * (1.0 - ymax), 1.0) for f in (0.05, 0.3, 0.7)]
    c_vals = list(np.quantile(lc, [0.1, 0.5, 0.9])) + [float(lc.max()) + 1.0]
    return product_grid(
        A=a_vals, B=[0.5, 1.0, 2.0, 4.0], log_C_mid=c_vals, R0=[float(np.clip(ymin, 0.0, 1.0))]
    )


def _srl_linearize(p, x, y, groups):
    frac = (y - p["R0"]) / (p["A"] - p["R0"])
    ok = (frac > 0) & (frac < 1)
    return [
        (
            "log((A - R0)/(R - R0) - 1) ~ log C",
            np.log(x[ok, 0]),
            np.log(1.0 / frac[ok] - 1.0),
            {
                "slope": ("B", lambda q: -q["B"]),
                "intercept": ("C_mid", lambda q: q["B"] * np.log(q["C_mid"])),
            },
        )
    ]


SCALERL = Law(
    name="scalerl",
    formula="R(C) = R0 + (A - R0) / (1 + (C_mid / C)^B)",
    x_names=("C",),
    params=(
        Param("A", bounds=(0.0, 1.0)),
        Param("B", bounds=(0.0, None)),
        Param("C_mid", bounds=(0.0, None), transform="log"),
        Param("R0", bounds=(0.0, 1.0)),
    ),
    fn=_srl_fn,
    jac=_srl_jac,
    init=_srl_init,
    objective="ls",
    x_positive=(True,),
    linearize=_srl_linearize,
    description="ScaleRL sigmoid in RL compute (fix R0 to the measured pre-RL value)",
)


# --------------------------------------------------------------------------- loglinear_kn
def _lkn_jac(N, X, Kmax, log_N0, E0, group):
    sig = expit(np.log(N) - log_N0)  # N / (N + N0)
    lX = np.log(X)
    onehot = np.zeros((group.shape[0], E0.shape[1]))
    onehot[np.arange(group.shape[0]), group] = LN10
    val = -Kmax * sig * lX + LN10 * E0[:, group]
    jac = {
        "Kmax": -sig * lX,
        "log_N0": Kmax * sig * (1.0 - sig) * lX,
        "E0": np.broadcast_to(onehot, (val.shape[0], *onehot.shape)),
    }
    return val, jac


def _lkn_fn(N, X, Kmax, log_N0, E0, group):
    return -Kmax * expit(np.log(N) - log_N0) * np.log(X) + LN10 * E0[:, group]


def _lkn_init(x, y, groups, n_groups):
    lN, l10X, l10y = np.log(x[:, 0]), np.log10(x[:, 1]), np.log10(y)
    rows = []
    for kmax in (0.05, 0.2, 0.5, 1.0):
        for ln0 in np.quantile(lN, [0.0, 0.5, 1.0]):
            k = kmax * expit(lN - ln0)
            target = l10y + k * l10X
            e0 = np.bincount(groups, target, n_groups) / np.maximum(
                np.bincount(groups, None, n_groups), 1
            )
            rows.append([kmax, ln0, *e0])
    return np.array(rows)


def _lkn_linearize(p, x, y, groups):
    out = []
    for label, mask in groups.items():
        n_g = float(np.mean(x[mask, 0]))
        out.append(
            (
                f"log L ~ log X, group {label}",
                np.log(x[mask, 1]),
                np.log(y[mask]),
                {
                    "slope": ("Kmax", lambda q, n_g=n_g: -q["Kmax"] * n_g / (n_g + q["N0"])),
                    "intercept": (f"E0[{label}]", lambda q, label=label: LN10 * q[f"E0[{label}]"]),
                },
            )
        )
    return out


LOGLINEAR_KN = Law(
    name="loglinear_kn",
    formula="log10 L = -k(N) log10 X + E0(N),  k(N) = Kmax N / (N + N0)",
    x_names=("N", "X"),
    params=(
        Param("Kmax", bounds=(0.0, None)),
        Param("N0", bounds=(0.0, None), transform="log"),
        Param("E0", per_group=True),
    ),
    fn=_lkn_fn,
    jac=_lkn_jac,
    space="log",
    init=_lkn_init,
    objective="huber",
    x_positive=(True, True),
    group_by_x=0,
    linearize=_lkn_linearize,
    description="RL post-training: L = 1 - pass@1 vs compute/data X, one E0 per group (model size)",
)


# --------------------------------------------------------------------------- exp_saturation
def _exps_jac(t, R0, Rmax, log_lam):
    lam = np.exp(log_lam)
    q = np.exp(-lam * t)
    return R0 + (Rmax - R0) * (1.0 - q), {
        "R0": q,
        "Rmax": 1.0 - q,
        "log_lam": (Rmax - R0) * q * t * lam,
    }


def _exps_fn(t, R0, Rmax, log_lam):
    return R0 + (Rmax - R0) * (1.0 - np.exp(-np.exp(log_lam) * t))


def _span(v: np.ndarray) -> float:
    return max(float(np.max(v) - np.min(v)), _TINY)


def _exps_init(x, y, groups, n_groups):
    t = x[:, 0]
    ymax = float(np.max(y))
    return product_grid(
        R0=[float(y[np.argmin(t)])],
        Rmax=[ymax, ymax + 0.5 * _span(y)],
        log_lam=np.log(np.array([0.3, 1.0, 3.0, 10.0]) / _span(t)),
    )


EXP_SATURATION = Law(
    name="exp_saturation",
    formula="R(t) = R0 + (Rmax - R0) (1 - exp(-lam t))",
    x_names=("t",),
    params=(Param("R0"), Param("Rmax"), Param("lam", bounds=(0.0, None), transform="log")),
    fn=_exps_fn,
    jac=_exps_jac,
    init=_exps_init,
    objective="ls",
    x_positive=(False,),
    description="GRPO reward trajectory, exponential saturation (our parametrisation)",
)


# --------------------------------------------------------------------------- logistic_progress
def _logi_jac(t, R0, Rmax, log_kappa, t0):
    kappa = np.exp(log_kappa)
    s = expit(kappa * (t - t0))
    ds = (Rmax - R0) * s * (1.0 - s)
    return R0 + (Rmax - R0) * s, {
        "R0": 1.0 - s,
        "Rmax": s,
        "log_kappa": ds * (t - t0) * kappa,
        "t0": -ds * kappa,
    }


def _logi_fn(t, R0, Rmax, log_kappa, t0):
    return R0 + (Rmax - R0) * expit(np.exp(log_kappa) * (t - t0))


def _logi_init(x, y, groups, n_groups):
    t = x[:, 0]
    ymax = float(np.max(y))
    return product_grid(
        R0=[float(np.min(y))],
        Rmax=[ymax, ymax + 0.25 * _span(y)],
        log_kappa=np.log(np.array([2.0, 5.0, 10.0, 20.0]) / _span(t)),
        t0=np.quantile(t, [0.25, 0.5, 0.75]),
    )


LOGISTIC_PROGRESS = Law(
    name="logistic_progress",
    formula="R(t) = R0 + (Rmax - R0) / (1 + exp(-kappa (t - t0)))",
    x_names=("t",),
    params=(
        Param("R0"),
        Param("Rmax"),
        Param("kappa", bounds=(0.0, None), transform="log"),
        Param("t0"),
    ),
    fn=_logi_fn,
    jac=_logi_jac,
    init=_logi_init,
    objective="ls",
    x_positive=(False,),
    description="GRPO reward trajectory, logistic in training progress (our parametrisation)",
)
