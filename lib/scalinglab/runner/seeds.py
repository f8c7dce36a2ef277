"""Seed robustness: re-run a report's analysis under other resampling seeds and list
every verdict that changes.

``scalinglab verify RUN --seeds 1,2`` re-runs RUN's study with its manifest's parameters
except the analysis seed (the notebook parameter ``seed`` unless ``--seed-param`` names
another), once per seed, each into a temporary reports folder (the real ``reports/`` is
untouched), and compares every claim's verdict with the recorded one. A study's
experiment data (committed runs, cached benchmarks) are inputs and are kept: only the
resampling changes, so a verdict that moves is decided by Monte Carlo noise, not by the
data, and should read ``inconclusive (Monte Carlo)`` or rest on more resamples. A claim
undecided under every seed whose label alone moves between ``inconclusive`` and
``inconclusive (Monte Carlo)`` (a bound about 2 Monte Carlo errors from its threshold,
which no finite number of resamples keeps on one side for every seed) decides nothing
under any seed: it is listed apart (``label_only``), not as a change.

The re-runs never run an experiment (:func:`scalinglab.runner.verify.experiments_refused`):
a parameter that is part of an experiment's cache key (a training or timing seed, not an
analysis seed) would make the re-run compute new data, so that re-run is refused before
anything is computed and :func:`seed_robustness` raises a
:class:`~scalinglab.errors.StudyError` naming the study, the parameter and the dataset it
would have recomputed; nothing is written under ``data/``.

:func:`seed_robustness` takes the re-run as a function, so the comparison is tested
without a kernel; :func:`rerun_claims` is the real one
(:func:`~scalinglab.runner.pipeline.run_study`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalinglab.errors import ParameterError, StudyError
from scalinglab.runner import store
from scalinglab.runner.pipeline import run_study
from scalinglab.runner.store import RunStatus
from scalinglab.runner.verify import experiments_refused, refused_experiment, unverifiable
from scalinglab.textfmt import format_table

#: ``(manifest, overrides) -> (status, error, claims)``: one re-run with other parameters.
Rerun = Callable[[dict, dict], tuple[str, str | None, list[dict]]]


def parse_seeds(text: str) -> list[int]:
    """``"1,2"`` -> ``[1, 2]``; raises :class:`~scalinglab.errors.ParameterError` naming
    the bad element."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise ParameterError(
                f"--seeds: {part!r} is not an integer seed (e.g. --seeds 1,2)"
            ) from None
    if not out:
        raise ParameterError("--seeds: name at least one seed (e.g. --seeds 1,2)")
    return out


@dataclass
class SeedResult:
    """Verdicts of every claim under the recorded seed and each other seed."""

    run: str
    param: str
    recorded_seed: Any
    seeds: list[int]
    rows: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[dict]:
        """The rows whose verdict differs under some seed (or is missing there)."""
        return [r for r in self.rows if r["changed"]]

    @property
    def label_only(self) -> list[dict]:
        """The rows undecided under every seed whose label alone moves (see
        :data:`UNDECIDED`): not a decision by resampling noise."""
        return [r for r in self.rows if r.get("label_only")]

    @property
    def stable(self) -> bool:
        return not self.failures and not self.changed

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "param": self.param,
            "recorded_seed": self.recorded_seed,
            "seeds": self.seeds,
            "stable": self.stable,
            "claims": self.rows,
            "changed": [r["id"] for r in self.changed],
            "label_only": [r["id"] for r in self.label_only],
            "failures": self.failures,
        }

    def text(self) -> str:
        head = ["claim", f"{self.param}={self.recorded_seed} (recorded)"] + [
            f"{self.param}={s}" for s in self.seeds
        ]
        rows = [
            [
                ("* " if r["changed"] else "~ " if r.get("label_only") else "  ") + r["id"],
                r["recorded"],
            ]
            + [r["verdicts"].get(str(s)) or "(missing)" for s in self.seeds]
            for r in self.rows
        ]
        lines = [f"run: {self.run}", format_table(head, rows)]
        lines += [f"re-run failed: {f}" for f in self.failures]
        if self.label_only:
            lines.append(
                f"{len(self.label_only)} claim(s) undecided under every seed (marked ~): only "
                "the label moves between inconclusive and inconclusive (Monte Carlo), a bound "
                "about 2 Monte Carlo errors from its threshold"
            )
        n = len(self.changed)
        lines.append(
            "every verdict is stable under these seeds"
            if self.stable
            else f"{n} verdict(s) change with the seed (marked *): decided by resampling "
            "noise, not by the data"
            if n
            else "NOT CHECKED (a re-run failed)"
        )
        return "\n".join(lines)


#: Verdicts that decide nothing. A claim that reads one of them under every seed is
#: undecided under every seed: its label moving between them (a bound about 2 Monte Carlo
#: errors from a threshold, :data:`scalinglab.verdict_checks.MC_SE_MULTIPLE`) is listed
#: apart, not as a verdict that changes.
UNDECIDED = frozenset({"inconclusive", "inconclusive (Monte Carlo)"})


def compare_verdicts(recorded: Sequence[dict], reruns: Mapping[str, Sequence[dict]]) -> list[dict]:
    """One row per claim id (recorded first, then ids only a re-run has): its recorded
    verdict, its verdict per seed, whether any differs (``changed``), and whether only an
    undecided label moves (``label_only``: undecided under every seed, :data:`UNDECIDED`)."""
    ids = [c["id"] for c in recorded]
    for claims in reruns.values():
        ids += [c["id"] for c in claims if c["id"] not in ids]
    rec = {c["id"]: c["verdict"] for c in recorded}
    rows = []
    for cid in ids:
        per = {s: {c["id"]: c["verdict"] for c in claims}.get(cid) for s, claims in reruns.items()}
        differs = any(v != rec.get(cid) for v in per.values())
        undecided = {rec.get(cid), *per.values()} <= UNDECIDED
        rows.append(
            {
                "id": cid,
                "recorded": rec.get(cid),
                "verdicts": per,
                "changed": differs and not undecided,
                "label_only": differs and undecided,
            }
        )
    return rows


def rerun_claims(
    manifest: dict, overrides: dict, *, cell_timeout: float | None = None, command: str = ""
) -> tuple[str, str | None, list[dict]]:
    """Run the manifest's study/variant with ``overrides`` into a temporary reports root
    and read back its claims."""
    with tempfile.TemporaryDirectory(prefix="scalinglab-seeds-") as tmp, experiments_refused():
        result = run_study(
            manifest["study"],
            variant=manifest["variant"],
            overrides=overrides,
            cell_timeout=cell_timeout,
            force=True,
            reports_root=Path(tmp),
            command=command,
        )
        claims: list[dict] = []
        if result.run_dir is not None and (result.run_dir / "results.json").exists():
            claims = json.loads((result.run_dir / "results.json").read_text()).get("claims", [])
    return result.status, result.error, claims


def seed_robustness(
    run_dir: Path,
    seeds: Sequence[int],
    *,
    param: str = "seed",
    rerun: Rerun | None = None,
    cell_timeout: float | None = None,
    command: str = "",
) -> SeedResult:
    """Re-run ``run_dir``'s analysis with each of ``seeds`` and compare claim verdicts.

    Parameters
    ----------
    run_dir
        A finished run (status ``ok``).
    seeds
        Analysis seeds to try (the recorded one is compared against).
    param
        The notebook parameter that seeds the resampling.
    rerun
        The re-run (default :func:`rerun_claims`).

    Raises
    ------
    StudyError
        No readable manifest, a run that did not finish well, a study without
        parameter ``param``, or a ``param`` that keys an experiment: a re-run with
        another value would compute a dataset that is not committed (refused before
        anything is computed; the message names the dataset).
    """
    manifest = store.read_manifest(run_dir)
    if not manifest.get("study"):
        raise StudyError(f"{run_dir}: no readable manifest.json")
    refusal = unverifiable(Path(run_dir), manifest)
    if refusal:
        raise StudyError(refusal)
    params = dict(manifest.get("parameters") or {})
    if param not in params:
        raise StudyError(
            f"{run_dir}: the study has no parameter {param!r} to re-seed "
            f"(its parameters: {', '.join(sorted(params)) or 'none'}); name it with --seed-param"
        )
    results = Path(run_dir) / "results.json"
    recorded = json.loads(results.read_text()).get("claims", []) if results.exists() else []
    label = f"{manifest['study']}/{manifest['variant']}/{manifest['run_id']}"

    def default(m: dict, o: dict) -> tuple[str, str | None, list[dict]]:
        return rerun_claims(m, o, cell_timeout=cell_timeout, command=command)

    do = rerun or default
    out = SeedResult(label, param, params[param], [int(s) for s in seeds])
    reruns: dict[str, list[dict]] = {}
    for s in out.seeds:
        status, error, claims = do(manifest, {**params, param: int(s)})
        refusal = refused_experiment(error)
        if refusal:
            raise StudyError(
                f"verify --seeds refused for {manifest['study']}/{manifest['variant']}: "
                f"parameter {param!r} is not an analysis seed: with {param}={s} the re-run "
                f"would run an experiment ({refusal}). Name the study's analysis seed with "
                "--seed-param, or give the experiment a seed parameter of its own"
            )
        if status != RunStatus.OK:
            out.failures.append(f"{param}={s}: {status}: {error}")
            continue
        reruns[str(s)] = list(claims)
    out.rows = compare_verdicts(recorded, reruns)
    return out
