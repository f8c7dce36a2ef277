"""TeX in markdown cells -> MathML, so reports show formulas offline.

nbconvert leaves ``$...$`` for MathJax, which a self-contained report cannot load
from a CDN. Browsers render MathML natively, so before export each markdown
cell's inline ``$...$`` and display ``$$...$$`` math is converted with
``latex2mathml`` (a maintained converter; nothing here parses TeX by hand).
Code spans and fenced code blocks are left alone, as is any formula the converter
rejects (it then shows as TeX source, as before).
"""

from __future__ import annotations

import re

import latex2mathml.converter

#: Fenced code blocks and inline code spans: never touched.
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
#: ``$$display$$`` or ``$inline$`` (no newline, not an escaped ``\$``, no space
#: just inside the dollars, so "$5 and $6" is not read as math).
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$(?!\d)", re.S)


def _convert(match: re.Match) -> str:
    display, inline = match.group(1), match.group(2)
    tex = display if display is not None else inline
    try:
        mathml = latex2mathml.converter.convert(
            tex.strip(), display="block" if display is not None else "inline"
        )
    except Exception:  # a formula the converter does not know stays as TeX source
        return match.group(0)
    return mathml


def tex_to_mathml(markdown: str) -> str:
    """Replace ``$...$`` / ``$$...$$`` math in ``markdown`` by MathML, outside code."""
    parts = _CODE.split(markdown)
    return "".join(p if i % 2 else _MATH.sub(_convert, p) for i, p in enumerate(parts))
