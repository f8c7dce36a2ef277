"""Runner: parameters cell parsing and validation, study discovery (no kernel starts)."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import jupytext
import pytest

import scalinglab.cli as cli
from scalinglab.errors import ParameterError, StudyError
from scalinglab.runner import pipeline, store
from scalinglab.runner.parameters import Parameter, coerce, parse_parameters_source
from scalinglab.runner.study import discover_studies, load_study, resolve_parameters

FIXTURES = Path(__file__).parent / "fixtures" / "studies"


@pytest.fixture
def root(tmp_path, monkeypatch):
    for sub in ("notebooks", "data/fixture", "reports"):
        (tmp_path / sub).mkdir(parents=True)
    for f in FIXTURES.glob("*.py"):
        shutil.copy(f, tmp_path / "notebooks" / f.name)
    monkeypatch.setenv("SCALINGLAB_ROOT", str(tmp_path))
    return tmp_path


def _main(monkeypatch, *argv: str) -> int:
    return cli.main(list(argv))


HEADER = textwrap.dedent("""\
    # ---
    # jupyter:
    #   kernelspec:
    #     display_name: Python 3
    #     language: python
    #     name: python3
    #   scalinglab:
    #     title: Bad
    # ---
    """)


def _write(root: Path, name: str, body: str) -> None:
    (root / "notebooks" / f"{name}.py").write_text(HEADER + "\n" + textwrap.dedent(body))


def test_header_metadata_round_trips_through_jupytext():
    meta = jupytext.read(FIXTURES / "fixture_basic.py").metadata["scalinglab"]
    assert meta["tiny"] == {"compute_class": "tiny", "n": 100, "reps": 100}
    assert meta["variants"] == {"shifted": {"shift": 1.0}}
    assert meta["inputs"] == ["data/fixture/*.csv"]


def test_parameters_cell_is_parsed_with_types_defaults_and_help(root):
    study = load_study("fixture_basic")
    p = study.parameters
    assert list(p)[:4] == ["seed", "compute_class", "scheduler", "data"]
    assert p["reps"] == Parameter("reps", "int", 300, "bootstrap resamples")
    assert p["shift"].type == "float" and p["shift"].default == 0.0
    assert p["levels"] == Parameter(
        "levels", "list[float]", [0.5, 0.9], "quantile levels to report"
    )
    assert p["show_hist"].default is True
    # a '#' inside a string is not a comment
    parsed = parse_parameters_source('label: str = "a # b"  # the label\n')
    assert parsed["label"].default == "a # b" and parsed["label"].help == "the label"


@pytest.mark.parametrize(
    ("typ", "text", "expected"),
    [
        ("int", "50_000", 50000),
        ("int", "-3", -3),
        ("float", "1e-3", 0.001),
        ("float", "2", 2.0),
        ("bool", "true", True),
        ("bool", "Yes", True),
        ("bool", "1", True),
        ("bool", "false", False),
        ("bool", "no", False),
        ("bool", "0", False),
        ("str", "  spaced ", "  spaced "),
        ("list[float]", "[1, 2.5]", [1.0, 2.5]),
        ("list[float]", "0.1, 0.9", [0.1, 0.9]),
        ("list[int]", "1,2,3", [1, 2, 3]),
        ("list[int]", "[]", []),
        ("list[str]", "a, b", ["a", "b"]),
        ("list[str]", '["a,b", "c"]', ["a,b", "c"]),
    ],
)
def test_cli_strings_are_converted_by_declared_type(typ, text, expected):
    value = coerce(Parameter("x", typ, None), text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("typ", "text"),
    [
        ("int", "1.5"),
        ("int", "ten"),
        ("float", "x"),
        ("bool", "maybe"),
        ("bool", "2"),
        ("list[int]", "1,x"),
        ("list[int]", '["a"]'),
        ("list[int]", "[1, 2"),
        ("list[float]", "[true]"),
    ],
)
def test_wrong_types_are_rejected(typ, text):
    with pytest.raises(ParameterError, match="'x'"):
        coerce(Parameter("x", typ, None), text)


def test_typed_values_are_checked_too():
    assert coerce(Parameter("x", "float", 0.0), 3) == 3.0
    with pytest.raises(ParameterError):
        coerce(Parameter("x", "int", 0), True)  # bool is not an int parameter
    with pytest.raises(ParameterError):
        coerce(Parameter("x", "bool", False), 1)


def test_unknown_parameter_lists_valid_ones_with_types_defaults_and_help(root):
    study = load_study("fixture_basic")
    with pytest.raises(ParameterError) as err:
        resolve_parameters(study, overrides=[("repz", "10")])
    msg = str(err.value)
    assert "unknown parameter 'repz'" in msg
    for p in study.parameters.values():
        assert p.describe() in msg
    assert "reps: int = 300  # bootstrap resamples" in msg


def test_wrong_type_error_names_parameter_and_lists_valid_ones(root):
    study = load_study("fixture_basic")
    with pytest.raises(ParameterError) as err:
        resolve_parameters(study, overrides={"n": "many"})
    assert "'n': expected int, got 'many'" in str(err.value)
    assert "shift: float = 0.0  # mean of the simulated sample" in str(err.value)


def test_variants_merge_defaults_variant_and_overrides(root):
    study = load_study("fixture_basic")
    assert set(study.variants) == {"default", "tiny", "shifted"}
    tiny = resolve_parameters(study, variant="tiny")
    assert (tiny["compute_class"], tiny["n"], tiny["reps"], tiny["seed"]) == ("tiny", 100, 100, 0)
    shifted = resolve_parameters(study, variant="shifted", overrides={"n": "7", "shift": "2"})
    assert shifted["shift"] == 2.0 and shifted["n"] == 7
    with pytest.raises(ParameterError, match="variants: default, tiny, shifted"):
        resolve_parameters(study, variant="huge")


def test_discovery_and_unknown_study(root):
    (root / "notebooks" / "helper.py").write_text("x = 1\n")
    assert discover_studies() == ["fixture_basic", "fixture_fail", "fixture_second"]
    with pytest.raises(StudyError, match="studies: fixture_basic, fixture_fail, fixture_second"):
        load_study("nope")


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("# %%\nx = 1\n", "exactly one code cell tagged 'parameters'"),
        ('# %%\nimport os\n\n# %% tags=["parameters"]\nseed: int = 0\n', "first code cell"),
        (
            '# %% tags=["parameters"]\nseed: int = 0\n\n# %% tags=["parameters"]\nn: int = 1\n',
            "exactly one",
        ),
        ('# %% tags=["parameters"]\nseed: int = 0\nn = 3\n', "only 'name: type = literal'"),
        ('# %% tags=["parameters"]\nseed: int = 0\nn: int = 2 ** 3\n', "literal"),
        ('# %% tags=["parameters"]\nseed: int = 0\nd: dict = {}\n', "supported"),
        ('# %% tags=["parameters"]\nseed: int = "0"\n', "default of 'seed'"),
        ('# %% tags=["parameters"]\nseed: int = 0\nscheduler: str = ""\n', "compute_class"),
    ],
)
def test_malformed_parameters_cells_are_study_errors(root, body, match):
    _write(root, "bad", body)
    with pytest.raises(StudyError, match=match):
        load_study("bad")


def test_bad_variant_in_header_is_a_study_error(root):
    src = (FIXTURES / "fixture_basic.py").read_text().replace("shift: 1.0", "shfit: 1.0")
    (root / "notebooks" / "typo.py").write_text(src)
    with pytest.raises(StudyError, match="unknown parameter 'shfit'"):
        load_study("typo")


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "fixture_basic", "-p", "repz", "10"),
        ("run", "fixture_basic", "-p", "n", "1.5"),
        ("run", "fixture_basic", "-p", "show_hist", "perhaps"),
        ("run", "fixture_basic", "--variant", "nope"),
        ("run", "--all", "-p", "nope", "1"),
    ],
)
def test_cli_rejects_bad_parameters_before_any_kernel(root, monkeypatch, capsys, argv):
    def no_kernel(*a, **k):
        raise AssertionError("a kernel was started")

    monkeypatch.setattr(pipeline, "execute_study", no_kernel)
    assert _main(monkeypatch, *argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("scalinglab run: error:")
    assert not any((root / "reports").iterdir())  # no run folder, not even a temporary one


def test_cli_lists_parameters(root, monkeypatch, capsys):
    assert _main(monkeypatch, "run", "fixture_basic", "--help-params") == 0
    out = capsys.readouterr().out
    assert "variants: default, tiny, shifted" in out
    assert "levels: list[float] = [0.5, 0.9]  # quantile levels to report" in out
    assert _main(monkeypatch, "run", "--list") == 0
    out = capsys.readouterr().out
    assert "fixture_fail: Fixture: a study that fails" in out
    assert "fail: bool = True  # raise after the first finding" in out


def test_batch_skips_draft_studies_unless_asked(root):
    from scalinglab.runner.batch import run_all
    from scalinglab.runner.store import RunStatus

    for f in (root / "notebooks").glob("*.py"):
        text = f.read_text().replace("#   scalinglab:\n", "#   scalinglab:\n#     draft: true\n", 1)
        f.write_text(text)
    assert all(load_study(n).draft for n in discover_studies())
    batch = run_all(variant="tiny", scheduler="sync", progress=False)
    assert {r.status for r in batch.results} == {RunStatus.DRAFT}
    assert batch.ok, "skipping a draft is not a failure"
    assert "scalinglab run fixture_basic" in batch.summary()
    assert not any((root / "reports").rglob("manifest.json")), "no draft may run"


def test_cli_paths_are_made_absolute_relative_to_where_they_were_typed(tmp_path):
    from scalinglab.runner.study import cwd_paths_absolute

    (tmp_path / "a.csv").write_text("x\n")
    (tmp_path / "b.csv").write_text("x\n")
    got = cwd_paths_absolute("a.csv, b.csv", cwd=tmp_path)
    assert got == f"{tmp_path / 'a.csv'},{tmp_path / 'b.csv'}"
    assert cwd_paths_absolute("a.csv,missing.csv", cwd=tmp_path) == "a.csv,missing.csv"
    assert cwd_paths_absolute("percentile", cwd=tmp_path) == "percentile"
    assert cwd_paths_absolute("", cwd=tmp_path) == ""


def test_input_files_outside_the_repository_change_the_cache_key(root, tmp_path_factory):
    from scalinglab.runner.manifest import input_hashes

    outside = tmp_path_factory.mktemp("elsewhere") / "scores.csv"
    outside.write_text("algorithm,task,run,score\nA,t,0,1.0\n")
    first = input_hashes({"scores": str(outside)}, [], root=root)
    assert list(first) == [str(outside.resolve())]
    outside.write_text("algorithm,task,run,score\nA,t,0,2.0\n")
    assert input_hashes({"scores": str(outside)}, [], root=root) != first


def test_editing_the_narrative_makes_a_report_stale(root):
    """The report shows the markdown too, so it is part of the cache key."""
    from scalinglab.runner.manifest import source_info

    def key():
        study = load_study("fixture_basic")
        return source_info(study.path, study.cell_sources(), {}, {})["cache_key"]

    before = key()
    path = root / "notebooks" / "fixture_basic.py"
    path.write_text(path.read_text().replace("bootstraps the mean.", "bootstraps its mean."))
    assert key() != before


# --- value rules declared in the parameters cell (checked before any kernel starts) ---

RULED = textwrap.dedent("""\
    seed: int = 0  # RNG seed [>= 0]
    compute_class: str = "default"  # compute class {default, tiny}
    scheduler: str = "sync"  # scheduler
    data: str = ""  # optional CSV [file]
    reps: int = 300  # bootstrap resamples [>= 1]
    level: float = 0.9  # CI level [> 0, < 1]
    sizes: list[int] = [1, 2]  # sizes [>= 1]
    method: str = "percentile"  # interval method {percentile, bca}
""")


def test_value_rules_are_parsed_from_the_help_comment():
    p = parse_parameters_source(RULED)
    assert p["reps"].bounds == ((">=", 1),) and p["reps"].help == "bootstrap resamples [>= 1]"
    assert p["level"].bounds == ((">", 0), ("<", 1))
    assert p["method"].choices == ("percentile", "bca")
    assert p["data"].file and not p["reps"].file
    assert p["scheduler"].bounds == () and p["scheduler"].choices is None


@pytest.mark.parametrize(
    "line, match",
    [
        (
            "reps: int = 0  # resamples [>= 1]\n",
            "default breaks its rule: 'reps' must be >= 1, got 0",
        ),
        ('m: str = "x"  # method {a, b}\n', "default breaks its rule: 'm' must be one of a, b"),
        ("reps: int = 3  # resamples [at least 1]\n", "bad rule"),
        ("reps: int = 3  # resamples [file]\n", "bad rule"),
        ("q: float = 0.5  # level [> zero]\n", "bad limit"),
    ],
)
def test_bad_rules_and_defaults_breaking_them_are_study_errors(line, match):
    with pytest.raises(StudyError, match=re.escape(match)):
        parse_parameters_source(line)


@pytest.mark.parametrize(
    "name, value, match",
    [
        ("reps", 0, "'reps' must be >= 1, got 0"),
        ("seed", -1, "'seed' must be >= 0, got -1"),
        ("level", 1.0, "'level' must be < 1, got 1.0"),
        ("level", -1.0, "'level' must be > 0, got -1.0"),
        ("sizes", [3, 0], "'sizes' must be >= 1, got 0"),
        ("method", "bogus", "'method' must be one of percentile, bca; got 'bogus'"),
        ("data", "nope.csv", "'data': no such file or directory: 'nope.csv'"),
    ],
)
def test_values_breaking_a_rule_are_rejected_in_one_line(tmp_path, name, value, match):
    p = parse_parameters_source(RULED)[name]
    with pytest.raises(ParameterError, match=re.escape(match)) as info:
        p.check(value, cwd=tmp_path)
    assert "\n" not in str(info.value) and "np.float64" not in str(info.value)


def test_existing_files_and_the_empty_default_pass(tmp_path):
    p = parse_parameters_source(RULED)["data"]
    (tmp_path / "a.csv").write_text("1\n")
    (tmp_path / "dir").mkdir()
    for ok in ("", "a.csv", "a.csv,dir", str(tmp_path / "a.csv")):
        p.check(ok, cwd=tmp_path)


@pytest.fixture
def ruled_root(root):
    """fixture_basic with value rules on its parameters, as a study author writes them."""
    path = root / "notebooks" / "fixture_basic.py"
    text = path.read_text()
    for old, new in (
        ("# RNG seed\n", "# RNG seed [>= 0]\n"),
        ("# compute class (tiny for tests)\n", "# compute class {default, tiny}\n"),
        ('("" = simulate)\n', '("" = simulate) [file]\n'),
        ("# bootstrap resamples\n", "# bootstrap resamples [>= 1]\n"),
    ):
        assert old in text
        text = text.replace(old, new, 1)
    path.write_text(text)
    return root


@pytest.mark.parametrize(
    "argv, match",
    [
        (("-p", "reps", "0"), "'reps' must be >= 1, got 0"),
        (("-p", "seed", "-1"), "'seed' must be >= 0, got -1"),
        (("-p", "compute_class", "huge"), "'compute_class' must be one of default, tiny"),
        (("-p", "data", "nope.csv"), "'data': no such file or directory: 'nope.csv'"),
        (("--variant", "user"), "has no variant 'user'"),
    ],
)
def test_cli_rejects_bad_values_before_any_kernel(ruled_root, monkeypatch, capsys, argv, match):
    def no_kernel(*a, **k):
        raise AssertionError("a kernel was started")

    monkeypatch.setattr(pipeline, "execute_study", no_kernel)
    assert _main(monkeypatch, "run", "fixture_basic", *argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("scalinglab run: error: study 'fixture_basic': ") or match in err
    assert match in err and err.count("\n") == 1, err
    assert not any((ruled_root / "reports").iterdir())


def test_user_data_and_other_compute_classes_get_their_own_folder(ruled_root, monkeypatch):
    from scalinglab.runner.folders import declared_variant, run_folder

    (ruled_root / "mine.csv").write_text("1.0\n2.0\n")
    monkeypatch.chdir(ruled_root)
    study = load_study("fixture_basic")
    cases = [
        ("default", {}, "default"),
        ("default", {"data": "mine.csv"}, "user"),
        ("tiny", {"data": "mine.csv"}, "tiny-user"),
        ("default", {"compute_class": "tiny"}, "default-tiny"),
        ("default", {"compute_class": "default"}, "default"),
        ("shifted", {"data": "mine.csv", "compute_class": "tiny"}, "shifted-user-tiny"),
        # any other parameter: kept apart from the variant's latest ...
        ("default", {"reps": "10"}, "default-custom"),
        ("default", {"shift": "1.0", "levels": "[0.5]"}, "default-custom"),
        ("tiny", {"reps": "10"}, "tiny-custom"),
        ("shifted", {"shift": "2.0"}, "shifted-custom"),
        ("default", {"data": "mine.csv", "reps": "10"}, "user"),  # the user's own folder
        ("default", {"compute_class": "tiny", "reps": "10"}, "default-tiny"),
        # ... but not where it runs, nor a value equal to the variant's own
        ("default", {"scheduler": ""}, "default"),
        ("default", {"reps": "300", "shift": "0"}, "default"),
        ("shifted", {"shift": "1.0"}, "shifted"),
    ]
    for variant, over, folder in cases:
        values = resolve_parameters(study, variant=variant, overrides=over)
        assert run_folder(study, variant, values) == folder
        assert declared_variant(study, folder, values) == variant  # verify re-runs from the folder
        assert (
            pipeline.prepare_run("fixture_basic", variant=variant, overrides=over).variant == folder
        )


@pytest.mark.slow
def test_a_run_on_user_data_leaves_the_reproductions_latest_alone(ruled_root, monkeypatch):
    from scalinglab.runner import store

    monkeypatch.chdir(ruled_root)
    own = ruled_root / "mine.csv"
    own.write_text("1.0\n2.0\n4.0\n")
    first = pipeline.run_study("fixture_basic", variant="tiny")
    assert first.status == "ok", first.error
    mine = pipeline.run_study("fixture_basic", variant="tiny", overrides={"data": str(own)})
    assert mine.status == "ok", mine.error
    assert store.latest_run("fixture_basic", "tiny") == first.run_dir
    assert mine.run_dir.parent == ruled_root / "reports" / "fixture_basic" / "tiny-user"
    assert store.latest_run("fixture_basic", "tiny-user") == mine.run_dir
    assert json.loads((mine.run_dir / "manifest.json").read_text())["variant"] == "tiny-user"
    modes = {f.name: f.stat().st_mode & 0o777 for f in mine.run_dir.iterdir() if f.is_file()}
    assert modes["results.json"] == modes["report.html"] == modes["manifest.json"], modes


def _fake_kernel(study_path, executed_path, params, *, results_path, **kw):
    """What a notebook run records, without a kernel: one finding from the parameters."""
    shift = params["shift"]
    finding = {"name": "mean", "point": shift, "ci": [shift - 0.1, shift + 0.1], "level": 0.95}
    results_path.write_text(json.dumps({"findings": [finding], "claims": []}))


def test_a_run_with_custom_parameters_leaves_latest_and_the_index_alone(root, monkeypatch, capsys):
    """``-p shift 1.0`` on the default variant: its own git-ignored folder, never ``latest``."""
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    shutil.copy(repo / ".gitignore", root / ".gitignore")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setattr(pipeline, "execute_study", _fake_kernel)
    monkeypatch.chdir(root)
    assert _main(monkeypatch, "run", "fixture_basic", "-q") == 0
    latest = store.latest_run("fixture_basic", "default")
    index_before = (root / "reports" / "index.json").read_text()
    capsys.readouterr()
    assert _main(monkeypatch, "run", "fixture_basic", "-q", "-p", "shift", "1.0") == 0
    err = capsys.readouterr().err
    assert "kept apart in default-custom/" in err and "default/latest is unchanged" in err
    custom = store.latest_run("fixture_basic", "default-custom")
    assert custom is not None and custom.parent.name == "default-custom"
    assert json.loads((custom / "manifest.json").read_text())["parameters"]["shift"] == 1.0
    assert store.latest_run("fixture_basic", "default") == latest
    assert (root / "reports" / "index.json").read_text() == index_before  # git-ignored
    assert _main(monkeypatch, "reports", "fixture_basic") == 0
    assert "fixture_basic / default-custom (local, git-ignored)" in capsys.readouterr().out
    # the same request again is up to date in its own folder, not in the variant's
    assert _main(monkeypatch, "run", "fixture_basic", "-q", "-p", "shift", "1.0") == 0
    assert "up to date: " + str(custom) in capsys.readouterr().out


def test_user_and_custom_report_folders_are_git_ignored():
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    paths = {
        "reports/rl_scaling/user/x/report.html": True,
        "reports/interval_estimates/dmc-user/x/report.html": True,
        "reports/interval_estimates/default-custom/x/report.html": True,
        "reports/interval_estimates/dmc-custom/x/report.html": True,
        "reports/interval_estimates/tiny/x/report.html": True,
        "reports/interval_estimates/default/x/report.html": False,
        "reports/interval_estimates/dmc/x/report.html": False,
        "reports/index.html": False,
    }
    for path, ignored in paths.items():
        rc = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=repo).returncode
        assert rc == (0 if ignored else 1), path


def test_every_study_declares_its_value_rules():
    """The studies' own parameter cells: resample counts, levels, choices and user files."""
    from scalinglab.paths import repo_root

    for name in (
        "interval_estimates",
        "rl_scaling",
        "gemm_cost_model",
        "sparsity_laws",
        "optimizer_comparison",
    ):
        p = load_study(name, root=repo_root() / "notebooks").parameters
        assert p["seed"].bounds == ((">=", 0),), name
        assert p["compute_class"].choices and "small" in p["compute_class"].choices, name
        assert [n for n, q in p.items() if q.file], f"{name}: no [file] parameter for user data"
        for n, q in p.items():
            if n.endswith("reps"):
                assert q.bounds and q.bounds[0][0] in (">=", ">"), (name, n)
            if n in ("level", "confidence"):
                assert q.bounds == ((">", 0), ("<", 1)), (name, n)


@pytest.mark.parametrize(
    "argv, match",
    [
        (("run", "--all", "--variant", "bogus"), "no study has variant 'bogus'"),
        (("run", "fixture_basic", "--timeout", "-1"), "--timeout must be > 0 seconds, got -1.0"),
        (("reports", "prune", "--keep", "0"), "--keep must be >= 1"),
    ],
)
def test_bad_run_and_prune_options_exit_2_doing_nothing(root, monkeypatch, capsys, argv, match):
    def no_kernel(*a, **k):
        raise AssertionError("a kernel was started")

    monkeypatch.setattr(pipeline, "execute_study", no_kernel)
    assert _main(monkeypatch, *argv) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1, err
    assert not any((root / "reports").iterdir())


def test_every_parameter_of_every_study_keeps_its_help_on_one_line():
    """A formatter that wraps ``name: type = value  # help`` in parentheses would drop the
    help and the value rules silently; the parameter cells are kept out of formatting."""
    from scalinglab.paths import repo_root

    for nb in sorted((repo_root() / "notebooks").glob("*.py")):
        params = load_study(nb.stem, root=nb.parent).parameters
        assert params, nb.name
        for p in params.values():
            assert p.help, f"{nb.name}: parameter {p.name} has no help text"


def test_retired_variant_is_refused_with_why_and_cannot_clash(root):
    src = (FIXTURES / "fixture_basic.py").read_text()
    header_end = "#     variants:\n"
    retired = src.replace(
        header_end, "#     retired:\n#       old: merged into shifted\n" + header_end
    )
    (root / "notebooks" / "ret.py").write_text(retired)
    study = load_study("ret")
    assert study.retired == {"old": "merged into shifted"} and "old" not in study.variants
    with pytest.raises(ParameterError, match="'old' is retired \\(merged into shifted\\)"):
        resolve_parameters(study, variant="old")
    clash = src.replace(header_end, "#     retired:\n#       shifted: gone\n" + header_end)
    (root / "notebooks" / "clash.py").write_text(clash)
    with pytest.raises(StudyError, match="'retired' names variant\\(s\\) \\['shifted'\\]"):
        load_study("clash")
