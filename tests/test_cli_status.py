"""Instant CLI start-up, ``python -m scalinglab``, ``scalinglab status`` (why a study is
stale, without running it), the checkout check, the tiny-data cache, ``verify`` refusing
unfinished runs and ``reports prune`` removing killed ones. No notebook runs here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import scalinglab.cli as cli
from scalinglab.runner import manifest as manifest_mod
from scalinglab.runner import store
from scalinglab.runner.pipeline import prepare_run
from scalinglab.runner.status import KEY_FORMAT_CHANGED, hardware_reason, status_all, study_status

FIXTURES = Path(__file__).parent / "fixtures" / "studies"
REPO = Path(__file__).resolve().parents[1]
ORIGINAL_LIBRARY_HASHES = manifest_mod.library_hashes


def test_help_imports_no_verb_and_no_scientific_stack():
    code = (
        "import sys\n"
        "from scalinglab.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'scipy', 'pandas', 'xarray', 'papermill', "
        "'scalinglab.cli.intervals', 'scalinglab.cli.run') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "HEAVY []" in out
    for verb in cli.VERBS:
        assert verb in out


def test_help_lines_match_each_verbs_own_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb")
    own = {c.dest: c.help for c in sub._choices_actions}
    assert own == cli.VERBS


def test_python_dash_m_scalinglab_runs_the_cli():
    res = subprocess.run(
        [sys.executable, "-m", "scalinglab", "status", "--help"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert "usage: scalinglab status" in res.stdout


def test_outside_a_checkout_the_error_says_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    assert cli.main(["run", "--list"]) == 2
    err = capsys.readouterr().err
    assert "no notebooks/ folder" in err and "SCALINGLAB_ROOT" in err
    assert cli.main(["status"]) == 2


@pytest.fixture
def lab(tmp_path, monkeypatch):
    for sub in ("notebooks", "data/fixture", "reports"):
        (tmp_path / sub).mkdir(parents=True)
    shutil.copy(FIXTURES / "fixture_basic.py", tmp_path / "notebooks")
    (tmp_path / "data" / "fixture" / "values.csv").write_text("1.0\n2.0\n")
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    monkeypatch.setattr(manifest_mod, "library_hashes", _pinned("pinned"))
    return tmp_path


def _pinned(value: str):
    """A stand-in for the imported modules' hashes (other work edits ``lib/`` meanwhile)."""
    return lambda cells, where="": {"scalinglab.record": value}


def _fake_good_run(variant: str = "default", *, study: str = "fixture_basic") -> Path:
    """A finished ``ok`` run folder whose manifest holds the current request's hashes."""
    prep = prepare_run(study, variant=variant)
    run_id, tmp = store.allocate_run(study, prep.variant)
    m = manifest_mod.build_manifest(
        study=study,
        title="t",
        variant=prep.variant,
        run_id=run_id,
        status="ok",
        error=None,
        started="s",
        finished="f",
        duration=1.0,
        parameters=prep.parameters,
        hashes=prep.hashes,
        git={"commit": None, "dirty": False},
        environment={},
        version="0",
        compute_mode="sync",
        executor="local",
        command="",
        results=[],
        cell_timings=[],
        report_html_sha256=None,
    )
    store.write_json(tmp / "manifest.json", m)
    run_dir = store.finalize_run(tmp, run_id)
    store.set_latest(run_dir)
    return run_dir


def _edit(root: Path, old: str, new: str) -> None:
    nb = root / "notebooks" / "fixture_basic.py"
    text = nb.read_text()
    assert old in text
    nb.write_text(text.replace(old, new, 1))


def test_status_up_to_date_then_names_each_change(lab, monkeypatch):
    run_dir = _fake_good_run()
    s = study_status("fixture_basic", "default")
    assert (s.state, s.run_id, s.reasons) == ("up-to-date", run_dir.name, [])
    assert study_status("fixture_basic", "tiny").state == "never run"

    _edit(
        lab,
        "lo, hi = np.quantile(boot, [0.025, 0.975])",
        "lo, hi = np.quantile(boot, [0.05, 0.95])",
    )
    reasons = study_status("fixture_basic", "default").reasons
    cells = [c for c in prepare_run("fixture_basic").study.cell_sources()]
    edited = next(i for i, c in enumerate(cells, 1) if "[0.05, 0.95]" in c)
    assert reasons == [
        f"cell {edited} edited: code 'idx = rng.integers(0, x.size, size=(reps, x.size))'"
    ]

    _edit(lab, "n: int = 400", "n: int = 500")
    (lab / "data" / "fixture" / "more.csv").write_text("3.0\n")
    (lab / "data" / "fixture" / "values.csv").write_text("1.0\n2.5\n")
    monkeypatch.setattr(manifest_mod, "library_hashes", _pinned("edited"))
    s = study_status("fixture_basic", "default")
    assert s.state == "stale"
    assert "parameter n: 400 -> 500" in s.reasons
    assert "input added: data/fixture/more.csv" in s.reasons
    assert "input changed: data/fixture/values.csv" in s.reasons
    assert "library: scalinglab.record changed" in s.reasons


def test_a_manifest_with_the_old_whole_library_key_is_stale_once(lab):
    run_dir = _fake_good_run()
    m = json.loads((run_dir / "manifest.json").read_text())
    for key in ("key_format", "execution_key", "prose_hash", "lib_modules"):
        del m[key]  # as written before the per-study key
    m["cache_key"] = "0" * 64
    (run_dir / "manifest.json").write_text(json.dumps(m))
    s = study_status("fixture_basic", "default")
    assert (s.state, s.reasons) == ("stale", [KEY_FORMAT_CHANGED])
    _edit(lab, "# Draws `n` values", "# Draws exactly `n` values")
    s = study_status("fixture_basic", "default")  # never "prose changed": the key cannot say
    assert s.state == "stale" and s.reasons[0] == KEY_FORMAT_CHANGED
    assert s.reasons[1].endswith("edited: markdown '# Mean of a normal sample'")


def _other_study(root: Path) -> None:
    """A second study that imports only the GEMM study's plots (and what they import)."""
    text = (FIXTURES / "fixture_basic.py").read_text()
    text = text.replace(
        "from scalinglab.record import record\n",
        "from scalinglab.record import record\nfrom scalinglab.studies.gemm import plots\n",
    )
    (root / "notebooks" / "fixture_other.py").write_text(text)


def test_a_module_only_another_study_imports_does_not_stale_a_study(lab, monkeypatch):
    package = lab / "lib" / "scalinglab"
    shutil.copytree(manifest_mod.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(manifest_mod, "LIBRARY_DIR", package)
    monkeypatch.setattr(manifest_mod, "library_hashes", ORIGINAL_LIBRARY_HASHES)
    _other_study(lab)
    _fake_good_run()
    _fake_good_run(study="fixture_other")
    modules = store.read_manifest(store.latest_run("fixture_other", "default"))["lib_modules"]
    assert "scalinglab.studies.gemm.plots" in modules and "scalinglab.record" in modules
    basic = store.read_manifest(store.latest_run("fixture_basic", "default"))["lib_modules"]
    assert not any(m.startswith("scalinglab.studies") for m in basic)

    plots = package / "studies" / "gemm" / "plots.py"
    plots.write_text(plots.read_text() + "\n# a comment in one study's own module\n")
    assert study_status("fixture_basic", "default").state == "up-to-date"
    other = study_status("fixture_other", "default")
    assert (other.state, other.reasons) == (
        "stale",
        ["library: scalinglab.studies.gemm.plots changed"],
    )

    record = package / "record.py"  # imported by both
    record.write_text(record.read_text() + "\n# shared\n")
    assert study_status("fixture_basic", "default").reasons == [
        "library: scalinglab.record changed"
    ]
    assert study_status("fixture_other", "default").reasons == [
        "library: scalinglab.record changed",
        "library: scalinglab.studies.gemm.plots changed",
    ]


def test_status_cli_lists_every_variant_and_unfinished_runs(lab, capsys):
    _fake_good_run()
    run_id, tmp = store.allocate_run("fixture_basic", "default")
    (tmp / store.OWNER).write_text(json.dumps({"host": os.uname().nodename, "pid": 2**22 + 7}))
    assert cli.main(["status"]) == 0
    out = capsys.readouterr().out
    assert "fixture_basic  default  up-to-date" in out
    assert "fixture_basic  tiny     never run" in out and "shifted" in out
    assert f"fixture_basic/default/{run_id}: killed" in out
    assert cli.main(["status", "--format", "json", "--variant", "default"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["state"] for s in data["studies"]] == ["up-to-date"]
    assert [s.variant for s in status_all()] == ["default", "tiny", "shifted"]


def test_a_machine_without_a_hardware_record_is_a_reason_or_a_note(lab):
    from scalinglab.cost_model.hardware import hardware_path

    assert hardware_reason(["data/fixture/*.csv"]) is None
    (lab / "data" / "hardware").mkdir()
    text, stale = hardware_reason(["data/hardware/*.json"])
    assert stale and "recorded: none" in text and "measures it" in text
    (lab / "data" / "hardware" / "some-other-cpu-64c.json").write_text("{}")
    text, stale = hardware_reason(["data/hardware/*.json"])
    assert not stale and "the committed one of some-other-cpu-64c is reused" in text
    (lab / "data" / "hardware" / "a-third-cpu-8c.json").write_text("{}")
    text, stale = hardware_reason(["data/hardware/*.json"])
    assert stale and "recorded: a-third-cpu-8c, some-other-cpu-64c" in text
    hardware_path().write_text("{}")
    assert hardware_reason(["data/hardware/*.json"]) is None


def test_a_re_measured_hardware_record_is_named_as_the_reason(lab):
    nb = lab / "notebooks" / "fixture_basic.py"
    nb.write_text(
        nb.read_text().replace(
            "#     - data/fixture/*.csv", "#     - data/fixture/*.csv\n#     - data/hardware/*.json"
        )
    )
    (lab / "data" / "hardware").mkdir()
    from scalinglab.cost_model.hardware import hardware_path

    hardware_path().write_text('{"peak": 1}')
    _fake_good_run()
    assert study_status("fixture_basic", "default").state == "up-to-date"
    hardware_path().write_text('{"peak": 2}')
    s = study_status("fixture_basic", "default")
    assert s.reasons == [f"input (hardware record) changed: data/hardware/{hardware_path().name}"]


def test_tiny_experiment_results_go_to_the_ignored_cache(lab, monkeypatch):
    from scalinglab.compute import TINY_ENV, dataset_path

    monkeypatch.delenv(TINY_ENV, raising=False)
    assert dataset_path("s", "sweep", {"compute_class": "small"}).parent == lab / "data" / "s"
    assert dataset_path("s", "sweep", {"compute_class": "tiny"}).parent == lab / "data/.cache/s"
    monkeypatch.setenv(TINY_ENV, "1")  # what the runner sets for a tiny run
    assert dataset_path("s", "sweep", {}).parent == lab / "data" / ".cache" / "s"
    ignored = subprocess.run(["git", "check-ignore", "-q", "data/.cache/s/sweep-0.nc"], cwd=REPO)
    assert ignored.returncode == 0


def test_verify_refuses_unfinished_and_bad_runs_at_once(lab, capsys):
    run_id, tmp = store.allocate_run("fixture_basic", "default")
    (tmp / store.OWNER).write_text(json.dumps({"host": os.uname().nodename, "pid": 2**22 + 7}))
    store.write_json(
        tmp / "manifest.json",
        {"study": "fixture_basic", "variant": "default", "run_id": run_id, "status": "running"},
    )
    assert cli.main(["verify", str(tmp)]) == 2
    err = capsys.readouterr().err
    assert "unfinished run (killed)" in err
    store.write_json(
        tmp / "manifest.json",
        {
            "study": "fixture_basic",
            "variant": "default",
            "run_id": run_id,
            "status": "interrupted",
            "error": "Ctrl-C",
        },
    )
    done = store.finalize_run(tmp, run_id)
    assert cli.main(["verify", str(done)]) == 2
    assert "status 'interrupted' (Ctrl-C): only a good run can be verified" in (
        capsys.readouterr().err
    )


def test_prune_removes_killed_tmp_folders_only(lab):
    _, killed = store.allocate_run("fixture_basic", "default")
    (killed / store.OWNER).write_text(json.dumps({"host": os.uname().nodename, "pid": 2**22 + 7}))
    _, running = store.allocate_run("fixture_basic", "default")  # owned by this process
    removed = store.prune_html()
    assert removed == [killed] and not killed.exists() and running.is_dir()


def test_a_markdown_edit_is_prose_changed_when_the_run_kept_its_notebook(lab, capsys):
    import nbformat

    run_dir = _fake_good_run()
    (run_dir / "results.json").write_text('{"findings": [], "claims": []}')
    _edit(lab, "# Draws `n` values", "# Draws exactly `n` values")
    s = study_status("fixture_basic", "default")
    assert s.state == "stale"  # nothing to re-render from
    assert s.reasons[-1] == (
        f"prose only, but it cannot be re-rendered: {run_dir.name} kept no executed "
        "notebook (fixture_basic.ipynb)"
    )
    executed = prepare_run("fixture_basic").study.notebook  # stands in for the executed one
    executed.cells[0].source = "# the prose as it was"
    nbformat.write(executed, run_dir / "fixture_basic.ipynb")
    s = study_status("fixture_basic", "default")
    assert s.state == "prose changed"
    assert s.reasons == ["cell 1 edited: markdown '# Mean of a normal sample'"]
    assert s.notes == [f"'scalinglab run' re-renders it from {run_dir.name} without running it"]
    assert cli.main(["status"]) == 0
    assert "fixture_basic  default  prose changed" in capsys.readouterr().out
