"""The one calendar of the compiled models (simcore.core.calendar_kernels), run compiled: the
order of SimPy keys (time, then priority, then insertion number), rescheduling, cancelling, and
which timer is due before SimPy's next event. Scenarios derived by hand."""

import heapq
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.core import calendar_kernels as C

SLOTS = 5


def calendar():
    """A calendar of SLOTS slots: count at I[0], items at I[1:], per slot (prio, order, position)
    rows after them, times in F."""
    rows = 1 + SLOTS
    I = np.zeros(rows + 3 * SLOTS, dtype=np.int64)
    I[rows + 2::3] = -1
    F = np.zeros(SLOTS)
    h = (0, 1, rows + 2, 3, 0, 1, rows, rows + 1, 3)
    return h, I, F


def drain(h, I, F):
    """Slots in the order they fire."""
    fired = []
    while (s := C.first_due(math.inf, 0, 0, h, I, F)) >= 0:
        C.cancel(s, h, I, F)
        fired.append(s)
    return fired


def consistent(h, I):
    n = I[h[C.HEAP_COUNT]]
    for i in range(n):
        s = I[h[C.HEAP_ITEMS] + i]
        assert I[h[C.HEAP_POS] + s * h[C.HEAP_POS_STRIDE]] == i


def test_keys_fire_by_time_then_priority_then_insertion_number():
    h, I, F = calendar()
    C.schedule(0, 5.0, 1, 10, h, I, F)
    C.schedule(1, 3.0, 1, 11, h, I, F)
    C.schedule(2, 3.0, 0, 12, h, I, F)     # an URGENT event at 3.0 comes before the NORMAL one
    C.schedule(3, 3.0, 0, 9, h, I, F)      # and of two URGENT ones, the one inserted first
    consistent(h, I)
    assert drain(h, I, F) == [3, 2, 1, 0]
    assert I[0] == 0


def test_rescheduling_replaces_the_key_and_cancelling_twice_does_nothing():
    h, I, F = calendar()
    for s, t in enumerate([4.0, 2.0, 3.0, 1.0]):
        C.schedule(s, t, 1, s, h, I, F)
    C.schedule(3, 6.0, 1, 7, h, I, F)      # slot 3 moves from first to last
    C.cancel(1, h, I, F)
    C.cancel(1, h, I, F)
    consistent(h, I)
    assert I[0] == 3 and I[h[C.HEAP_POS] + 1 * 3] == -1
    assert drain(h, I, F) == [2, 0, 3]


def test_a_timer_keyed_as_simpys_next_event_fires_and_one_after_it_waits():
    h, I, F = calendar()
    C.schedule(2, 3.0, 0, 12, h, I, F)
    assert C.first_due(3.0, 0, 12, h, I, F) == 2     # the same key: not after it
    assert C.first_due(3.0, 0, 11, h, I, F) == -1    # inserted after SimPy's next event
    assert C.first_due(3.0, 1, 0, h, I, F) == 2      # SimPy's next event is NORMAL, the timer URGENT
    assert C.first_due(2.5, 9, 99, h, I, F) == -1
    C.cancel(2, h, I, F)
    assert C.first_due(math.inf, 0, 0, h, I, F) == -1


def test_the_runs_stop_bounds_the_timers_only_when_it_is_set_and_first():
    h, I, F = calendar()
    C.schedule(1, 3.0, 1, 12, h, I, F)      # NORMAL at 3.0, inserted 12th
    assert C.first_due_by(5.0, 1, 0, False, 2.0, 0, h, I, F) == 1        # no stop: SimPy's event bounds
    assert C.first_due_by(5.0, 1, 0, True, 2.0, 0, h, I, F) == -1        # the stop at 2.0 comes first
    assert C.first_due_by(5.0, 1, 0, True, 3.0, 11, h, I, F) == -1       # stop (3.0, NORMAL, 11) before it
    assert C.first_due_by(5.0, 1, 0, True, 3.0, 12, h, I, F) == 1        # the same key: not after it
    assert C.first_due_by(2.5, 1, 0, True, 4.0, 0, h, I, F) == -1        # SimPy's event first: it bounds


def test_top_reads_the_first_items_key_and_minus_one_when_empty():
    h, I, F = calendar()
    assert C.top(h, I, F)[0] == -1
    C.schedule(4, 2.0, 1, 7, h, I, F)
    C.schedule(2, 1.5, 1, 9, h, I, F)
    assert C.top(h, I, F) == (2, 1.5, 1, 9)
    C.cancel(2, h, I, F)
    assert C.top(h, I, F) == (4, 2.0, 1, 7)


def test_key_before_orders_time_then_priority_then_number():
    assert C.key_before(1.0, 5, 5, 2.0, 0, 0)
    assert not C.key_before(2.0, 0, 0, 1.0, 5, 5)
    assert C.key_before(1.0, 0, 5, 1.0, 1, 0)
    assert C.key_before(1.0, 1, 4, 1.0, 1, 5)
    assert not C.key_before(1.0, 1, 5, 1.0, 1, 5)


ops = st.lists(st.tuples(st.integers(0, SLOTS - 1), st.sampled_from([None, 0.0, 1.0, 2.0]), st.integers(0, 1)),
               max_size=40)


@settings(max_examples=200, deadline=None)
@given(ops)
def test_any_sequence_fires_in_sorted_key_order(sequence):
    """Against a plain model of the calendar: the set keys, sorted."""
    h, I, F = calendar()
    keys = {}
    for number, (s, t, prio) in enumerate(sequence):
        if t is None:
            C.cancel(s, h, I, F)
            keys.pop(s, None)
        else:
            C.schedule(s, t, prio, number, h, I, F)
            keys[s] = (t, prio, number)
        consistent(h, I)
    expected = [s for _, s in heapq.nsmallest(len(keys), ((k, s) for s, k in keys.items()))]
    assert drain(h, I, F) == expected
