"""Invariants of the numa model, checked after every event when ``check_invariants`` is on."""

from __future__ import annotations

import math

from simcore.models.numa.task import BLOCKED, DONE, QUEUED, RUNNING


class InvariantError(AssertionError):
    """The model reached an impossible state."""


def _fail(msg: str):
    raise InvariantError(f"numa model invariant: {msg}")


def check(system) -> None:
    """Every task is on exactly one queue, or one CPU, or blocked, or done; no CPU runs two tasks;
    queue bookkeeping is consistent; only quiet domains sleep; work delivered equals demand
    consumed."""
    where: dict[int, str] = {}
    for rq in system.rqs:
        n = 0
        for a, arr in enumerate(rq.arrays):
            bm = 0
            for i, lst in enumerate(arr):
                if lst:
                    bm |= 1 << i
                for t in lst:
                    n += 1
                    if t.tid in where:
                        _fail(f"task {t.tid} is both {where[t.tid]} and queued on CPU {rq.cpu}")
                    where[t.tid] = f"queued on CPU {rq.cpu}"
                    if t.state != QUEUED or t.cpu != rq.cpu or t.expired != bool(a) or t.prio - 100 != i:
                        _fail(f"task {t.tid} queued on CPU {rq.cpu} has state {t.state}, cpu {t.cpu}")
            if bm != rq.bitmaps[a]:
                _fail(f"CPU {rq.cpu} bitmap {rq.bitmaps[a]:b} != {bm:b}")
        if n != rq.n_queued:
            _fail(f"CPU {rq.cpu} counts {rq.n_queued} queued tasks but holds {n}")
        t = rq.curr
        if t is not None:
            if t.tid in where:
                _fail(f"task {t.tid} runs on CPU {rq.cpu} and is {where[t.tid]}")
            where[t.tid] = f"running on CPU {rq.cpu}"
            if t.state != RUNNING or t.cpu != rq.cpu:
                _fail(f"task {t.tid} current on CPU {rq.cpu} has state {t.state}, cpu {t.cpu}")
        if (rq.nr_running >= 2) != (rq.cpu in system.overloaded):
            _fail(f"CPU {rq.cpu} overloaded-set membership is stale")
        if (rq.nr_running >= 1) != (rq.cpu in system.loaded):
            _fail(f"CPU {rq.cpu} loaded-set membership is stale")
        if system.busy[rq.cpu] != (rq.curr is not None):
            _fail(f"CPU {rq.cpu} busy flag is stale")
    bal = system.balancer
    for cpu in bal.dormant_cpus:
        for dom in bal.pdoms[cpu]:
            if dom.dormant and not bal.quiet(cpu, dom):
                _fail(f"CPU {cpu}'s domain {dom.name} sleeps while an attempt could find an imbalance")
    work = 0.0
    cpu_time = 0.0
    for t in system.tasks:
        if t.state in (QUEUED, RUNNING):
            if t.tid not in where:
                _fail(f"task {t.tid} is {t.state} but on no queue or CPU")
        elif t.state in (BLOCKED, DONE):
            if t.tid in where:
                _fail(f"task {t.tid} is {t.state} but {where[t.tid]}")
        else:
            _fail(f"task {t.tid} has state {t.state} after creation")
        work += t.spec.demand - t.demand_left - t.burst_left
        cpu_time += t.cpu_time
        if t.burst_left < -1e-6 or t.demand_left < -1e-6:
            _fail(f"task {t.tid} over-served")
    work += system.overhead               # balancing costs lengthen bursts beyond the demand
    if not math.isclose(work, system.work, rel_tol=1e-9, abs_tol=1e-6):
        _fail(f"work consumed by tasks {work} != work delivered by CPUs {system.work}")
    if not math.isclose(cpu_time, system.delivered, rel_tol=1e-9, abs_tol=1e-6):
        _fail(f"CPU time received {cpu_time} != CPU time delivered {system.delivered}")


def check_final(system) -> None:
    """At the end of a run: every task done and all demand served (and the costs' work)."""
    check(system)
    if system.unfinished or any(t.state != DONE for t in system.tasks):
        _fail(f"{system.unfinished} task(s) never finished")
    demand = math.fsum(t.spec.demand for t in system.tasks) + system.overhead
    if not math.isclose(demand, system.work, rel_tol=1e-9, abs_tol=1e-6):
        _fail(f"demand {demand} != work delivered {system.work}")
