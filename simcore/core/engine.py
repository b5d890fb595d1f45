"""A thin wrapper around a SimPy environment for callback-style, cancellable timers.

Models schedule plain callbacks instead of generator processes: it is the cheapest way to use
the SimPy kernel. A timer *is* the SimPy event that fires it (a light :class:`simpy.events.Event`
subclass put on the environment's queue with ``env.schedule``, exactly where ``env.timeout``
would put it), so scheduling a callback allocates one object and no closure. A cancelled timer
stays on the queue but has no callback left: SimPy pops it and does nothing.

This module is the one place that touches SimPy's private state (its clock ``_now``, its queue
``_queue`` and its insertion counter ``_eid``): the engine for the Python models, and
:class:`ProxyCalendar` for the compiled ones, whose timers live in a compiled calendar keyed as
SimPy's queue. ``tests/test_simpy_adapter.py`` pins the SimPy version these names are read from.
"""

from __future__ import annotations

import math
from heapq import heappush
from itertools import count
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
        self.next_number = self.env._eid.__next__   # SimPy's next insertion number (see ProxyCalendar.handing)
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


# -- compiled calendars ---------------------------------------------------------------------------
# Proxy events: how a model whose timers live in a compiled calendar keeps SimPy as the calendar
# that orders the run.
#
# Each compiled timer is keyed as SimPy would key the Python model's (time, priority, an insertion
# number taken from SimPy's own counter at the moment the Python model would have scheduled it).
# One *proxy* event sits on SimPy's queue at the key of the compiled calendar's first timer; when
# it fires, the model's kernels fire every compiled timer keyed before SimPy's next event. Kernels
# that schedule take their insertion numbers from SimPy's counter, handed to them and back
# (:meth:`ProxyCalendar.handing`). The numa, cluster and pools models' compiled systems use it.

END = (math.inf, 0, 0)          # the key past every event (SimPy's queue is empty)


class ProxyCalendar:
    """Mixin of a compiled model on an :class:`~simcore.core.engine.Engine` (``self.engine``):
    proxies on SimPy's queue (``_proxy_at``), the stop of a run (``_stop_at``) and the insertion
    numbers handed to the kernels (``handing``). The model defines ``_on_proxy(event)`` and
    ``_calendar()``."""

    MODEL = "compiled"          # the model's name in error messages

    def _start_proxies(self) -> None:
        from simcore.core.calendar_kernels import top  # here: the SimPy-only models never import numba

        self._top = top
        self._proxies: list = []             # keys of the proxies on SimPy's queue (a heap)
        self._on_proxy_cb = (self._on_proxy,)
        # SimPy's queue, a heap of (time, priority, number, event) that SimPy keeps for the whole
        # run: a model's ``_on_proxy`` reads its head (END when it is empty) to fire the compiled
        # timers keyed before it, inline, as it runs once per proxy. When a proxy fires, its key
        # (the least of ``_proxies``) holds SimPy's clock.
        self._simpy_queue = self.engine.env._queue

    def _proxy_at(self, key: tuple) -> None:
        """A proxy at ``key`` (time, priority, number), unless one is already at or before it."""
        if self._proxies and key >= self._proxies[0]:
            return
        env = self.engine.env
        if key[0] < env._now:
            raise RuntimeError(f"{self.MODEL} model: a compiled timer at {key[0]} is before now ({env._now})")
        proxy = _new_timer(Timer)
        proxy.callbacks = self._on_proxy_cb
        proxy.callback = proxy.arg = None
        heappush(env._queue, (*key, proxy))
        heappush(self._proxies, key)

    def _push_head(self) -> None:
        """A proxy at the key of the model's first compiled timer, if it has one; the model's
        ``_calendar()`` gives its heap's description and buffers (:mod:`~simcore.core.calendar_kernels`)."""
        s, t, prio, order = self._top(*self._calendar())
        if s >= 0:
            self._proxy_at((t, prio, order))

    def _stop_at(self, at: float, number: int) -> None:
        """SimPy's stop event keyed as ``Engine.stop`` would have put it (NORMAL, ``number``)."""
        stopper = _new_timer(Timer)
        stopper.callbacks = (StopSimulation.callback,)
        stopper.callback = stopper.arg = None
        heappush(self.engine.env._queue, (at, NORMAL, number, stopper))

    def handing(self, buf, at: int, kernel, *args):
        """``kernel(*args)`` with SimPy's next insertion number in ``buf[at]`` and the counter
        taken back from there afterwards; returns what the kernel returns."""
        engine = self.engine
        env = engine.env
        buf[at] = next(env._eid)
        out = kernel(*args)
        env._eid = count(int(buf[at]))
        engine.next_number = env._eid.__next__
        return out

    def arrival_cursor(self, first: float | None) -> tuple:
        """The arrival cursor of a compiled whole-run loop (``calendar_kernels.A_*``, the next
        arrival's time in a one-slot array): its first arrival ``first`` from now, numbered as
        Engine.schedule numbers it; None: no arrival."""
        import numpy as np

        from simcore.core.calendar_kernels import A_EID  # here: the SimPy-only models never import numba

        cursor, at = np.zeros(3, dtype=np.int64), np.zeros(1)
        if first is not None:
            at[0], cursor[A_EID] = self.engine.now + first, self.engine.next_number()
        return cursor, at

    def _jump(self, now: float) -> None:
        """SimPy's clock and the engine's moved to ``now`` inside a proxy's drain, to carry on in
        Python at a compiled timer's time (before SimPy's next event)."""
        self.engine.env._now = self.engine.now = now
