"""A thin wrapper around a SimPy environment for callback-style, cancellable timers.

Models schedule plain callbacks instead of generator processes: it is the cheapest way to use
the SimPy kernel. A timer *is* the SimPy event that fires it (a light :class:`simpy.events.Event`
subclass put on the environment's queue with ``env.schedule``, exactly where ``env.timeout``
would put it), so scheduling a callback allocates one object and no closure. A cancelled timer
stays on the queue but has no callback left: SimPy pops it and does nothing.
"""

from __future__ import annotations

from heapq import heappush
from typing import Any, Callable

import simpy
from simpy.core import StopSimulation
from simpy.events import NORMAL, Event


class Timer(Event):
    """A scheduled callback; ``cancel()`` makes it a no-op when it fires."""

    # a timer is an already-triggered, successful event (like a Timeout): SimPy only pops it
    _ok = True
    _value = None

    def __init__(self, callbacks: tuple, callback: Callable, arg: Any = None):
        # Event.__init__ is skipped on purpose (as Timeout does): it only sets these fields.
        self.callbacks = callbacks     # the engine's shared one-element tuple, () once cancelled
        self.callback = callback
        self.arg = arg

    def cancel(self) -> None:
        if self.callbacks is not None:  # None: already fired
            self.callbacks = ()


_new_timer = Timer.__new__


class Engine:
    """SimPy environment plus an event counter and cancellable timers.

    ``now`` is the simulated time, the clock models read: the engine sets it as it fires each
    callback and when a run stops (a plain attribute, as cheap to read as SimPy's private clock,
    which only the engine touches). Callbacks due at the same time fire in the order they were
    scheduled (SimPy's queue orders by time, then by insertion). ``events`` counts the callbacks
    that fired (cancelled timers are not counted).
    """

    def __init__(self) -> None:
        self.env = simpy.Environment()
        self.now = 0.0
        self.events = 0
        self._fire0 = (self._call0,)
        self._fire1 = (self._call1,)

    def schedule(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback()`` after ``delay`` time units unless the returned timer is cancelled."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        timer = _new_timer(Timer)      # Timer(self._fire0, callback), without the __init__ frame
        timer.callbacks = self._fire0
        timer.callback = callback
        timer.arg = None
        self.env.schedule(timer, NORMAL, delay)
        return timer

    def call(self, delay: float, callback: Callable[[Any], None], arg: Any) -> Timer:
        """Call ``callback(arg)`` after ``delay`` time units unless the returned timer is cancelled
        (the same as ``schedule(delay, lambda: callback(arg))`` without the closure)."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        timer = _new_timer(Timer)      # Timer(self._fire1, callback, arg), without the __init__ frame
        timer.callbacks = self._fire1
        timer.callback = callback
        timer.arg = arg
        self.env.schedule(timer, NORMAL, delay)
        return timer

    def call_at(self, at: float, callback: Callable[[Any], None], arg: Any, priority: int = NORMAL) -> Timer:
        """Call ``callback(arg)`` at simulated time ``at`` (>= now) unless the returned timer is
        cancelled. ``at`` is used as given: ``call(at - now, ...)`` would put the timer at
        ``now + (at - now)``, which may differ from ``at`` in the last bit. The timer goes on
        SimPy's queue as ``env.schedule`` puts one (time, priority, insertion number): at equal
        times a lower ``priority`` fires first (``call`` and ``schedule`` use SimPy's NORMAL, 1)."""
        env = self.env
        if at < env._now:
            raise ValueError(f"Time {at} is before now ({env._now})")
        timer = _new_timer(Timer)
        timer.callbacks = self._fire1
        timer.callback = callback
        timer.arg = arg
        heappush(env._queue, (at, priority, next(env._eid), timer))
        return timer

    def _call0(self, timer: Timer) -> None:
        self.now = self.env._now
        self.events += 1
        timer.callback()

    def _call1(self, timer: Timer) -> None:
        self.now = self.env._now
        self.events += 1
        timer.callback(timer.arg)

    def stop(self) -> None:
        """End the current ``run`` once the callbacks already due at this instant have fired (later
        ones stay queued and are not counted)."""
        timer = _new_timer(Timer)
        timer.callbacks = (StopSimulation.callback,)   # SimPy's own way to end a run at an event
        timer.callback = timer.arg = None
        self.env.schedule(timer, NORMAL, 0)

    def run(self, until: float | None = None) -> None:
        """Run until no event is left, or until simulated time ``until``."""
        self.env.run(until=until)
        self.now = self.env._now
