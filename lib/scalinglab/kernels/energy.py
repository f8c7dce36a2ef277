"""Energy of a piece of work, where the machine exposes a power counter.

Two sources, tried in order:

- **RAPL** (Intel/AMD CPUs on Linux): ``/sys/class/powercap/intel-rapl:*/energy_uj``,
  cumulative microjoules per CPU package (wraps at ``max_energy_range_uj``).
  Often absent or unreadable in virtual machines and containers.
- **NVML** (NVIDIA GPUs, through the optional ``pynvml`` package):
  ``nvmlDeviceGetTotalEnergyConsumption``, cumulative millijoules per GPU.

:func:`energy_source` says which one is usable (or why none is), and
:class:`EnergyMeter` measures joules over a ``with`` block. When no counter is
available the meter's ``joules`` is None and ``reason`` says why, so a study can
state plainly that energy could not be measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

POWERCAP = Path("/sys/class/powercap")


@dataclass(frozen=True)
class EnergySource:
    """A usable energy counter: ``kind`` is ``"rapl"`` or ``"nvml"``; ``where`` what it reads."""

    kind: str
    where: str


def _rapl_domains() -> list[Path]:
    if not POWERCAP.is_dir():
        return []
    out = []
    for d in sorted(POWERCAP.glob("intel-rapl:*")):
        if d.name.count(":") == 1 and (d / "energy_uj").is_file():  # packages, not sub-zones
            out.append(d)
    return out


def _read_uj(domain: Path) -> int:
    return int((domain / "energy_uj").read_text().strip())


def _nvml_handles() -> list:
    import pynvml  # optional; ImportError means no NVML

    pynvml.nvmlInit()
    return [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]


def energy_source() -> tuple[EnergySource | None, str]:
    """The energy counter this machine offers, and a sentence describing it or its absence."""
    domains = _rapl_domains()
    if domains:
        try:
            for d in domains:
                _read_uj(d)
            return EnergySource("rapl", ", ".join(str(d) for d in domains)), (
                f"CPU package energy from RAPL ({len(domains)} package(s))"
            )
        except OSError as exc:
            rapl_reason = f"RAPL counters exist but cannot be read ({exc.strerror})"
    else:
        rapl_reason = f"no RAPL counters under {POWERCAP}"
    try:
        handles = _nvml_handles()
        if handles:
            import pynvml

            for h in handles:
                pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
            return EnergySource("nvml", f"{len(handles)} GPU(s)"), "GPU energy from NVML"
        nvml_reason = "NVML sees no GPU"
    except ImportError:
        nvml_reason = "pynvml is not installed"
    except Exception as exc:  # NVMLError and friends
        nvml_reason = f"NVML unavailable ({exc})"
    return None, f"energy could not be measured: {rapl_reason}; {nvml_reason}"


class EnergyMeter:
    """Joules used during a ``with`` block, or None with the reason.

    Examples
    --------
    >>> with EnergyMeter() as meter:
    ...     work()
    >>> meter.joules, meter.reason
    """

    def __init__(self) -> None:
        self.source, self.reason = energy_source()
        self.joules: float | None = None
        self._start: list[int] = []

    def _read(self) -> list[int]:
        if self.source is None:
            return []
        if self.source.kind == "rapl":
            return [_read_uj(d) for d in _rapl_domains()]
        import pynvml

        return [pynvml.nvmlDeviceGetTotalEnergyConsumption(h) for h in _nvml_handles()]

    def __enter__(self) -> EnergyMeter:
        self._start = self._read()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.source is None:
            return
        end = self._read()
        if self.source.kind == "rapl":
            total = 0
            for d, a, b in zip(_rapl_domains(), self._start, end, strict=True):
                wrap = int((d / "max_energy_range_uj").read_text().strip())
                total += (b - a) % (wrap + 1)
            self.joules = total * 1e-6
        else:
            self.joules = sum(b - a for a, b in zip(self._start, end, strict=True)) * 1e-3
