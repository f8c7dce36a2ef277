"""Errors a user can act on.

Every error caused by input names what to fix: the file, the column and the row
(1-based data row, header excluded) where that makes sense. The CLI prints these
without a traceback and exits with status 2.
"""

from __future__ import annotations

from pathlib import Path


class ScalingLabError(Exception):
    """Base class of errors the CLI reports as a one-line message."""


class InputError(ScalingLabError, ValueError):
    """Bad user input, located as precisely as possible.

    Parameters
    ----------
    message
        What is wrong and, ideally, how to fix it.
    file, column, row
        Where it is wrong. ``row`` is the 1-based data row (the header is row 0),
        matching what a spreadsheet shows minus one.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        column: str | None = None,
        row: int | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.column = column
        self.row = row
        self.reason = message
        where = []
        if self.file is not None:
            where.append(f"file {self.file}")
        if column is not None:
            where.append(f"column {column!r}")
        if row is not None:
            where.append(f"row {row}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ParameterError(ScalingLabError, ValueError):
    """A study parameter is unknown or has the wrong type."""


class StudyError(ScalingLabError):
    """A study notebook is missing or malformed, or its run failed."""


class ExperimentRefused(StudyError):
    """An experiment would run where only committed results may be read (``scalinglab
    verify`` sets :data:`scalinglab.compute.NO_EXPERIMENTS_ENV`); the message names the
    study's dataset that would have been computed and its config."""


class StorageError(StudyError):
    """A run could not be written (the disk is full, read-only or over quota).

    Raised after the half-written run folder is removed, so nothing is left ``running``
    and no earlier report is touched; the message names the folder and the cause.
    """
