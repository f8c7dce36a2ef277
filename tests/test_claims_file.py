"""Claims as data: a study's claims file, decided from recorded findings."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import scalinglab.record as rec
from scalinglab.claims import decide
from scalinglab.claims_file import (
    ClaimsFileError,
    claims_for,
    claims_markdown,
    read_claims_file,
    sync_docs,
)
from scalinglab.estimate import Estimate

ROOT = Path(__file__).resolve().parents[1]

FILE = textwrap.dedent("""\
    [sources]
    P = "Someone et al. 2024"

    [[claim]]
    id = "C-1"
    source = "P"
    statement = "grows at every size"
    findings = ["slope/{sizes}"]
    expect = "greater"
    value = 0.0
    scope = "paper"
    regime = "outside: our small models"

    [[claim]]
    id = "order/{x}>{y}"
    source = "P"
    statement = "{x} beats {y}"
    findings = "poi/{x}_vs_{y}"
    each = "pairs"
    expect = "greater"
    value = "{half}"

    [[claim]]
    id = "C-3"
    source = "A citation typed in full"
    statement = "costs less"
    findings = ["cost/x"]
    expect = "less"
    value = 0
    if_missing = "no cost data"

    [[claim]]
    id = "C-4"
    source = "P"
    statement = "a figure"
    untested = "not a number"
    """)


@pytest.fixture
def claims_path(tmp_path):
    p = tmp_path / "study.toml"
    p.write_text(FILE)
    return p


def _found(*names, lo=0.1, hi=0.9):
    return {n: {"name": n, "point": (lo + hi) / 2, "ci": [lo, hi], "level": 0.95} for n in names}


def test_templates_expand_and_each_repeats_a_claim(claims_path):
    found = _found("slope/s", "slope/m", "poi/a_vs_b", "poi/b_vs_c", "cost/x")
    cs = claims_for(
        claims_path,
        {"sizes": ["s", "m"], "pairs": [{"x": "a", "y": "b"}, {"x": "b", "y": "c"}], "half": 0.5},
        found,
    )
    assert [c.id for c in cs] == ["C-1", "order/a>b", "order/b>c", "C-3", "C-4"]
    assert cs[0].findings == ("slope/s", "slope/m") and cs[0].paper == "Someone et al. 2024"
    assert cs[0].scope == "paper" and cs[0].regime.startswith("outside")
    assert cs[1].statement == "a beats b" and cs[1].value == 0.5
    assert cs[3].paper == "A citation typed in full" and cs[3].untested is None
    assert cs[4].untested == "not a number"


def test_a_claim_whose_finding_is_not_recorded_is_refused_naming_file_and_id(claims_path):
    found = _found("slope/s", "poi/a_vs_b", "cost/x")  # slope/m missing
    with pytest.raises(ClaimsFileError, match=r"study\.toml, claim 'C-1'.*slope/m"):
        claims_for(
            claims_path, {"sizes": ["s", "m"], "pairs": [{"x": "a", "y": "b"}], "half": 0.5}, found
        )


def test_if_missing_makes_the_claim_untested_with_its_reason(claims_path):
    found = _found("slope/s", "poi/a_vs_b")
    values = {"sizes": ["s"], "pairs": [{"x": "a", "y": "b"}], "half": 0.5}
    cs = claims_for(claims_path, values, found)
    assert cs[2].id == "C-3" and cs[2].untested == "no cost data"
    # the ledger still states the rule it would be decided by; a plain untested has none
    assert cs[2].rule == "untested; would be decided by effect < 0"
    assert cs[2].findings == ("cost/x",) and cs[2].contradicted_by == ""
    assert cs[3].rule == "untested"
    v = decide(cs[2], found)
    assert v.verdict == "untested" and v.reason == "no cost data" and v.evidence == ()


def test_a_template_value_not_passed_is_named(claims_path):
    with pytest.raises(ClaimsFileError, match=r"claim 'C-1'.*'sizes'"):
        claims_for(claims_path, {}, {})


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('[[claim]]\nid = "A"\nsource = "P"\nstatement = "s"\nfinding = "x"\n', "unknown key"),
        ('[[claim]]\nid = "A"\nsource = "P"\nstatement = "s"\n', "name the finding"),
        (
            '[[claim]]\nid = "A"\nsource = "P"\nstatement = "s"\nfindings = "x"\nexpect = "gt"\n',
            "expect",
        ),
        ('[[claim]]\nid = "A"\nstatement = "s"\nuntested = "r"\n', "source is required"),
        ("[[claim]\n", "not valid TOML"),
    ],
)
def test_malformed_files_are_refused(tmp_path, text, match):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ClaimsFileError, match=match):
        read_claims_file(p)


def test_claims_from_declares_the_files_claims_into_results_json(
    claims_path, tmp_path, monkeypatch
):
    monkeypatch.setenv(rec.RESULTS_ENV, str(tmp_path / "results.json"))
    rec.clear()
    rec.record("slope/s", Estimate(0.6, 0.55, 0.7, level=0.95))
    rec.record("poi/a_vs_b", Estimate(0.6, 0.55, 0.7, level=0.95))
    rec.record("cost/x", Estimate(-0.5, -1.0, -0.1, level=0.95))
    verdicts = rec.claims_from(claims_path, sizes=["s"], pairs=[{"x": "a", "y": "b"}], half=0.5)
    # C-1 is a paper's claim tested outside its regime: it cannot "reproduce" there
    assert [v.verdict for v in verdicts] == [
        "holds at our scale",
        "reproduces",
        "reproduces",
        "untested",
    ]
    saved = json.loads((tmp_path / "results.json").read_text())["claims"]
    assert [c["id"] for c in saved] == ["C-1", "order/a>b", "C-3", "C-4"]
    assert saved[0]["scope"] == "paper" and saved[1]["scope"] is None
    rec.clear()
    # without cost/x, C-3 is untested by its if_missing reason, and stays in the ledger
    rec.record("slope/s", Estimate(0.6, 0.55, 0.7, level=0.95))
    rec.record("poi/a_vs_b", Estimate(0.6, 0.55, 0.7, level=0.95))
    rec.claims_from(claims_path, sizes=["s"], pairs=[{"x": "a", "y": "b"}], half=0.5)
    saved = json.loads((tmp_path / "results.json").read_text())["claims"]
    assert [c["id"] for c in saved] == ["C-1", "order/a>b", "C-3", "C-4"]
    assert saved[2]["verdict"] == "untested" and saved[2]["rule"].startswith("untested; would")
    rec.clear()


def test_every_study_claims_file_reads_and_every_doc_table_is_in_step():
    files = sorted((ROOT / "notebooks" / "claims").glob("*.toml"))
    assert files
    for f in files:
        assert read_claims_file(f) and claims_markdown(f).startswith("| claim |")
    stale = [d.name for d in (ROOT / "docs" / "studies").glob("*.md") if not sync_docs(d, ROOT)]
    assert not stale, f"regenerate with: python -m scalinglab.claims_file docs/studies/{stale[0]}"


def test_a_claim_stated_per_design_is_declared_for_the_notebooks_design(tmp_path):
    p = tmp_path / "designs.toml"
    p.write_text(
        '[[claim]]\nid = "G-1"\ndesign = "cpu"\nsource = "P"\nstatement = "on the CPU"\n'
        'findings = "cpu/x"\nexpect = "greater"\nvalue = 0\n'
        '[[claim]]\nid = "G-1"\ndesign = "gpperf"\nsource = "P"\nstatement = "on the tables"\n'
        'findings = "gp/x"\nexpect = "greater"\nvalue = 0\n'
    )
    (cpu,) = claims_for(p, {"design": "cpu"}, _found("cpu/x"))
    (gp,) = claims_for(p, {"design": "gpperf"}, _found("gp/x"))
    assert (cpu.statement, gp.statement) == ("on the CPU", "on the tables")
    with pytest.raises(ClaimsFileError, match="pass design"):
        claims_for(p, {}, {})
    p.write_text(p.read_text().replace('design = "gpperf"', 'design = "cpu"'))
    with pytest.raises(ClaimsFileError, match="repeated id in the same design"):
        read_claims_file(p)


def test_claim_value_reads_a_claims_threshold_and_names_the_file_and_id(tmp_path):
    from scalinglab.claims_file import ClaimsFileError, claim_value
    from scalinglab.paths import notebooks_dir

    tts = notebooks_dir() / "claims" / "test_time_scaling.toml"
    specs = {s.id: s.raw for s in read_claims_file(tts)}
    assert claim_value("test_time_scaling", "LLM-1") == float(specs["LLM-1"]["value"])
    assert claim_value(tts, "LLM-5") == float(specs["LLM-5"]["value"])  # a path works too
    with pytest.raises(ClaimsFileError, match=r"test_time_scaling\.toml: no claim 'NOPE-9'"):
        claim_value("test_time_scaling", "NOPE-9")
    with pytest.raises(ClaimsFileError, match=r"claim 'KIN-2'.*no 'value'"):
        claim_value("test_time_scaling", "KIN-2")  # untested: no threshold
    p = tmp_path / "c.toml"
    p.write_text(
        textwrap.dedent(
            """
            [[claim]]
            id = "A"
            source = "P"
            statement = "s"
            findings = ["x"]
            expect = "greater"
            value = 0.1
            design = ["one"]

            [[claim]]
            id = "A"
            source = "P"
            statement = "s"
            findings = ["x"]
            expect = "between"
            value = [0.2, 0.3]
            design = ["two"]
            """
        )
    )
    assert claim_value(p, "A", design="one") == 0.1
    with pytest.raises(ClaimsFileError, match="several designs.*pass design"):
        claim_value(p, "A")
    with pytest.raises(ClaimsFileError, match="not one number"):
        claim_value(p, "A", design="two")
