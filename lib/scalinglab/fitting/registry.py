"""The law registry: the built-in laws and the user's, by name.

:mod:`scalinglab.fitting.laws` says what a law is, :mod:`scalinglab.fitting.builtin_laws`
declares the laws the studies use, and this module names them (``scalinglab fit NAME``,
``fit("chinchilla", ...)``). The built-ins are registered when this module is imported,
in the order of :data:`~scalinglab.fitting.builtin_laws.BUILTIN_LAWS`; a user adds a law
with :func:`register_law`.
"""

from __future__ import annotations

from scalinglab.fitting.builtin_laws import BUILTIN_LAWS
from scalinglab.fitting.exp_power import LAW as EXP_POWER
from scalinglab.fitting.laws import Law

_REGISTRY: dict[str, Law] = {law.name: law for law in (*BUILTIN_LAWS, EXP_POWER)}


def register_law(law: Law, *, replace: bool = False) -> Law:
    """Add ``law`` to the registry (``replace=True`` to overwrite a name).

    Raises
    ------
    ValueError
        A law of that name is already registered and ``replace`` is False.
    """
    if law.name in _REGISTRY and not replace:
        raise ValueError(f"a law named {law.name!r} is already registered")
    _REGISTRY[law.name] = law
    return law


def get_law(law: str | Law) -> Law:
    """The registered law called ``law`` (a :class:`Law` passes through).

    Raises
    ------
    KeyError
        Unknown name (the message lists the known ones).
    """
    if isinstance(law, Law):
        return law
    try:
        return _REGISTRY[law]
    except KeyError:
        raise KeyError(f"unknown law {law!r}; known laws: {sorted(_REGISTRY)}") from None


def list_laws() -> dict[str, Law]:
    """All registered laws by name (built-ins first, then the user's in registration order)."""
    return dict(_REGISTRY)
