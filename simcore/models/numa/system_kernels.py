"""The NUMA scheduler and balancer, compiled with numba and split by concern into the ``*_kernels``
modules of this folder (``layout``, ``task``, ``runqueue``, ``run``, ``hook``, ``migrate``,
``scheduler``, ``balance``, ``timing``, ``search``); here, ``drain``, which fires the calendar's
timers up to a key (SimPy's next event): how :class:`simcore.models.numa.system.NumaSystem` runs;
and ``run``, the whole run's event loop when nothing in Python observes it.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from simcore.core import calendar_kernels as C
from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import balance_kernels as BK
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import scheduler_kernels as SC
from simcore.models.numa.slots_kernels import (
    OF_CT,
    Y_EID,
    Y_FIRED,
    Y_LOGCAP,
    Y_MORE,
    Y_N,
    Y_NLOG,
    Y_ROOM,
    Y_STEP,
    Y_STOP,
    Y_STOPE,
    Z_STEPT,
    Z_STOPT,
)


def drain(stop_t, stop_p, stop_e, SI, SF, F, I):
    """Fire, in key order, every timer of the calendar keyed before (``stop_t``, ``stop_p``,
    ``stop_e``) (SimPy's next event) and before the stop of the run if the workload's last task
    has finished (``SI[Y_STOP]``, at ``SF[Z_STOPT]``, ``SI[Y_STOPE]``). ``SI[Y_FIRED]``: how many.
    Returns early, with ``SI[Y_MORE]`` set, after one timer if ``SI[Y_STEP]`` (the invariants are
    checked after each event; ``SF[Z_STEPT]``: its time), else before a timer the log might not
    have room for."""
    n = SI[Y_N]
    fired = 0
    SI[Y_MORE] = 0
    while True:
        s = C.first_due_by(stop_t, stop_p, stop_e, SI[Y_STOP], SF[Z_STOPT], SI[Y_STOPE], L.calendar(SI), SI, SF)
        if s < 0:
            break
        if SI[Y_STEP]:
            if fired:
                SI[Y_MORE] = 1
                break
        elif SI[Y_LOGCAP] and SI[Y_NLOG] + SI[Y_ROOM] > SI[Y_LOGCAP]:
            SI[Y_MORE] = 1
            break
        t = SF[SI[OF_CT] + s]
        SF[Z_STEPT] = t
        L.cancel(s, SI, SF)
        fired += 1
        if s < n:
            SC.run_end(s, t, SI, SF, F, I)
        elif s < 2 * n:
            BK.fire(s - n, t, SI, SF, F, I)
        else:
            SC.wake(s - 2 * n, t, SI, SF, F, I)
    SI[Y_FIRED] = fired


# -- the compiled event loop ----------------------------------------------------------------------
# The arrivals as SimPy would order them (model.simulate): task order[j] created at its creation
# time, keyed as calendar_kernels' arrival cursor says; the next one at this time plus (its
# creation time - this time), what Engine.schedule adds to the clock.


def run(created, order, parents, A, AT, SI, SF, F, I):
    """Fire every timer and task creation in SimPy's key order until the run's stop (the last
    task's end), as the SimPy-driven run does with ``drain`` between the creations: the same
    kernels, in the same order. Returns early with ``SI[Y_MORE]`` set only where Python must see
    every event (a trace's log, the invariant checks), which such a run is not: the caller
    refuses it. ``A[C.A_EVENTS]`` counts the timers and creations fired."""
    m = order.shape[0]
    while True:
        j = A[C.A_NEXT]
        ta, pa, ea = C.arrival_key(A, AT, m)
        drain(ta, pa, ea, SI, SF, F, I)
        A[C.A_EVENTS] += SI[Y_FIRED]
        if SI[Y_MORE] or j >= m or C.stops_before(SI[Y_STOP], SF[Z_STOPT], SI[Y_STOPE], ta, pa, ea):
            return
        A[C.A_EVENTS] += 1
        k = order[j]
        SC.create(k, parents[k], ta, SI, SF, F, I)
        C.arrived(A, AT, m, ta + (created[order[min(j + 1, m - 1)]] - ta), SI, Y_EID)


jit_module(globals(), nopython=True, cache=True)
