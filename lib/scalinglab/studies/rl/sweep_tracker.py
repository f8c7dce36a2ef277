"""Progress of a long RL sweep: a bar weighted by each run's estimated cost, and an ETA.

The runs of a sweep differ in cost by 10x and more (a 788k-parameter policy's step
costs about 12 times a 25k one's), so a bar counting runs would mislead. A
:class:`RunTracker` is told every run the sweep plans (its stage, its size, and
whether a finished copy is already stored), weighs each by its estimated seconds
(:mod:`scalinglab.studies.rl.budget`), and when a run ends moves a tqdm bar by that
run's estimate and logs one line: the run's measured seconds against its estimate,
the runs done, and the ETA, the estimated seconds still to run scaled by the ratio
of measured to estimated seconds so far (the machine's load, as it is now), stage by
stage (a warm-up's estimate and a GRPO run's can be off by different factors).
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from scalinglab.studies.rl.budget import run_seconds


class RunTracker:
    """Progress bar and ETA of a sweep's runs (see the module docstring).

    Parameters
    ----------
    sweep
        The :class:`~scalinglab.studies.rl.config.RLSweepConfig`.
    costs
        Seconds per size (:func:`~scalinglab.studies.rl.budget.costs_from_runs` or
        :func:`~scalinglab.studies.rl.budget.measure_costs`).
    file
        Where the bar and the log lines go (stderr).
    bar
        Show the tqdm bar (the log lines are always written).
    """

    def __init__(self, sweep: Any, costs: dict, *, file: IO[str] | None = None, bar: bool = True):
        self.sweep, self.costs = sweep, costs
        self.file = file if file is not None else sys.stderr
        self.show_bar = bar
        self.todo_s = 0.0  # estimated seconds of the runs to do
        self.n_todo = self.n_cached = self.n_done = 0
        self.done_est_s = self.done_s = 0.0
        self.stage_todo: dict[str, float] = {}  # estimated seconds to do, per stage
        self.stage_est: dict[str, float] = {}  # estimated seconds done, per stage
        self.stage_s: dict[str, float] = {}  # measured seconds done, per stage
        self.t0 = time.time()
        self._bar: Any = None

    def estimate(self, stage: str, size: str) -> float:
        """Estimated seconds of one run of ``stage`` ("warm-up" or "GRPO") at ``size``."""
        if stage == "warm-up":
            return float(self.costs["sizes"][size]["warmup_s"])
        return run_seconds(self.sweep, self.costs, size)

    def add(self, stage: str, size: str, *, cached: bool) -> None:
        """Plan one run (``cached``: a finished copy is stored, it will not run)."""
        if cached:
            self.n_cached += 1
        else:
            self.n_todo += 1
            self.todo_s += self.estimate(stage, size)
            self.stage_todo[stage] = self.stage_todo.get(stage, 0.0) + self.estimate(stage, size)

    def start(self) -> None:
        """Print the plan and open the bar (call after every :meth:`add`)."""
        from tqdm import tqdm

        self.t0 = time.time()
        self._log(
            f"{self.n_todo} runs to do ({self.n_cached} stored), "
            f"estimated {self.todo_s / 3600:.2f} h on one core"
        )
        self._bar = tqdm(
            total=round(self.todo_s),
            unit="est-s",
            desc="sweep",
            file=self.file,
            disable=not self.show_bar,
            mininterval=30,
        )

    def ratio(self, stage: str | None = None) -> float:
        """Measured over estimated seconds of the runs done so far, of ``stage`` (None:
        all); a stage with no run done yet takes the overall ratio (1 before any)."""
        if stage is not None and self.stage_est.get(stage, 0.0) > 0:
            return self.stage_s[stage] / self.stage_est[stage]
        return self.done_s / self.done_est_s if self.done_est_s > 0 else 1.0

    def eta_s(self) -> float:
        """Seconds still to run: each stage's estimated seconds left times its
        :meth:`ratio`."""
        return sum(
            max(todo - self.stage_est.get(st, 0.0), 0.0) * self.ratio(st)
            for st, todo in self.stage_todo.items()
        )

    def done(self, stage: str, size: str, seconds: float) -> None:
        """One run of ``stage`` at ``size`` ended after ``seconds``: advance, log."""
        est = self.estimate(stage, size)
        self.n_done += 1
        self.done_est_s += est
        self.done_s += seconds
        self.stage_est[stage] = self.stage_est.get(stage, 0.0) + est
        self.stage_s[stage] = self.stage_s.get(stage, 0.0) + seconds
        if self._bar is not None:
            self._bar.update(round(est))
        eta = self.eta_s()
        finish = time.strftime("%H:%M UTC", time.gmtime(time.time() + eta))
        self._log(
            f"done {stage} {size} in {seconds:.0f} s (estimate {est:.0f} s); "
            f"{self.n_done}/{self.n_todo} runs; x{self.ratio(stage):.2f} the estimate; "
            f"ETA {eta / 3600:.2f} h ({finish})"
        )

    def _log(self, msg: str) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        print(f"[{stamp}] {msg}", file=self.file, flush=True)
