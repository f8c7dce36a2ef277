"""The runner's one rendering home: Jinja templates and one stylesheet for its HTML pages.

Templates live in ``scalinglab/runner/templates/`` (package data): ``index.html.j2``
(``reports/index.html``), ``diff.html.j2`` (the diff of two versions, a fragment the
index includes) and ``style.css``, the one stylesheet, inlined into each page so that
a page is one self-contained file, readable offline. Values are HTML-escaped
(autoescape); numbers are formatted by the filters ``num`` and ``ci``
(:func:`scalinglab.textfmt.fmt_num`, :func:`~scalinglab.textfmt.fmt_ci`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from scalinglab.textfmt import fmt_ci, fmt_num

TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment() -> jinja2.Environment:
    """The Jinja environment over :data:`TEMPLATES` (autoescaped, undefined names fail)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["num"] = fmt_num
    env.filters["ci"] = fmt_ci
    env.filters["css_class"] = lambda s: str(s).replace(" ", "-")
    return env


def stylesheet() -> str:
    """The one stylesheet (``templates/style.css``)."""
    return (TEMPLATES / "style.css").read_text(encoding="utf-8")


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>`` with ``context`` (``css`` is always available)."""
    return environment().get_template(template).render(css=stylesheet(), **context)
