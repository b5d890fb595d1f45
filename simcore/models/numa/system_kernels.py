"""The whole NUMA scheduler compiled with numba, split by concern into the ``*_kernels`` modules of this
folder (``layout``, ``task``, ``runqueue``, ``hook``, ``run``, ``migrate``, ``scheduler``, ``balance``);
here, ``drain``, which fires the calendar's timers up to a key (SimPy's next event): how
:class:`simcore.models.numa.compiled_system.CompiledSystem` runs.

Every function transcribes a method of the Python model (named in its docstring) with the same
arithmetic in the same order on the same float64 values, and sets every timer at the key SimPy would
give the Python model's. tests/test_numa_system.py holds every run to the Python model's, bit for bit.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

from numba import jit_module

from simcore.core import calendar_kernels as C
from simcore.core import jit  # noqa: F401  (numba's cache keyed per kernel file)
from simcore.models.numa import balance_kernels as BK
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import scheduler_kernels as SC
from simcore.models.numa.layout_kernels import (
    NORMAL, OF_CT, O_TI, T_COLS, T_CPU, Y_FIRED, Y_N, Y_STOP, Y_STOPE, Z_STOPT)


def drain(stop_t, stop_p, stop_e, SI, SF, F, I):
    """Fire, in key order, every timer of the calendar keyed before (``stop_t``, ``stop_p``,
    ``stop_e``) (SimPy's next event) and before the stop of the run if the workload's last task
    has finished (``SI[Y_STOP]``, at ``SF[Z_STOPT]``, ``SI[Y_STOPE]``). ``SI[Y_FIRED]``: how many."""
    n = SI[Y_N]
    fired = 0
    while True:
        if SI[Y_STOP] and C.key_before(SF[Z_STOPT], NORMAL, SI[Y_STOPE], stop_t, stop_p, stop_e):
            stop_t, stop_p, stop_e = SF[Z_STOPT], NORMAL, SI[Y_STOPE]
        s = C.first_due(stop_t, stop_p, stop_e, L.calendar(SI), SI, SF)
        if s < 0:
            break
        t = SF[SI[OF_CT] + s]
        L.cancel(s, SI, SF)
        fired += 1
        if s < n:
            SC.run_end(s, t, SI, SF, F, I)
        elif s < 2 * n:
            BK.fire(s - n, t, SI, SF, F, I)
        else:
            task = s - 2 * n
            SC.activate(task, SI[SI[O_TI] + task * T_COLS + T_CPU], t, SI, SF, F, I)     # NumaSystem.wake
    SI[Y_FIRED] = fired


jit_module(nopython=True, cache=True)
