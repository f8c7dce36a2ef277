"""HTML export of an executed study: one self-contained, deterministic page, findings first.

nbconvert's ``HTMLExporter`` (JupyterLab template) renders the notebook with
images embedded. The Jinja template ``templates/report.html.j2`` extends the lab one:
it removes every script the stock template fetches from a CDN (require.js, MathJax,
mermaid, widgets), so the page reads offline, inlines the one stylesheet
``templates/report.css``, puts a provenance header and the findings above the
notebook body, and folds every code cell in a ``<details>`` element (closed; a
button opens them all), so one ``report.html`` serves readers of the prose and of
the code alike.

:func:`write_report` is the only way from an executed notebook to the report file:
a run that executed the notebook and a render-only run (prose edited,
:mod:`scalinglab.runner.render`) both go through it and :func:`export_html`, so a
step added there applies to both.

The same science gives byte-identical HTML: before export the notebook is
normalised (cell ids ``cell-0``, ``cell-1``...; papermill metadata,
execution timestamps and stderr run notes (progress bars, timings, cache notes) removed;
warnings and errors stay) and nothing clock- or run-specific (run id,
dates, durations) is written into the page; those live in the manifest and the
index.

The header reads as a reviewer would: the claims ledger first (each published
claim with its computed verdict), then at most twelve headline findings with a
forest plot of their intervals, then every finding in a collapsed table, then the
interval coverage section (each interval method the findings use, with its simulated
coverage at their sample size, :mod:`scalinglab.stats.coverage_report`). NaN
cells show a dash with a footnote; wide tables (the header's and the notebook's
own outputs) scroll inside the page.
"""

from __future__ import annotations

import base64
import copy
import html
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalinglab import atomic
from scalinglab.findings_view import coverage_html, findings_html
from scalinglab.ledger import ledger_html, summary_scoped_text
from scalinglab.provenance import sha256_bytes
from scalinglab.results_file import load_claims
from scalinglab.runner.mathml import tex_to_mathml
from scalinglab.runner.prose_cells import prepare_cells
from scalinglab.runner.store import RunStatus
from scalinglab.stats.coverage_report import report_coverage

#: The report's Jinja template (extends nbconvert's lab template) and its one stylesheet.
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report.html.j2"
CSS = (TEMPLATES_DIR / "report.css").read_text(encoding="utf-8")

#: The one page a run writes (code folded in it); runs before it also wrote ``report-code.html``.
REPORT_FILE = "report.html"
#: The shared stylesheet's name in the reports folder: ``report-<first 12 of its SHA-256>.css``.
SHARED_CSS = "report-{}.css"
#: Every ``<style>`` element of the page's ``<head>`` (nbconvert's lab CSS, pygments, ours).
_HEAD_STYLE = re.compile(r'\s*<style type="text/css">(.*?)</style>', re.S)


#: A tqdm progress line: "label:  25%|##5       | 8/32 [00:00<00:00, 32.65task/s]".
_PROGRESS = re.compile(r"\d+%\|.*\|\s*[\d.]+[kMG]?/[\d.?]+[kMG]?\s*\[")


#: A line of stderr that the report keeps: a warning or an error (``UserWarning: ...``).
_KEPT_STDERR = re.compile(r"\b[A-Z]\w*(?:Warning|Error)\b")


def _is_progress(output: Any) -> bool:
    """stderr that is run notes, not science: tqdm bars, timings and ETAs, "reusing ..."
    cache notes, blank remains of cleared bars (anything without a warning or error line).
    The library writes such notes to stderr, so a run that computed an experiment and
    one that reused its cache give the same report."""
    if output.get("output_type") != "stream" or output.get("name") != "stderr":
        return False
    lines = [ln for ln in re.split(r"[\r\n]", output.get("text", "")) if ln.strip()]
    return not any(_KEPT_STDERR.search(ln) and not _PROGRESS.search(ln) for ln in lines)


def normalise_notebook(nb: Any) -> Any:
    """A copy of ``nb`` without run-specific noise.

    Cell ids become ``cell-<index>``; papermill metadata (notebook and cells),
    nbclient execution timestamps and jupytext metadata are dropped, and so are
    stderr outputs made only of tqdm progress lines (they carry rates and clock
    times). Every other output is kept as it is. TeX math in markdown cells becomes
    MathML (:mod:`scalinglab.runner.mathml`) so the offline report shows formulas.
    """
    out = copy.deepcopy(nb)
    for key in ("papermill", "jupytext"):
        out.metadata.pop(key, None)
    for i, cell in enumerate(out.cells):
        cell["id"] = f"cell-{i}"
        for key in ("papermill", "execution", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not _is_progress(o)]
        elif cell.cell_type == "markdown":
            cell.source = tex_to_mathml(cell.source)
    return out


def provenance_header(
    *,
    title: str,
    description: str,
    study: str,
    variant: str,
    parameters: dict[str, Any],
    commit: str | None,
    dirty: bool,
    version: str,
    findings: Sequence[dict],
    claims: Sequence[dict] = (),
    status: str = RunStatus.OK,
    error: str | None = None,
) -> str:
    """The block shown above the notebook body: title, provenance, ledger and findings.

    Parameters
    ----------
    findings
        The ``findings`` list of ``results.json``.
    claims
        The ``claims`` list of ``results.json`` (the ledger, shown first).
    status, error
        A run that is not ``ok`` gets a banner with its error.
    """
    esc = html.escape
    params = ", ".join(f"{k}={v!r}" for k, v in parameters.items())
    commit_txt = esc(commit[:12]) if commit else "not a git checkout"
    dirty_txt = '<span class="sl-dirty">yes (uncommitted changes)</span>' if dirty else "no"
    rows = [
        ("study", f"<code>{esc(study)}</code>, variant <code>{esc(variant)}</code>"),
        ("commit", f"<code>{commit_txt}</code>"),
        ("dirty", dirty_txt),
        ("parameters", f"<code>{esc(params)}</code>"),
        ("scalinglab", esc(version)),
    ]
    prov = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    desc = f'<p class="sl-desc">{esc(description)}</p>' if description else ""
    if status != RunStatus.OK:
        desc += (
            f'<div class="sl-failed"><b>This run {esc(status)}.</b>'
            f"<pre>{esc(error or '')}</pre></div>"
        )
    claims = list(claims)
    ledger = "<h2>Claims ledger</h2>"
    if claims:
        ledger += (
            f'<p class="sl-summary">{esc(summary_scoped_text(claims))}: each published claim '
            "this study tests, with the verdict its findings give (computed from the "
            "intervals, never typed).</p>"
        )
    ledger += ledger_html(claims, findings)
    return (
        '<header class="sl-header">'
        f"<h1>{esc(title)}</h1>{desc}"
        f'<div class="sl-scroll"><table class="sl-prov">{prov}</table></div>'
        f"{ledger}{_findings_block(list(findings), claims)}{coverage_block(list(findings))}"
        "</header>"
    )


def _findings_block(findings: list[dict], claims: Sequence[dict] = ()) -> str:
    """Headline findings with a forest plot; every finding in a collapsed table below.

    A study with no headline and at most 12 findings shows them in one open table.
    """
    if not findings:
        return "<h2>Findings</h2><p>No findings recorded.</p>"
    headline = [f for f in findings if f.get("headline")]
    unident = sum(1 for f in findings if not f.get("identified", True))
    extra = f", {unident} not identified" if unident else ""
    if not headline and len(findings) <= 12:
        return f"<h2>Findings</h2>{findings_html(findings)}"
    out = ""
    if headline:
        out += f"<h2>Headline findings</h2>{forest_html(headline, claims)}{findings_html(headline)}"
    return (
        out + f'<details class="sl-all"><summary>All {len(findings)} findings'
        f"{extra}</summary>{findings_html(findings)}</details>"
    )


def coverage_block(findings: Sequence[dict]) -> str:
    """The "Interval coverage" section: each interval method the findings use, at its
    sample size, with its simulated coverage (:mod:`scalinglab.stats.coverage_report`)
    or "coverage not measured"; '' when no finding has an interval."""
    rows = report_coverage(findings)
    if not rows:
        return ""
    return (
        "<h2>Interval coverage</h2>"
        '<p class="sl-summary">Each interval method this report uses, at the sample size '
        "(n: seeds, runs or draws) its findings rest on, with the share of simulated data "
        "sets whose nominal interval contains the truth (± its Monte Carlo standard error; "
        "the lowest over a normal and a skewed generator, or over Bernoulli p for a "
        "share). A method or sample size without a simulation says so.</p>" + coverage_html(rows)
    )


def forest_html(findings: Sequence[dict], claims: Sequence[dict] = ()) -> str:
    """The forest plot of ``findings`` as an embedded PNG ``<img>`` ('' when nothing to plot).

    The PNG carries no software or date metadata, so the same findings give the
    same bytes.
    """
    from scalinglab.plots.forest import forest_plot

    try:
        fig = forest_plot(findings, claims=claims)
    except ValueError:  # no finding with a point estimate
        return ""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<img class="sl-forest" alt="forest plot of the headline findings" '
        f'src="data:image/png;base64,{data}">'
    )


def export_html(nb: Any, *, title: str, header: str) -> str:
    """Render a normalised notebook to one self-contained HTML page, code cells folded.

    Parameters
    ----------
    nb
        The executed notebook (normalised by :func:`normalise_notebook` here).
    title
        The page ``<title>``.
    header
        HTML placed at the top of the body (see :func:`provenance_header`).
    """
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="lab",
        template_file=TEMPLATE_NAME,
        extra_template_paths=[str(TEMPLATES_DIR)],
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
    )
    resources = {"metadata": {"name": title}, "scalinglab_header": header, "scalinglab_css": CSS}
    body, _ = exporter.from_notebook_node(normalise_notebook(nb), resources=resources)
    return body


def share_stylesheet(page: str, *, folder: Path, reports_root: Path) -> tuple[str, Path]:
    """Move the page's stylesheets into one file shared by every report, linked relatively.

    The ``<style>`` elements of the page's ``<head>`` (about 260 kB: JupyterLab's CSS,
    the code-highlighting rules and :data:`CSS`) are joined, in their order, into
    ``reports_root/report-<sha12>.css`` (written once, atomically, when absent) and
    replaced by one ``<link>`` whose path is relative to ``folder``. A report at
    ``reports/<study>/<variant>/<version>/report.html`` links ``../../../report-<sha12>.css``,
    which also resolves from ``latest/`` (a link to a sibling version folder) and when the
    file is opened from disk. The name carries the content's hash, so a report keeps the
    look it was written with when a newer nbconvert or stylesheet writes another file.

    Returns
    -------
    page, path
        The page with the link, and the stylesheet's path.
    """
    head_end = page.find("</head>")
    head, rest = (page[:head_end], page[head_end:]) if head_end >= 0 else (page, "")
    css = "\n".join(m.group(1).strip("\n") for m in _HEAD_STYLE.finditer(head)) + "\n"
    path = Path(reports_root) / SHARED_CSS.format(sha256_bytes(css.encode("utf-8"))[:12])
    if not path.is_file() or path.read_text(encoding="utf-8") != css:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, css)
    href = Path(os.path.relpath(path, Path(folder))).as_posix()
    link = f'\n<link rel="stylesheet" type="text/css" href="{html.escape(href)}">'
    first = True

    def swap(_: re.Match) -> str:
        nonlocal first
        out, first = (link if first else ""), False
        return out

    return _HEAD_STYLE.sub(swap, head) + rest, path


def write_report(
    folder: Path,
    nb: Any,
    *,
    title: str,
    description: str,
    study: str,
    variant: str,
    parameters: dict[str, Any],
    git: dict[str, Any],
    version: str,
    findings: Sequence[dict],
    status: str = RunStatus.OK,
    error: str | None = None,
    reports_root: Path | None = None,
) -> str:
    """Write ``folder/report.html`` (atomically) from the executed notebook ``nb``.

    The claims come from ``folder/results.json`` (its ``claims`` list), the findings are
    the ones given. Returns the page's SHA-256 (the manifest's ``report_html_sha256``).
    With ``reports_root`` (the folder holding ``<study>/<variant>/<version>/``) the page
    links the stylesheet shared by every report there (:func:`share_stylesheet`) instead
    of inlining it; without, the page is self-contained.
    """
    results = folder / "results.json"
    nb = prepare_cells(
        nb, findings=findings, variant=variant, strict=status == RunStatus.OK, study=study
    )
    header = provenance_header(
        title=title,
        description=description,
        study=study,
        variant=variant,
        parameters=parameters,
        commit=git.get("commit"),
        dirty=bool(git.get("dirty")),
        version=version,
        findings=findings,
        claims=load_claims(results) if results.is_file() else [],
        status=status,
        error=error,
    )
    page = export_html(nb, title=title, header=header)
    if reports_root is not None:
        page, _ = share_stylesheet(page, folder=folder, reports_root=reports_root)
    data = page.encode("utf-8")
    atomic.write_bytes(folder / REPORT_FILE, data)
    return sha256_bytes(data)


def external_references(page: str) -> list[str]:
    """``src``/``href`` URLs of ``<script>``/``<link>`` tags pointing off the page (http...)."""
    pattern = r"<(?:script|link)\b[^>]*?\b(?:src|href)\s*=\s*[\"']?((?:https?:)?//[^\"'\s>]+)"
    return re.findall(pattern, page, flags=re.I)
