"""The balancer's hooks in the scheduler: its timers on the calendar, and what a change of a CPU's
state or queue length tells it; the balancer's own kernels are ``timing_kernels``.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import math

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources
from simcore.models.numa import layout_kernels as L
from simcore.models.numa import runqueue_kernels as RQ
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.layout_kernels import NORMAL
from simcore.models.numa.slots_kernels import (
    R_LOADED,
    R_OVER,
    Y_N,
    cpu_row,
)


def set_timer(cpu, at, now, SI, SF):
    """Set the CPU's timer at ``at`` (``Engine.call(max(at - now, 0), ...)``), replacing any. The
    CPU's balancing timer at ``at`` as ``Engine.call`` puts it (``now + max(at - now, 0)``)."""
    d = at - now
    L.schedule_at(SI[Y_N] + cpu, now + (d if d > 0.0 else 0.0), NORMAL, SI, SF)


def arm(cpu, now, SI, SF, F, I):
    """Set ``cpu``'s balancing timer at its earliest due domain (``timing_kernels.arm``), if earlier
    than the one set."""
    at = K.arm(cpu, now, F, I)
    if at != math.inf:
        set_timer(cpu, at, now, SI, SF)


def on_state(cpu, idle, now, SI, SF, F, I):
    """``cpu`` went idle or busy: its domains' timing follows (``timing_kernels.on_state``), and its
    timer is set again if it changed."""
    at = K.on_state(cpu, idle, now, F, I)
    if at != math.inf:
        set_timer(cpu, at, now, SI, SF)


def wake_domains(src, wide, now, SI, SF, F, I):
    """The dormant domains that a change of ``src``'s count may wake (``timing_kernels.wake``;
    ``wide``: a CPU of another group of several CPUs became busy), each CPU's timer set again."""
    out = K.wake(src, wide, now, F, I)
    for i in range(out):
        set_timer(I[I[SL.O_OUTCPU] + i], F[I[SL.OF_OUTAT] + i], now, SI, SF)


def nr_changed(cpu, now, SI, SF, F, I):
    """After a change of ``cpu``'s runnable count: the balancer's load mirror, the loaded and
    overloaded marks, and the wake-ups of sleeping domains that the change may concern."""
    rb = cpu_row(cpu, SI)
    n = RQ.nr_running(cpu, SI)
    F[I[SL.OF_CUR] + cpu] = n * 128.0
    if n:
        if not SI[rb + R_LOADED]:
            SI[rb + R_LOADED] = 1
            if I[SL.H_WIDE_SLEEPERS]:
                wake_domains(cpu, True, now, SI, SF, F, I)
        if n >= 2:
            if not SI[rb + R_OVER]:
                SI[rb + R_OVER] = 1
                wake_domains(cpu, False, now, SI, SF, F, I)
            return
    else:
        SI[rb + R_LOADED] = 0
    SI[rb + R_OVER] = 0


jit_module(globals(), nopython=True, cache=True)
