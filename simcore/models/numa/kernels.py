"""The balancer's busiest-group search compiled with numba: ``Balancer.find_busiest_group`` in one
call over the machine-wide load mirrors, for every domain.

This is a second implementation of a decision the pure-Python path makes (the reference,
``Balancer.compiled = False``): the same 2.6.11 load estimates (``runqueue.decayed`` on integer
loads), the same group sums (integers, exact in any order) and the same tests in the same order,
on the same float64 values. tests/test_numa_kernels.py compares the two on random domain states
and on the experiments' workloads. The compiled balancer
(``compiled.CompiledBalancer``) calls it from its own kernels (``timing_kernels``). It is compiled on
first use and cached (numba's ``cache=True``) in a folder per version of this file's sources
(``simcore.core.jit``), so a batch job pays the compilation once per machine and then loads
it (``bench/bench_numa.py`` prints both times).
"""

from __future__ import annotations

import math

import numpy as np
from simcore.core.jit import njit

SLS = 128.0          # SCHED_LOAD_SCALE
NEWLY_IDLE, IDLE = 2, 1


@njit(cache=True)
def _power_gain(max_sum, this_sum, nb, nt):
    """``Balancer._power_gain``."""
    now = min(SLS * nb, max_sum) + min(SLS * nt, this_sum)
    move = min(SLS * nb, max_sum - SLS) if max_sum > SLS else 0.0
    move += min(SLS * nt, this_sum + min(max_sum, SLS))
    return move > now


@njit(cache=True)
def busiest_group(group_of, sizes, local, total_n, cur, avg, tick, t, instant, imbalance_pct, idle):
    """(index of the busiest group or -1, imbalance in tasks) of a domain whose groups are given by
    ``group_of`` (per CPU: its group's index, -1 outside the span) and ``sizes``; ``cur``,
    ``avg``, ``tick``: the system's per-CPU mirrors of nr_running x 128, cpu_load and the tick
    it was last settled at; ``t``: the current tick."""
    n_groups = sizes.shape[0]
    sums = np.zeros(2 * n_groups)        # per group: the source loads' sum, then the target loads'
    ss, ts = sums[:n_groups], sums[n_groups:]
    for c in range(group_of.shape[0]):
        g = group_of[c]
        if g < 0:
            continue
        x = cur[c]
        if instant:
            ss[g] += x
            ts[g] += x
            continue
        d = avg[c] - x                      # decayed(avg, cur, k): |d| halved k times, floored
        k = min(t - tick[c], 64.0)
        a = math.floor(math.ldexp(abs(d), -int(k)))
        v = x + a if d >= 0 else x - a
        if v < x:
            ss[g] += v
            ts[g] += x
        else:
            ss[g] += x
            ts[g] += v
    max_load = this_sum = max_sum = total = 0.0
    this_n = busiest_n = 0
    busiest = -1
    for i in range(n_groups):
        s = ss[i]
        n = sizes[i]
        if i == local:
            s = ts[i]
            this_sum, this_n = s, n
        else:
            load = s / n
            if load > max_load:
                max_load, busiest, busiest_n, max_sum = load, i, n, s
        total += s
    balanced = busiest < 0 or this_sum * busiest_n >= max_sum * this_n
    if not balanced:
        balanced = (this_sum * total_n >= total * this_n
                    or 100 * max_sum * this_n <= imbalance_pct * this_sum * busiest_n)
    if not balanced:
        imb = min(max_sum * total_n - total * busiest_n, total * this_n - this_sum * total_n)
        if imb >= SLS * total_n:
            return busiest, int(imb // (SLS * total_n))
        if max_sum * this_n - this_sum * busiest_n >= 2 * SLS * busiest_n * this_n:
            return busiest, 1
        if _power_gain(max_sum, this_sum, busiest_n, this_n):
            return busiest, 1
    if busiest >= 0 and (idle == NEWLY_IDLE or (idle == IDLE and max_load > SLS)):
        return busiest, 1
    return -1, 0
