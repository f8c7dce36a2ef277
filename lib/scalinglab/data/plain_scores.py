"""Plain score files read with the standard library and numpy only.

``scalinglab intervals`` on rliable-style JSON files (the paper's own format,
one file per algorithm) with a CSV of reference scores spends most of its
start-up importing pandas, xarray and, through xarray, dask (about a second of
CPU on a small machine). This module reads such inputs without them when they
are *plain*, and answers ``None`` for anything else; the caller then reads them
with :func:`scalinglab.data.scores.load_scores` and
:func:`~scalinglab.data.scores.load_references`, which read every format and
word every error and warning. So a plain input gives exactly what those give
(``tests/test_data_plain_scores.py`` compares them), and any other input takes
their path unchanged.

Plain scores: every path is an existing ``.json`` file holding a non-empty
object ``{task: [run scores]}``, each list non-empty, each score a finite
``int`` or ``float`` (not ``null``, ``NaN`` or a boolean); the files' stems (the
algorithms) are distinct, every file has the same set of tasks, and some task
has two runs or more.

Plain references: a ``.csv`` file in UTF-8 whose header is the three columns
``task``, ``random``, ``reference`` (any order), with one row per task and no
blank row; labels that pandas would read as they are (not numbers, booleans or
missing-value markers, no surrounding space), distinct; scores written as plain
decimals (``-12.5``, ``7127``) of at most 15 significant and 22 decimal digits,
which pandas' parser and ``float`` both round correctly, and ``random !=
reference``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["NAN_POLICIES", "PlainScores", "read_plain_references", "read_plain_scores"]

#: NaN score policies of :func:`scalinglab.data.scores.load_scores`.
NAN_POLICIES = ("error", "drop")

_DECIMAL = re.compile(r"[+-]?(\d+)(?:\.(\d+))?")
_LABEL = re.compile(r"[A-Za-z_][\w\-.:/()+ ]*")
#: Labels pandas would read as missing values, booleans or infinities.
_SPECIAL = {"nan", "na", "n/a", "null", "none", "true", "false", "inf", "infinity", "nat"}


@dataclass(frozen=True)
class PlainScores:
    """Scores of plain files, as :func:`~scalinglab.data.scores.load_scores` gives them.

    Attributes
    ----------
    algorithms
        ``A`` names (file stems), in the order of the files.
    tasks
        ``T`` task labels, in the order of the first file.
    values
        Shape ``(A, R, T)``, float64; run ``r < n`` of a task with ``n`` runs,
        NaN (absent run) below.
    """

    algorithms: list[str]
    tasks: list[str]
    values: np.ndarray

    def normalized(self, random: dict[str, float], reference: dict[str, float]) -> PlainScores:
        """``(values - random) / (reference - random)`` per task, as ``normalize``.

        Raises
        ------
        KeyError
            If a task has no reference score.
        """
        lo = np.array([random[t] for t in self.tasks])
        hi = np.array([reference[t] for t in self.tasks])
        return PlainScores(self.algorithms, self.tasks, (self.values - lo) / (hi - lo))


def _plain_json(path: Path) -> dict[str, list[Any]] | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, OSError):
        return None
    if not isinstance(data, dict) or not data:
        return None
    for runs in data.values():
        if not isinstance(runs, list) or not runs:
            return None
        for value in runs:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            try:
                if not math.isfinite(value):
                    return None
            except OverflowError:
                return None
    return data


def read_plain_scores(paths: str | Path | list[str] | list[Path]) -> PlainScores | None:
    """Read plain rliable-style JSON score files (see the module docstring).

    Parameters
    ----------
    paths
        One path or a list of paths.

    Returns
    -------
    PlainScores or None
        ``None`` unless every file is plain.
    """
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not items or any(p.suffix.lower() != ".json" or not p.is_file() for p in items):
        return None
    algorithms = [p.stem for p in items]
    if len(set(algorithms)) != len(algorithms):
        return None
    tables: list[dict[str, list[Any]]] = []
    for path in items:
        data = _plain_json(path)
        if data is None or (tables and set(data) != set(tables[0])):
            return None
        tables.append(data)
    tasks = list(tables[0])
    runs = max(len(v) for table in tables for v in table.values())
    if runs < 2:
        return None
    values = np.full((len(items), runs, len(tasks)), np.nan)
    try:
        for a, table in enumerate(tables):
            for t, task in enumerate(tasks):
                column = [float(v) for v in table[task]]
                values[a, : len(column), t] = column
    except OverflowError:
        return None
    return PlainScores(algorithms, tasks, values)


def _plain_number(text: str) -> float | None:
    match = _DECIMAL.fullmatch(text)
    if match is None:
        return None
    digits = (match.group(1) + (match.group(2) or "")).lstrip("0")
    if len(digits) > 15 or len(match.group(2) or "") > 22:
        return None
    value = float(text)
    if value == 0 and text.startswith("-"):
        return None  # pandas reads an integer "-0" as 0
    return value


def read_plain_references(path: str | Path) -> tuple[dict[str, float], dict[str, float]] | None:
    """Read a plain CSV of reference scores (see the module docstring).

    Parameters
    ----------
    path
        The ``.csv`` file.

    Returns
    -------
    tuple of dict or None
        ``({task: random}, {task: reference})`` as
        :func:`~scalinglab.data.scores.load_references` gives it; ``None`` unless
        the file is plain.
    """
    p = Path(path)
    if p.suffix.lower() != ".csv" or not p.is_file():
        return None
    try:
        text = p.read_bytes().decode("utf-8")
    except (UnicodeDecodeError, OSError):
        return None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or sorted(rows[0]) != ["random", "reference", "task"]:
        return None
    col = {name: i for i, name in enumerate(rows[0])}
    random: dict[str, float] = {}
    reference: dict[str, float] = {}
    for row in rows[1:]:
        if len(row) != 3:
            return None
        task = row[col["task"]]
        lo = _plain_number(row[col["random"]])
        hi = _plain_number(row[col["reference"]])
        if _LABEL.fullmatch(task) is None or task != task.strip() or task.lower() in _SPECIAL:
            return None
        if lo is None or hi is None or lo == hi or task in random:
            return None
        random[task] = lo
        reference[task] = hi
    return (random, reference) if random else None
