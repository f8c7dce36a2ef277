"""The laws the studies use, with the exact forms and parameter names of
``docs/studies/fitting.md`` and analytic Jacobians: here the training-loss and
activation-sparsity laws; the RL laws (``scalerl``, ``loglinear_kn``,
``exp_saturation``, ``logistic_progress``) are in :mod:`scalinglab.fitting.rl_laws`.

Every model function follows :mod:`scalinglab.fitting.laws`: inputs arrive as
``(n,)`` arrays, internal parameters as ``(S, 1)`` (``(S, G)`` per group), and
the result has shape ``(S, n)``. Positive scale parameters are optimized on the
log scale (``transform="log"``), as Epoch's log-sum-exp Chinchilla fit does.

Default objectives: Huber on log residuals for the loss-like laws
(``chinchilla``, ``power_offset``, ``loglinear_kn``), least squares in linear
space for the bounded ones (pass rates, rewards, activation ratios).
"""

from __future__ import annotations

import numpy as np

from scalinglab.fitting.laws import Law, Param
from scalinglab.fitting.rl_laws import EXP_SATURATION, LOGISTIC_PROGRESS, LOGLINEAR_KN, SCALERL

_TINY = 1e-12


# Bounds are the quantities' physical ranges (a pass rate or an activation ratio lies in
# [0, 1]), never the data's extremes: a hard bound such as "A >= max observed" would pin
# the asymptote to one noisy evaluation and lend the fit precision it does not have.


# --------------------------------------------------------------------------- chinchilla
def _chin_terms(N, D, e, a, b, alpha, beta):
    """The three LSE terms, exponentiated after a shift, and the shift.

    Each term is linear in log N or log D, so its maximum over the data is
    known per start; shifting by the largest of those (one number per start
    instead of an elementwise max) keeps every exponential <= 1 and makes the
    constant term ``e`` a column. Rows where all three terms underflow at some
    point (only for extreme exponents) are redone with an elementwise shift.
    """
    lnN, lnD = np.log(N), np.log(D)
    c1 = a - np.minimum(alpha * lnN.min(), alpha * lnN.max())
    c2 = b - np.minimum(beta * lnD.min(), beta * lnD.max())
    c = np.maximum(np.maximum(c1, c2), e)
    e1 = alpha * lnN
    np.subtract(a - c, e1, out=e1)
    np.exp(e1, out=e1)
    e2 = beta * lnD
    np.subtract(b - c, e2, out=e2)
    np.exp(e2, out=e2)
    s = e1 + e2
    e3 = np.exp(e - c)
    s += e3
    bad = ~np.all(s > 0, axis=1)
    if bad.any():  # elementwise shift for the rare underflowing rows
        t1 = a[bad] - alpha[bad] * lnN
        t2 = b[bad] - beta[bad] * lnD
        m = np.maximum(np.maximum(t1, t2), e[bad])
        e1[bad], e2[bad] = np.exp(t1 - m), np.exp(t2 - m)
        e3 = np.broadcast_to(e3, e1.shape).copy()
        e3[bad] = np.exp(e[bad] - m)
        s[bad] = e1[bad] + e2[bad] + e3[bad]
        c = np.broadcast_to(c, e1.shape).copy()
        c[bad] = m
    return lnN, lnD, c, e1, e2, e3, s


def _chin_fn(N, D, e, a, b, alpha, beta):
    *_, c, e1, e2, e3, s = _chin_terms(N, D, e, a, b, alpha, beta)
    return np.log(s, out=s) + c


def _chin_jac(N, D, e, a, b, alpha, beta):
    lnN, lnD, c, e1, e2, e3, s = _chin_terms(N, D, e, a, b, alpha, beta)
    inv = 1.0 / s
    value = np.log(s, out=s) + c
    e1 *= inv  # softmax weights
    e2 *= inv
    w3 = e3 * inv
    return value, {"e": w3, "a": e1, "b": e2, "alpha": -e1 * lnN, "beta": -e2 * lnD}


def _chin_linearize(p, x, y, groups):
    N, D = x[:, 0], x[:, 1]
    rest_n = y - p["E"] - p["B"] * D ** -p["beta"]
    rest_d = y - p["E"] - p["A"] * N ** -p["alpha"]
    ok_n, ok_d = rest_n > 0, rest_d > 0
    return [
        (
            "log(L - E - B/D^beta) ~ log N",
            np.log(N[ok_n]),
            np.log(rest_n[ok_n]),
            {
                "slope": ("alpha", lambda q: -q["alpha"]),
                "intercept": ("A", lambda q: np.log(q["A"])),
            },
        ),
        (
            "log(L - E - A/N^alpha) ~ log D",
            np.log(D[ok_d]),
            np.log(rest_d[ok_d]),
            {"slope": ("beta", lambda q: -q["beta"]), "intercept": ("B", lambda q: np.log(q["B"]))},
        ),
    ]


CHINCHILLA = Law(
    name="chinchilla",
    formula="L = E + A / N^alpha + B / D^beta  (fitted as log L = LSE(a - alpha log N, b - beta log D, e))",
    x_names=("N", "D"),
    params=(
        Param("E", transform="log", internal="e"),
        Param("A", transform="log", internal="a"),
        Param("B", transform="log", internal="b"),
        Param("alpha"),
        Param("beta"),
    ),
    fn=_chin_fn,
    jac=_chin_jac,
    space="log",
    # Epoch's grid: 5 * 6 * 6 * 5 * 5 = 4,500 starts.
    init={
        "e": [-1.0, -0.5, 0.0, 0.5, 1.0],
        "a": [0.0, 5.0, 10.0, 15.0, 20.0, 25.0],
        "b": [0.0, 5.0, 10.0, 15.0, 20.0, 25.0],
        "alpha": [0.0, 0.5, 1.0, 1.5, 2.0],
        "beta": [0.0, 0.5, 1.0, 1.5, 2.0],
    },
    objective="huber",
    x_positive=(True, True),
    linearize=_chin_linearize,
    description="Chinchilla loss in model size N and tokens D (Epoch's procedure)",
)


# --------------------------------------------------------------------------- power_offset
def _po_jac(x, log_A, alpha, E):
    lx = np.log(x)
    t = np.exp(log_A - alpha * lx)
    return t + E, {"log_A": t, "alpha": -t * lx, "E": np.ones_like(t)}


def _po_fn(x, log_A, alpha, E):
    return np.exp(log_A - alpha * np.log(x)) + E


def _po_init(x, y, groups, n_groups):
    lx_min = float(np.log(np.min(x[:, 0])))
    ymin, ymax = float(np.min(y)), float(np.max(y))
    rows = []
    for alpha in (0.1, 0.25, 0.5, 1.0, 2.0):
        for frac in (0.0, 0.5, 0.9, 0.99):
            E = frac * max(ymin, 0.0)
            rows.append(
                [np.log(max(ymax - E, _TINY + 1e-3 * abs(ymax))) + alpha * lx_min, alpha, E]
            )
    return np.array(rows)


def _po_linearize(p, x, y, groups):
    ok = y > p["E"]
    return [
        (
            "log(y - E) ~ log x",
            np.log(x[ok, 0]),
            np.log(y[ok] - p["E"]),
            {
                "slope": ("alpha", lambda q: -q["alpha"]),
                "intercept": ("A", lambda q: np.log(q["A"])),
            },
        )
    ]


POWER_OFFSET = Law(
    name="power_offset",
    formula="L(x) = A * x^(-alpha) + E",
    x_names=("x",),
    params=(
        Param("A", bounds=(0.0, None), transform="log"),
        Param("alpha", bounds=(0.0, 10.0)),
        Param("E", bounds=(0.0, None)),
    ),
    fn=_po_fn,
    jac=_po_jac,
    init=_po_init,
    objective="huber",
    x_positive=(True,),
    linearize=_po_linearize,
    description="power law with an irreducible term (optimizer-study speedups)",
)


# --------------------------------------------------------------------------- relu_sparsity
def _relu_jac(D, alpha, b, log_c, A0):
    lD = np.log(D)
    u = np.exp(log_c + alpha * lD)
    h = np.exp(b - u)
    return h + A0, {"alpha": -h * u * lD, "b": h, "log_c": -h * u, "A0": np.ones_like(h)}


def _relu_fn(D, alpha, b, log_c, A0):
    return np.exp(b - np.exp(log_c + alpha * np.log(D))) + A0


def _relu_init(x, y, groups, n_groups):
    lD_med = float(np.median(np.log(x[:, 0])))
    ymin, ymed = float(np.min(y)), float(np.median(y))
    rows = []
    for alpha in (0.1, 0.3, 0.6, 1.0):
        for frac in (0.5, 0.9):
            A0 = frac * ymin
            for u in (0.3, 1.0, 3.0):
                rows.append(
                    [alpha, np.log(max(ymed - A0, _TINY)) + u, np.log(u) - alpha * lD_med, A0]
                )
    return np.array(rows)


def _relu_linearize(p, x, y, groups):
    inner = p["b"] - np.log(np.clip(y - p["A0"], _TINY, None))
    ok = (y > p["A0"]) & (inner > 0)
    return [
        (
            "log(b - log(A - A0)) ~ log D",
            np.log(x[ok, 0]),
            np.log(inner[ok]),
            {
                "slope": ("alpha", lambda q: q["alpha"]),
                "intercept": ("c", lambda q: np.log(q["c"])),
            },
        )
    ]


RELU_SPARSITY = Law(
    name="relu_sparsity",
    formula="A(D) = exp(-c D^alpha + b) + A0",
    x_names=("D",),
    params=(
        Param("alpha", bounds=(0.0, 3.0)),
        Param("b"),
        Param("c", bounds=(0.0, None), transform="log"),
        Param("A0", bounds=(0.0, 1.0)),
    ),
    fn=_relu_fn,
    jac=_relu_jac,
    init=_relu_init,
    objective="ls",
    x_positive=(True,),
    linearize=_relu_linearize,
    description="ReLU activation ratio decreasing to A0 with training tokens D",
)


# --------------------------------------------------------------------------- silu_sparsity
def _silu_jac(D, alpha, log_c, A0):
    lD = np.log(D)
    u = np.exp(log_c - alpha * lD)
    return A0 - u, {"alpha": u * lD, "log_c": -u, "A0": np.ones_like(u)}


def _silu_fn(D, alpha, log_c, A0):
    return A0 - np.exp(log_c - alpha * np.log(D))


def _silu_init(x, y, groups, n_groups):
    lD = np.log(x[:, 0])
    ymax, y_first = float(np.max(y)), float(y[np.argmin(lD)])
    rows = []
    for alpha in (0.1, 0.3, 0.6, 1.0):
        for f in (0.02, 0.2, 0.6):
            A0 = ymax + f * (1.0 - ymax)
            rows.append([alpha, np.log(max(A0 - y_first, _TINY)) + alpha * float(lD.min()), A0])
    return np.array(rows)


def _silu_linearize(p, x, y, groups):
    ok = y < p["A0"]
    return [
        (
            "log(A0 - A) ~ log D",
            np.log(x[ok, 0]),
            np.log(p["A0"] - y[ok]),
            {
                "slope": ("alpha", lambda q: -q["alpha"]),
                "intercept": ("c", lambda q: np.log(q["c"])),
            },
        )
    ]


SILU_SPARSITY = Law(
    name="silu_sparsity",
    formula="A(D) = -c D^(-alpha) + A0",
    x_names=("D",),
    params=(
        Param("alpha", bounds=(0.0, 3.0)),
        Param("c", bounds=(0.0, None), transform="log"),
        Param("A0", bounds=(0.0, 1.0)),
    ),
    fn=_silu_fn,
    jac=_silu_jac,
    init=_silu_init,
    objective="ls",
    x_positive=(True,),
    linearize=_silu_linearize,
    description="SiLU activation ratio increasing to A0 with training tokens D",
)

#: Every built-in law, in registration order (:mod:`scalinglab.fitting.registry`).
BUILTIN_LAWS: tuple[Law, ...] = (
    CHINCHILLA,
    POWER_OFFSET,
    SCALERL,
    LOGLINEAR_KN,
    EXP_SATURATION,
    LOGISTIC_PROGRESS,
    RELU_SPARSITY,
    SILU_SPARSITY,
)
