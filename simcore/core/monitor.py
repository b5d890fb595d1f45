"""Queue monitoring: sample chosen queues of a running model at a fixed period.

Like the Netmon monitor of Solsona et al. (its ``-d`` sampling period and ``-t`` monitoring
time), a :class:`Monitor` reads every probe at times 0, d, 2d, ... up to and including t (or
until the run ends, if sooner) and keeps the readings as a time series. A probe is a function of
no argument returning a number, e.g. ``lambda: len(pool.queue)``; models name theirs
(``queue_probes(system)``). A sample is taken after every event due at the same instant, so it
shows the state the instant settles in.
"""

from __future__ import annotations

import math
from typing import Callable

import pandas as pd

from simcore.core.engine import Engine
from simcore.errors import InputError


class Monitor:
    """Samples ``probes`` every ``period`` time units for ``duration`` (``samples``: rows of
    (time, probe name, value))."""

    def __init__(self, engine: Engine, probes: dict[str, Callable[[], float]], period: float, duration: float):
        if not (math.isfinite(period) and period > 0):
            raise InputError(f"monitor: the sampling period {period!r} is not a positive number.")
        if not (math.isfinite(duration) and duration >= 0):
            raise InputError(f"monitor: the monitoring time {duration!r} is not a non-negative number.")
        if not probes:
            raise InputError("monitor: no queue to sample.")
        self.engine = engine
        self.probes = dict(probes)
        self.period = float(period)
        self.duration = float(duration)
        self.samples: list[tuple[float, str, float]] = []
        self._k = 0

    def start(self) -> None:
        """Arm the first sample (at the engine's current time, normally 0)."""
        self.origin = self.engine.now
        self._arm()

    def _arm(self) -> None:
        at = self.origin + self._k * self.period
        if at > self.origin + self.duration + 1e-9 * self.period:
            return
        self.engine.schedule(at - self.engine.now, self._settled)

    def _settled(self) -> None:
        """Due now: sample once every event of this instant has fired (a zero delay goes last)."""
        self.engine.schedule(0.0, self._sample)

    def _sample(self) -> None:
        now = self.engine.now
        for name, probe in self.probes.items():
            self.samples.append((now, name, float(probe())))
        self._k += 1
        self._arm()

    def frame(self) -> pd.DataFrame:
        """The series as a table: ``time``, ``queue``, ``value``."""
        return pd.DataFrame(self.samples, columns=["time", "queue", "value"])


def monitored(run: Callable[[Callable], object], probes: Callable[[object], dict], period: float,
              duration: float) -> pd.DataFrame:
    """Call ``run(attach)`` (a model's simulate) with a Monitor of ``probes(system)`` attached
    when the run starts; the sampled table."""
    monitors: list[Monitor] = []

    def attach(engine: Engine, system) -> None:
        monitors.append(Monitor(engine, probes(system), period, duration))
        monitors[0].start()

    run(attach)
    return monitors[0].frame()


def parse_monitor(text: str) -> tuple[float, float]:
    """'PERIOD:TIME' (e.g. '10:5000') -> (period, duration); bad text is an InputError."""
    try:
        period, duration = (float(x) for x in text.split(":"))
    except ValueError:
        raise InputError(f"--monitor {text!r}: give PERIOD:TIME, two numbers such as 10:5000.") from None
    if not (math.isfinite(period) and period > 0 and math.isfinite(duration) and duration >= 0):
        raise InputError(f"--monitor {text!r}: the period must be positive and the time non-negative.")
    return period, duration
