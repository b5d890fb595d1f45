"""The compiled models' calendar: an indexed binary heap of SimPy keys, written once.

A compiled model keeps its timers in slots of an int buffer ``I`` and a float buffer ``F``; a slot
is keyed like a SimPy event, (time, priority, insertion number), and sits at one position of the
heap (-1: not set). The same heap orders other items, a cluster machine's finish tags for one.

A heap is described by a tuple of offsets into the buffers (the ``HEAP_*`` fields below): where
its item count and items are, and where item ``s``'s position, time, priority and order are
(``base + s * stride``). The model builds the tuple from its own layout (one function per heap),
so every model's calendar is the code of this file.
"""

from __future__ import annotations

import math

from simpy.events import NORMAL

from simcore.core.jit import njit

# the fields of a heap's description: the slot holding the item count, the first of the items,
# item s's position at POS + s * POS_STRIDE, time at TIME + s * TIME_STRIDE, priority and order
# at PRIO + s * ROW and ORDER + s * ROW (order: SimPy's insertion number, or any tie-breaker)
HEAP_COUNT, HEAP_ITEMS, HEAP_POS, HEAP_POS_STRIDE, HEAP_TIME, HEAP_TIME_STRIDE, HEAP_PRIO, HEAP_ORDER, HEAP_ROW = range(
    9
)


@njit(cache=True)
def key_before(ta, pa, ea, tb, pb, eb):
    """Whether the key (``ta``, ``pa``, ``ea``) comes before (``tb``, ``pb``, ``eb``)."""
    if ta != tb:
        return ta < tb
    if pa != pb:
        return pa < pb
    return ea < eb


@njit(cache=True)
def _before(a, b, h, I, F):
    ta, tb = F[h[HEAP_TIME] + a * h[HEAP_TIME_STRIDE]], F[h[HEAP_TIME] + b * h[HEAP_TIME_STRIDE]]
    if ta != tb:
        return ta < tb
    ra, rb = a * h[HEAP_ROW], b * h[HEAP_ROW]
    pa, pb = I[h[HEAP_PRIO] + ra], I[h[HEAP_PRIO] + rb]
    if pa != pb:
        return pa < pb
    return I[h[HEAP_ORDER] + ra] < I[h[HEAP_ORDER] + rb]


@njit(cache=True)
def _place(s, i, h, I):
    I[h[HEAP_ITEMS] + i] = s
    I[h[HEAP_POS] + s * h[HEAP_POS_STRIDE]] = i


@njit(cache=True)
def sift_up(i, h, I, F):
    """Move the item at position ``i`` up to its place."""
    items = h[HEAP_ITEMS]
    s = I[items + i]
    while i > 0:
        p = (i - 1) >> 1
        if not _before(s, I[items + p], h, I, F):
            break
        _place(I[items + p], i, h, I)
        i = p
    _place(s, i, h, I)


@njit(cache=True)
def sift_down(i, n, h, I, F):
    """Move the item at position ``i`` down to its place among the first ``n``."""
    items = h[HEAP_ITEMS]
    s = I[items + i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _before(I[items + c + 1], I[items + c], h, I, F):
            c += 1
        if not _before(I[items + c], s, h, I, F):
            break
        _place(I[items + c], i, h, I)
        i = c
    _place(s, i, h, I)


@njit(cache=True)
def push(s, h, I, F):
    """Put item ``s`` (keyed already) on the heap."""
    n = I[h[HEAP_COUNT]]
    I[h[HEAP_COUNT]] = n + 1
    _place(s, n, h, I)
    sift_up(n, h, I, F)


@njit(cache=True)
def remove(s, h, I, F):
    """Take item ``s``, which is on the heap, off it (its position is left as it was)."""
    i = I[h[HEAP_POS] + s * h[HEAP_POS_STRIDE]]
    n = I[h[HEAP_COUNT]] - 1
    I[h[HEAP_COUNT]] = n
    if i == n:
        return
    moved = I[h[HEAP_ITEMS] + n]
    _place(moved, i, h, I)
    sift_up(i, h, I, F)
    sift_down(I[h[HEAP_POS] + moved * h[HEAP_POS_STRIDE]], n, h, I, F)


@njit(cache=True)
def cancel(s, h, I, F):
    """Take slot ``s`` off the calendar if it is set (``Timer.cancel``)."""
    at = h[HEAP_POS] + s * h[HEAP_POS_STRIDE]
    if I[at] < 0:
        return
    remove(s, h, I, F)
    I[at] = -1


@njit(cache=True)
def schedule(s, t, prio, order, h, I, F):
    """Set slot ``s`` at the key (``t``, ``prio``, ``order``), replacing its key if it is set."""
    cancel(s, h, I, F)
    F[h[HEAP_TIME] + s * h[HEAP_TIME_STRIDE]] = t
    I[h[HEAP_PRIO] + s * h[HEAP_ROW]] = prio
    I[h[HEAP_ORDER] + s * h[HEAP_ROW]] = order
    push(s, h, I, F)


@njit(cache=True)
def first_due(t, prio, order, h, I, F):
    """The slot at the top of the calendar if its key is not after (``t``, ``prio``, ``order``)
    (SimPy's next event), else -1."""
    if I[h[HEAP_COUNT]] == 0:
        return -1
    s = I[h[HEAP_ITEMS]]
    if key_before(t, prio, order, F[h[HEAP_TIME] + s * h[HEAP_TIME_STRIDE]],
                  I[h[HEAP_PRIO] + s * h[HEAP_ROW]], I[h[HEAP_ORDER] + s * h[HEAP_ROW]]):
        return -1
    return s


@njit(cache=True)
def first_due_by(t, prio, order, stopping, stop_t, stop_order, h, I, F):
    """``first_due`` with the run's stop as a second bound when ``stopping``: the stop is keyed
    (``stop_t``, NORMAL, ``stop_order``), as ``Engine.stop`` puts it on SimPy's queue."""
    if stops_before(stopping, stop_t, stop_order, t, prio, order):
        return first_due(stop_t, NORMAL, stop_order, h, I, F)
    return first_due(t, prio, order, h, I, F)


@njit(cache=True)
def top(h, I, F):
    """The item at the top of the heap and its key: (slot, time, priority, order); slot -1 when
    the heap is empty."""
    if I[h[HEAP_COUNT]] == 0:
        return -1, 0.0, 0, 0
    s = I[h[HEAP_ITEMS]]
    return (
        s,
        F[h[HEAP_TIME] + s * h[HEAP_TIME_STRIDE]],
        I[h[HEAP_PRIO] + s * h[HEAP_ROW]],
        I[h[HEAP_ORDER] + s * h[HEAP_ROW]],
    )


# -- the arrivals of a compiled event loop ----------------------------------------------------------
# A model's whole-run loop fires its timers and its arrivals (a list the model fixes before the run)
# in SimPy's key order. The arrivals' cursor: the next one (A_NEXT), its insertion number (A_EID)
# and the events fired so far (A_EVENTS) in an int array A, the next one's time in AT[0]; each
# arrival is keyed (time, NORMAL, number) as Engine.schedule keys it, the next one's number drawn
# from the model's counter right after the arrival's kernels ran (ProxyCalendar.arrival_cursor
# keys the first).
A_NEXT, A_EID, A_EVENTS = range(3)


@njit(cache=True)
def arrival_key(A, AT, count):
    """The key of the next of ``count`` arrivals, or the key past every event once all came
    (SimPy's queue empty: engine.END)."""
    if A[A_NEXT] < count:
        return AT[0], NORMAL, A[A_EID]
    return math.inf, 0, 0


@njit(cache=True)
def stops_before(stopping, stop_t, stop_order, t, prio, order):
    """Whether the run's stop, once set (``stopping``), comes before the key (``t``, ``prio``,
    ``order``): keyed (``stop_t``, NORMAL, ``stop_order``), as Engine.stop puts it."""
    return stopping and key_before(stop_t, NORMAL, stop_order, t, prio, order)


@njit(cache=True)
def arrived(A, AT, count, next_t, I, counter):
    """An arrival's kernels ran: the cursor moves on, the next arrival (if any) at ``next_t`` and
    numbered from the model's counter ``I[counter]``."""
    if A[A_NEXT] + 1 < count:
        AT[0] = next_t
        A[A_EID] = I[counter]
        I[counter] += 1
    A[A_NEXT] += 1
