"""Proxy events: how a model whose timers live in a compiled calendar keeps SimPy as the calendar
that orders the run.

Each compiled timer is keyed as SimPy would key the Python model's (time, priority, an insertion
number taken from SimPy's own counter at the moment the Python model would have scheduled it).
One *proxy* event sits on SimPy's queue at the key of the compiled calendar's first timer; when
it fires, the model's kernels fire every compiled timer keyed before SimPy's next event. Kernels
that schedule take their insertion numbers from SimPy's counter, handed to them and back
(:meth:`ProxyCalendar.handing`). The numa, cluster and pools models' compiled systems use it.
"""

from __future__ import annotations

from heapq import heappush
from itertools import count

from simpy.core import StopSimulation
from simpy.events import NORMAL

from simcore.core.engine import Timer

_new_timer = Timer.__new__


class ProxyCalendar:
    """Mixin of a compiled model on an :class:`~simcore.core.engine.Engine` (``self.engine``):
    proxies on SimPy's queue (``_proxy_at``), the stop of a run (``_stop_at``) and the insertion
    numbers handed to the kernels (``handing``). The model defines ``_on_proxy(event)``."""

    MODEL = "compiled"          # the model's name in error messages

    def _start_proxies(self) -> None:
        self._proxies: list = []             # keys of the proxies on SimPy's queue (a heap)
        self._on_proxy_cb = (self._on_proxy,)

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

    def _stop_at(self, at: float, number: int) -> None:
        """SimPy's stop event keyed as ``Engine.stop`` would have put it (NORMAL, ``number``)."""
        stopper = _new_timer(Timer)
        stopper.callbacks = (StopSimulation.callback,)
        stopper.callback = stopper.arg = None
        heappush(self.engine.env._queue, (at, NORMAL, number, stopper))

    def handing(self, buf, at: int, kernel, *args):
        """``kernel(*args)`` with SimPy's next insertion number in ``buf[at]`` and the counter
        taken back from there afterwards; returns what the kernel returns."""
        env = self.engine.env
        buf[at] = next(env._eid)
        out = kernel(*args)
        env._eid = count(int(buf[at]))
        return out
