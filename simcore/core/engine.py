"""A thin wrapper around a SimPy environment for callback-style, cancellable timers.

Models schedule plain callbacks instead of generator processes: it is the cheapest way to use
the SimPy kernel, and a cancelled timer costs one ignored event instead of a process interrupt.
"""

from __future__ import annotations

from typing import Callable

import simpy


class Timer:
    """A scheduled callback; ``cancel()`` makes it a no-op when it fires."""

    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]):
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Engine:
    """SimPy environment plus an event counter and cancellable timers."""

    def __init__(self) -> None:
        self.env = simpy.Environment()
        self.events = 0

    @property
    def now(self) -> float:
        return self.env.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback()`` after ``delay`` time units unless the returned timer is cancelled."""
        timer = Timer(callback)
        event = self.env.timeout(delay)
        event.callbacks.append(lambda _event: self._fire(timer))
        return timer

    def _fire(self, timer: Timer) -> None:
        if not timer.cancelled:
            self.events += 1
            timer.callback()

    def run(self, until: float | None = None) -> None:
        """Run until no event is left, or until simulated time ``until``."""
        self.env.run(until=until)
