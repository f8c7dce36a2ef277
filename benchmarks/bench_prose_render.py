"""Benchmark: a prose edit of a study to its new report (render-only), against executing it.

Run (from the repository root)::

    .venv/bin/python benchmarks/bench_prose_render.py                  # rl_scaling default
    # options: --study NAME --variant V (a committed report), --repeats N, --fixture-only

Two measurements, each the whole ``python -m scalinglab run STUDY -q`` process as a
user types it, in a temporary repository root (``SCALINGLAB_ROOT``: the study's
notebook copied, ``data/`` linked read-only), so nothing under ``reports/`` changes:

1. **fixture**: the test fixture study (``tests/fixtures/studies/fixture_basic.py``,
   variant ``tiny``) is executed once (timed: the baseline, a kernel start and every
   cell), then a markdown cell is edited ``--repeats`` times and the report re-made
   each time (timed: render-only, no kernel).
2. **study**: the committed latest report of ``--study``/``--variant`` (its executed
   notebook and ``results.json``) is copied into the temporary root and its manifest
   re-keyed with the current per-study key (what a run under the current runner
   records; committed manifests predate it); then a markdown cell of the notebook is
   edited ``--repeats`` times, re-rendering each time. The executed notebook of
   ``rl_scaling`` is the largest committed (about 0.6 MB of outputs), its full
   re-execution took 69 s on 2 cores (issue 27).

Every render-only run is checked: its manifest names the run it was rendered from,
its findings equal that run's byte for byte, and its page holds the edited sentence.
Target: at most 20 s per prose edit on 2 cores. Prints a table and writes
``benchmarks/results/prose_render.json`` (with the load average before and after:
the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "prose_render.json"
FIXTURE = ROOT / "tests" / "fixtures" / "studies" / "fixture_basic.py"
TARGET_S = 20.0


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _scalinglab(root: Path, *args: str) -> dict[str, float]:
    """Wall and CPU seconds of ``python -m scalinglab ARGS`` with the repository at ``root``
    (CPU: the process and its children, such as a kernel; on a shared machine it is what
    the run would take on an idle core, roughly)."""
    env = {**os.environ, "SCALINGLAB_ROOT": str(root), "PYTHONPATH": str(ROOT / "lib")}
    cpu0, t0 = _cpu_children(), time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "scalinglab", *args], env=env, capture_output=True, text=True
    )
    seconds, cpu = time.perf_counter() - t0, _cpu_children() - cpu0
    if res.returncode != 0:
        raise SystemExit(f"scalinglab {' '.join(args)} failed:\n{res.stdout}\n{res.stderr}")
    return {"wall": seconds, "cpu": cpu}


def _edit_prose(notebook: Path, n: int) -> str:
    """Add a sentence to the first markdown cell; return it."""
    sentence = f"A sentence added by the prose benchmark (edit {n})."
    text = notebook.read_text()
    marker = "# %% [markdown]\n"
    if marker not in text:
        raise SystemExit(f"{notebook}: no markdown cell to edit")
    notebook.write_text(text.replace(marker, f"{marker}# {sentence}\n#\n", 1))
    return sentence


def _latest(root: Path, study: str, variant: str) -> Path:
    return (root / "reports" / study / variant / "latest").resolve()


def _check_render(root: Path, study: str, variant: str, before: Path, sentence: str) -> Path:
    run = _latest(root, study, variant)
    manifest = json.loads((run / "manifest.json").read_text())
    if manifest.get("rendered_from") != before.name:
        raise SystemExit(f"{run}: not rendered from {before.name} (the notebook ran)")
    if (run / "results.json").read_bytes() != (before / "results.json").read_bytes():
        raise SystemExit(f"{run}: findings differ from {before.name}'s")
    if sentence not in (run / "report.html").read_text():
        raise SystemExit(f"{run}: the edited sentence is not in report.html")
    return run


def _renders(root: Path, study: str, variant: str, repeats: int) -> list[dict[str, float]]:
    notebook = root / "notebooks" / f"{study}.py"
    times = []
    for n in range(1, repeats + 1):
        before = _latest(root, study, variant)
        sentence = _edit_prose(notebook, n)
        times.append(_scalinglab(root, "run", study, "--variant", variant, "-q"))
        _check_render(root, study, variant, before, sentence)
    return times


def _lab(tmp: Path) -> Path:
    root = tmp / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "reports").mkdir()
    (root / "data").symlink_to(ROOT / "data", target_is_directory=True)
    return root


def bench_fixture(tmp: Path, repeats: int) -> dict:
    root = tmp / "fixture"
    for sub in ("notebooks", "reports", "data/fixture"):
        (root / sub).mkdir(parents=True)
    shutil.copy(FIXTURE, root / "notebooks")
    execute = _scalinglab(root, "run", "fixture_basic", "--variant", "tiny", "-q")
    renders = _renders(root, "fixture_basic", "tiny", repeats)
    return {"execute_seconds": execute, "render_seconds": renders}


def bench_study(tmp: Path, study: str, variant: str, repeats: int) -> dict:
    sys.path.insert(0, str(ROOT / "lib"))
    from scalinglab.runner import store
    from scalinglab.runner.pipeline import prepare_run

    committed = _latest(ROOT, study, variant)
    root = _lab(tmp)
    shutil.copy(ROOT / "notebooks" / f"{study}.py", root / "notebooks")
    run = root / "reports" / study / variant / committed.name
    shutil.copytree(committed, run)
    os.symlink(committed.name, run.parent / "latest")
    os.environ["SCALINGLAB_ROOT"] = str(root)
    try:
        prep = prepare_run(study, variant=variant)
    finally:
        os.environ.pop("SCALINGLAB_ROOT")
    manifest = store.read_manifest(run)
    keys = ("key_format", "execution_key", "prose_hash", "cache_key", "lib_modules", "lib_hash")
    manifest.update({k: prep.hashes[k] for k in keys}, cell_hashes=prep.hashes["cell_hashes"])
    (run / "manifest.json").write_text(json.dumps(manifest, indent=1))
    sizes = {
        p.name: p.stat().st_size for p in committed.iterdir() if p.suffix in (".html", ".ipynb")
    }
    renders = _renders(root, study, variant, repeats)
    new = _latest(root, study, variant)
    return {
        "study": study,
        "variant": variant,
        "committed_run": committed.name,
        "committed_sizes_bytes": sizes,
        "rendered_report_bytes": (new / "report.html").stat().st_size,
        "render_seconds": renders,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--study", default="rl_scaling")
    parser.add_argument("--variant", default="default")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fixture-only", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-prose-") as tmp:
        out: dict = {
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
            "target_seconds": TARGET_S,
            "fixture": bench_fixture(Path(tmp), args.repeats),
        }
        if not args.fixture_only:
            out["study"] = bench_study(Path(tmp), args.study, args.variant, args.repeats)
    out["machine"]["load_before"] = list(load_before)
    out["machine"]["load_after"] = list(os.getloadavg())
    rows = [("fixture_basic/tiny", "execute", out["fixture"]["execute_seconds"])]
    rows += [("fixture_basic/tiny", "prose edit", s) for s in out["fixture"]["render_seconds"]]
    if "study" in out:
        name = f"{args.study}/{args.variant}"
        rows += [(name, "prose edit", s) for s in out["study"]["render_seconds"]]
    edits = [s for _, what, s in rows if what == "prose edit"]
    worst = max(s["wall"] for s in edits)
    out["worst_prose_edit_seconds"] = worst
    out["worst_prose_edit_cpu_seconds"] = max(s["cpu"] for s in edits)
    out["median_prose_edit_seconds"] = statistics.median(s["wall"] for s in edits)
    out["target_met"] = worst <= TARGET_S
    for name, what, s in rows:
        print(f"{name:28s} {what:11s} {s['wall']:7.2f} s wall {s['cpu']:7.2f} s CPU")
    print(
        f"worst prose edit {worst:.2f} s wall, load {load_before[0]:.1f} "
        f"(target <= {TARGET_S:.0f} s): " + ("met" if out["target_met"] else "NOT met")
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
