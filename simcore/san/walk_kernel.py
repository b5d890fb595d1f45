"""The SAN walker's steps compiled with numba (see :mod:`simcore.san.compiled_walk`).

:func:`walk` transcribes :meth:`simcore.san.simulate._Walker.run` with the same arithmetic in
the same order on the same float64 values: the cumulative rates summed left to right, the time
``-log1p(-u) / total`` added to the clock as SimPy adds a timeout's delay, the event and each
destination found as ``bisect_right`` finds them. What Python memoises in dicts, the kernel
keeps in dense tables indexed by the local states of the automata a value depends on (mixed
radix), with NaN for "not yet known": on a value it does not know, and when fewer uniforms
remain than a step may draw, it returns to Python, which fills the table (or the uniforms) and
calls again; the step resumes where it stopped (``phase``), so a trajectory draws and computes
exactly what the Python walker does.

``W`` (int64) and ``F`` (float64) hold the walk's registers, named in ``layout.yaml`` (the
generated ``slots_kernels``, imported as ``SL``): its phase, its place in the uniforms, its clock
and horizon.
"""

from __future__ import annotations

import math

from simcore.core.jit import njit
from simcore.san import slots_kernels as SL

# phases of a step: its top (draw the time), the observation and the event, the refresh of
# rates, the last observation
TOP, OBSERVE, REFRESH, LAST = range(4)
# what a call returns
DONE, NEED_RATE, NEED_MEASURE, NEED_UNIFORMS = range(4)


@njit(cache=True)
def _key(state, autos, strides, lo, hi):
    """The mixed-radix index of the local states of ``autos[lo:hi]``."""
    key = 0
    for d in range(lo, hi):
        key += state[autos[d]] * strides[d]
    return key


@njit(cache=True)
def _right(cum, lo, hi, x):
    """``bisect_right(cum[lo:hi], x)``: the first offset whose value exceeds ``x``."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if x < cum[mid]:
            b = mid
        else:
            a = mid + 1
    return a - lo


@njit(cache=True)
def _frozen(state, watched, stuck):
    """``_Model.frozen``: no automaton a measure reads can leave its state."""
    for k in watched:
        if not stuck[k, state[k]]:
            return False
    return True


@njit(cache=True)
def _observe(W, F, state, times, values, m_auto, m_stride, m_known, m_table, upto):
    """``_Walker._record``: the current state's measures at each observation time before
    ``upto``; False (nothing written) when the state's measures are not yet known."""
    key = _key(state, m_auto, m_stride, 0, len(m_auto))
    if not m_known[key]:
        return False
    n = len(times)
    while W[SL.W_FILLED] < n and times[W[SL.W_FILLED]] < upto:
        values[W[SL.W_FILLED], :] = m_table[key, :]
        W[SL.W_FILLED] += 1
    F[SL.WF_NEXT] = times[W[SL.W_FILLED]] if W[SL.W_FILLED] < n else math.inf
    return True


@njit(cache=True)
def _fire(W, state, U, i, p_off, p_auto, p_src, mv_mass, mv_off, mv_cnt, mv_dst, mv_cum):
    """``_Walker._fire``: move each participant of event ``i``, drawing where it has several."""
    for p in range(p_off[i], p_off[i + 1]):
        k = p_auto[p]
        row = p_src[p] + state[k]
        lo, cnt = mv_off[row], mv_cnt[row]
        if cnt > 1:
            u = U[W[SL.W_PTR]]
            W[SL.W_PTR] += 1
            state[k] = mv_dst[lo + _right(mv_cum, lo, lo + cnt, u * mv_mass[row])]
        else:
            state[k] = mv_dst[lo]


@njit(cache=True)
def _next_time(W, F, state, rates, cum, U, watched, stuck):
    """The TOP phase: the rates summed up and the clock moved to the next event (phase OBSERVE), or
    phase LAST when no event can come; False (the phase unchanged) when the uniforms may run out."""
    n = len(rates)
    if n == 0 or (W[SL.W_STOPEARLY] == 1 and _frozen(state, watched, stuck)):
        W[SL.W_PHASE] = LAST
        return True
    total = 0.0
    for j in range(n):
        total += rates[j]
        cum[j] = total
    if total <= 0:                                 # absorbing: the state holds for ever
        W[SL.W_PHASE] = LAST
        return True
    if W[SL.W_PTR] + W[SL.W_DRAWS] > len(U):
        return False
    u = U[W[SL.W_PTR]]
    W[SL.W_PTR] += 1
    F[SL.WF_NOW] = F[SL.WF_NOW] + -math.log1p(-u) / total
    F[SL.WF_TOTAL] = total
    W[SL.W_PHASE] = OBSERVE
    return True


@njit(cache=True)
def walk(W, F, state, rates, cum, U, times, values,
         d_off, d_auto, d_stride, r_base, r_table,
         p_off, p_auto, p_src, mv_mass, mv_off, mv_cnt, mv_dst, mv_cum,
         f_off, f_idx, watched, stuck, m_auto, m_stride, m_known, m_table):
    """Run the trajectory until it ends (DONE) or needs Python (NEED_*; ``W[SL.W_MISS]`` names the
    event whose rate is missing)."""
    n = len(rates)
    while True:
        phase = W[SL.W_PHASE]
        if phase == TOP:
            if not _next_time(W, F, state, rates, cum, U, watched, stuck):
                return NEED_UNIFORMS
        elif phase == OBSERVE:
            now = F[SL.WF_NOW]
            if now > F[SL.WF_NEXT]:
                if not _observe(W, F, state, times, values, m_auto, m_stride, m_known, m_table, now):
                    return NEED_MEASURE
            if now > F[SL.WF_HORIZON]:
                return DONE
            u = U[W[SL.W_PTR]]
            W[SL.W_PTR] += 1
            i = _right(cum, 0, n, u * F[SL.WF_TOTAL])
            _fire(W, state, U, i, p_off, p_auto, p_src, mv_mass, mv_off, mv_cnt, mv_dst, mv_cum)
            W[SL.W_STEPS] += 1
            W[SL.W_FIRED], W[SL.W_POS], W[SL.W_PHASE] = i, f_off[i], REFRESH
        elif phase == REFRESH:
            end = f_off[W[SL.W_FIRED] + 1]
            while W[SL.W_POS] < end:
                j = f_idx[W[SL.W_POS]]
                value = r_table[r_base[j] + _key(state, d_auto, d_stride, d_off[j], d_off[j + 1])]
                if math.isnan(value):
                    W[SL.W_MISS] = j
                    return NEED_RATE
                rates[j] = value
                W[SL.W_POS] += 1
            W[SL.W_PHASE] = TOP
        else:
            if not _observe(W, F, state, times, values, m_auto, m_stride, m_known, m_table, math.inf):
                return NEED_MEASURE
            return DONE
