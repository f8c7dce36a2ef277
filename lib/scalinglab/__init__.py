"""Scaling Lab: reproducible studies of compute scaling in machine learning.

The package is organised one concept per module (see ``README.md`` and the
architecture map): ``stats`` and ``fitting`` turn runs into findings,
``studies`` hold each study's experiments and analysis, ``runner`` turns a study notebook into a versioned
report, and ``cli`` is a thin shell over all of them.
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
