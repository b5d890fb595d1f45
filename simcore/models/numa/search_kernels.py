"""The balancer's search for the busiest group (2.6.11 ``find_busiest_group``), for every domain, in
one call over the machine-wide load mirrors: the 2.6.11 load estimates (cpu_load settled lazily,
``runqueue_kernels.settle_load``), group sums of integer loads (exact in any order), the imbalance
and its thresholds, the power-gain test and the newly idle CPU's one task. ``timing_kernels`` calls
it for the periodic and newly-idle attempts.

The functions are plain Python in numba's subset, compiled by ``jit_module`` at the end of the
file: with NUMBA_DISABLE_JIT=1 they run as Python.
"""

from __future__ import annotations

import numpy as np

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources

SLS = 128            # SCHED_LOAD_SCALE (an int: every load is a whole number, every sum exact)
NOT_IDLE, IDLE, NEWLY_IDLE = 0, 1, 2      # the idle kinds of 2.6.11's load_balance


def decayed(avg, cur, k):
    """2.6.11's cpu_load after ``k`` ticks at the instant load ``cur``: each tick cpu_load =
    (cpu_load + cur) / 2 in integers, rounded up while rising, so the distance d = avg - cur
    becomes floor(|d| / 2^k) on its side (0 from k = 63 on). The loads are whole numbers well
    below 2^53 (nr_running x 128 and its averages), so this serves int64 loads (the run queues')
    and float64 ones (the balancer's mirrors) alike, exactly."""
    d = int(avg - cur)
    k = int(min(k, 63))
    return cur + (d >> k) if d >= 0 else cur - ((-d) >> k)


def _power_gain(max_sum, this_sum, nb, nt):
    """2.6.11's "cpu power used" test: does moving one task raise the throughput of the pair? With
    group powers 128 nb and 128 nt and loads max_sum / nb and this_sum / nt, the kernel's power now
    is min(128 nb, max_sum) + min(128 nt, this_sum), and after the move min(128 nb, max_sum - 128)
    (if max_sum > 128) + min(128 nt, this_sum + min(max_sum, 128)): integers, so the comparison is
    exact."""
    now = min(SLS * nb, max_sum) + min(SLS * nt, this_sum)
    move = min(SLS * nb, max_sum - SLS) if max_sum > SLS else 0.0
    move += min(SLS * nt, this_sum + min(max_sum, SLS))
    return move > now


def busiest_group(span, group_of, sizes, local, total_n, cur, avg, tick, t, instant, imbalance_pct, idle):
    """(index of the busiest group or -1, imbalance in tasks) of a domain whose CPUs are ``span``
    and whose groups are given by ``group_of`` (per CPU: its group's index, -1 outside the span)
    and ``sizes``; ``cur``, ``avg``, ``tick``: the system's per-CPU mirrors of nr_running x 128,
    cpu_load and the tick it was last settled at; ``t``: the current tick."""
    n_groups = sizes.shape[0]
    sums = np.zeros(2 * n_groups)        # per group: the source loads' sum, then the target loads'
    ss, ts = sums[:n_groups], sums[n_groups:]
    for i in range(span.shape[0]):
        c = span[i]
        g = group_of[c]
        if g < 0:
            continue
        x = cur[c]
        if instant:
            ss[g] += x
            ts[g] += x
            continue
        v = decayed(avg[c], x, int(min(t - tick[c], 64.0)))       # cpu_load settled to tick t
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


jit_module(globals(), nopython=True, cache=True)
