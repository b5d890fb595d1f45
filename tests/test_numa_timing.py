"""The balancer's timing (simcore/models/numa/timing_kernels.py, balancer.py): the quiet test and the
attempts a sleeping domain is counted, each against its definition on random states; domains'
state in the buffers; and SimPy's order at equal times."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numa_script import empty_system, rearm

from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.balancer import Balancer


def _quiet_by_definition(dom, cpu: int, counts) -> bool:
    """No other CPU of the span has two runnable tasks, and no CPU of another group of several
    CPUs has one."""
    if any(c != cpu and counts[c] >= 2 for c in dom.span):
        return False
    return not any(counts[c] >= 1 for c in dom.wide)


def test_the_quiet_test_is_its_definition():
    """``quiet`` on 300 random run-queue lengths of the Superdome (0-3 runnable tasks per CPU, most
    CPUs at 0 or 1 so that quiet domains occur), every CPU and domain."""
    system = empty_system("superdome-16x4", "linux-2level")
    bal = system.balancer
    rng = np.random.default_rng(4)
    cur = bal.F[bal.I[SL.OF_CUR]:bal.I[SL.OF_CUR] + system.ncpus]
    seen = set()
    for _ in range(300):
        counts = rng.choice([0, 1, 2, 3], size=system.ncpus, p=[0.45, 0.45, 0.07, 0.03])
        cur[:] = counts * 128.0
        for cpu in range(system.ncpus):
            for dom in bal.pdoms[cpu]:
                answer = _quiet_by_definition(dom, cpu, counts)
                assert K.quiet(cpu, dom._d, bal.F, bal.I) == answer
                seen.add(answer)
    assert seen == {True, False}


@pytest.mark.parametrize("policy", ["linux-2level", "multilevel"])
def test_a_quiet_domains_search_finds_no_group(policy):
    """``periodic`` fails a quiet domain's attempt without searching: on 300 random states of the
    Superdome (run-queue lengths as above, each CPU's cpu_load anywhere from 0 to 4 x 128 and
    settled 0-7 ticks ago), wherever ``quiet`` holds, the busy and the idle search
    (``find_busiest_group``) find no group, for every CPU and domain. The states are not trivial:
    the newly-idle search, which ``quiet`` does not cover, finds a group in some of them."""
    system = empty_system("superdome-16x4", policy)
    bal = system.balancer
    F, I, n = bal.F, bal.I, system.ncpus
    rng = np.random.default_rng(9)
    cur, avg, tck = (F[I[o]:I[o] + n] for o in (SL.OF_CUR, SL.OF_AVG, SL.OF_TCK))
    quiet_states, newly_found = 0, 0
    for _ in range(300):
        counts = rng.choice([0, 1, 2, 3], size=n, p=[0.45, 0.45, 0.07, 0.03])
        cur[:] = counts * 128.0
        avg[:] = rng.integers(0, 4 * 128 + 1, size=n)
        tck[:] = 10 - rng.integers(0, 8, size=n)
        for cpu in range(n):
            for dom in bal.pdoms[cpu]:
                if not K.quiet(cpu, dom._d, F, I):
                    continue
                quiet_states += 1
                for kind in (K.NOT_IDLE, K.IDLE):
                    assert not K._search(cpu, dom._d, 10.0, kind, F, I)
                newly_found += K._search(cpu, dom._d, 10.0, K.NEWLY_IDLE, F, I)
    assert quiet_states > 1000 and newly_found > 0


def _settled_by_definition(last: float, interval: float, busy_factor: float, max_interval: float, idle: bool,
                           until: float, tick: float) -> tuple[int, float]:
    """The attempts a sleeping domain makes after one at ``last`` (a tick boundary) up to ``until``,
    counted tick by tick: each is due its interval (times busy_factor while busy, at least one
    tick) after the one before, rounded up to a tick, and fails, doubling the interval while it is
    below max_interval. Returns (attempts, the tick of the last one, in ticks)."""
    at, k, ivl = round(last / tick), 0, interval
    x = until / tick
    end = round(x) if abs(x - round(x)) < 1e-6 else math.floor(x)     # an instant on a tick counts
    while True:
        step = max(1, math.ceil((ivl if idle else ivl * busy_factor) / tick - 1e-9))
        if at + step > end:
            return k, at
        at += step
        k += 1
        if ivl < max_interval:
            ivl *= 2


@pytest.mark.parametrize(
    "topology, policy, tick",
    [
        ("superdome-16x4", "multilevel", 1.0),
        ("superdome-16x4", "linux-2level", 0.1),
        ("mehta-s1", "conservative-hard", 0.3),
    ],
)
def test_sleeping_attempts_are_counted_as_the_tick_by_tick_count(topology, policy, tick):
    """``settle`` from random last attempts and intervals up to random ends, a third of them on
    the exact instant of an attempt (where, with a tick of 0.1 or 0.3 ms, the sums are off by an
    ulp and the 1e-9 decides), idle and busy: the count and the last attempt of counting tick by
    tick."""
    system = empty_system(topology, policy, tick=tick)
    bal = system.balancer
    F, I = bal.F, bal.I
    rng = np.random.default_rng(8)
    for trial in range(600):
        cpu = int(rng.integers(system.ncpus))
        dom = bal.pdoms[cpu][int(rng.integers(len(bal.pdoms[cpu])))]
        if not dom.busy_ok:
            continue
        interval = float(
            rng.choice([dom.min_interval, dom.max_interval, dom.min_interval * 2 ** int(rng.integers(0, 6))])
        )
        last = int(rng.integers(0, 10**5)) * tick
        idle = bool(rng.integers(2))
        span = max(1, math.ceil((interval if idle else interval * dom.busy_factor) / tick - 1e-9)) * tick
        until = last + (int(rng.integers(0, 40)) * span if trial % 3 == 0 else float(rng.random()) * 40 * span)
        F[I[SL.OF_LAST] + dom._d], F[I[SL.OF_IVL] + dom._d] = last, interval
        I[SL.H_ATTEMPTS:SL.H_DEAD + 1] = 0
        K.settle(dom._d, until, idle, F, I)
        k, at = _settled_by_definition(last, interval, dom.busy_factor, dom.max_interval, idle, until, tick)
        assert I[SL.H_ATTEMPTS:SL.H_DEAD + 1].tolist() == [k, k, k], (trial, last, interval, until)
        assert dom.last == pytest.approx(at * tick, abs=1e-9 * tick * max(at, 1))


def test_a_domains_state_lives_in_the_buffers():
    """A domain of a run reads its state where the kernels write it, and the other way round."""
    system = empty_system("corr05-4x2", "linux-2level")
    bal = system.balancer
    dom = bal.pdoms[3][0]
    d = dom._d
    dom.last, dom.dormant = 40.0, True
    assert bal.F[bal.I[SL.OF_LAST] + d] == 40.0 and bal.I[bal.I[SL.O_DORMANT] + d] == 1
    assert 3 in bal.dormant_cpus
    bal.F[bal.I[SL.OF_LAST] + d], bal.F[bal.I[SL.OF_IVL] + d], bal.I[bal.I[SL.O_FAILED] + d] = math.pi, 12.5, 2
    assert (dom.last, dom.interval, dom.failed) == (math.pi, 12.5, 2) and type(dom.last) is float


def test_a_timer_due_with_another_event_fires_in_simpys_order(monkeypatch):
    """The calendar keeps SimPy's order at equal times: the lower priority first, then the event
    scheduled first. The empty corr05-4x2 (1 ms tick, domains at 1 and 80 ms, none sleeping): the
    stagger puts the last attempts of CPUs 1-7 125c ms back, so their timers are overdue, at 0 ms.
    A probe Z is scheduled at 0 ms; then CPU 0's first domain is put 5 ms back and re-armed, at
    0 ms too, after Z. So Z sees 14 attempts (both domains of CPUs 1-7, all failing on the empty
    machine), and Z2, which Z schedules at 0 ms, sees CPU 0's as well: 15. The eight timers are set
    again during 0 ms, at 2 ms (first domains' intervals doubled to 2; the others are due at 80 ms
    and later). A probe scheduled before that, at 2 ms, sees 15; an urgent one that Z2 schedules at
    2 ms also 15 (priority first); a probe scheduled at 2 ms by the former sees the eight more: 23.
    21 events: the timers fired count as events, as the probes do."""
    monkeypatch.setattr(Balancer, "sleeps", False)
    system = empty_system("corr05-4x2", "linux-2level")
    engine, seen = system.engine, {}
    then = {"Z": (0.0, "Z2", 1), "Z2": (2.0, "urgent at 2", 0), "at 2": (2.0, "scheduled at 2", 1)}

    def probe(name):
        seen[name] = system.lb_counts()[0]
        if name in then:
            at, child, priority = then[name]
            engine.call_at(at, probe, child, priority=priority)

    engine.call_at(0.0, probe, "Z")
    engine.call_at(2.0, probe, "at 2")
    system.balancer.pdoms[0][0].last = -5.0
    rearm(system, 0)
    engine.run(until=2.5)
    assert seen == {"Z": 14, "Z2": 15, "urgent at 2": 15, "at 2": 15, "scheduled at 2": 23}
    assert engine.events == 8 + 8 + 5
