"""Invariants of the numa model, checked after every event when ``check_invariants`` is on."""

from __future__ import annotations

import math

import numpy as np

from simcore.models.numa import layout_kernels as LK
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.search_kernels import SLS
from simcore.models.numa.task import BLOCKED, DONE, NEW, QUEUED, RUNNING

STATES = (NEW, QUEUED, RUNNING, BLOCKED, DONE)      # a task's state in the kernels (layout_kernels.NEW ...)


class InvariantError(AssertionError):
    """The model reached an impossible state."""


def _fail(msg: str):
    raise InvariantError(f"numa model invariant: {msg}")


def check(system) -> None:
    """The system's state (``layout_kernels``), read in its buffers: every task is on exactly one
    run-queue list, or one CPU, or blocked, or done; the lists are linked both ways and their
    bitmaps and counts match them; no CPU runs two tasks; the loaded and overloaded marks, the
    balancer's load mirror and busy flags are current; only quiet domains sleep; work delivered
    equals demand consumed."""
    SI, SF, F, I = system.SI, system.SF, system.F, system.I
    n, T = int(SI[SL.Y_N]), int(SI[SL.Y_T])
    TI, RI = (system.block(name, rows).tolist() for name, rows in (("O_TI", T), ("O_RI", n)))
    Q = system.block("O_Q", n)
    lists = [np.flatnonzero(row >= 0).tolist() for row in Q[:, 0::2]]   # the lists not empty
    for cpu, k in zip(*np.nonzero((Q[:, 0::2] < 0) & (Q[:, 1::2] >= 0))):
        _fail(f"CPU {cpu}'s list {k // SL.N_PRIO}/{k % SL.N_PRIO} has no first task but a last one")
    Q = Q.tolist()
    cur, busy = F[I[SL.OF_CUR]:I[SL.OF_CUR] + n].tolist(), I[I[SL.O_BUSY]:I[SL.O_BUSY] + n].tolist()
    where: dict[int, str] = {}
    for cpu, row in enumerate(RI):
        queued = _lists(cpu, row, Q[cpu], lists[cpu], TI, where)
        if queued != row[SL.R_NQ]:
            _fail(f"CPU {cpu} counts {row[SL.R_NQ]} queued tasks but holds {queued}")
        t = row[SL.R_CURR]
        if t >= 0:
            if t in where:
                _fail(f"task {t} runs on CPU {cpu} and is {where[t]}")
            where[t] = f"running on CPU {cpu}"
            if TI[t][SL.T_STATE] != LK.RUNNING or TI[t][SL.T_CPU] != cpu:
                _fail(f"task {t} current on CPU {cpu} has state {_name(TI[t][SL.T_STATE])}, cpu {TI[t][SL.T_CPU]}")
        nr = queued + (t >= 0)
        if row[SL.R_OVER] != (nr >= 2):
            _fail(f"CPU {cpu} overloaded mark is stale")
        if row[SL.R_LOADED] != (nr >= 1):
            _fail(f"CPU {cpu} loaded mark is stale")
        if cur[cpu] != nr * SLS:
            _fail(f"CPU {cpu} load mirror {cur[cpu]} != {nr * SLS}")
        if busy[cpu] != (t >= 0):
            _fail(f"CPU {cpu} busy flag is stale")
    for cpu in range(n):
        _sleepers(cpu, F, I)
    _states(system, TI, where)
    _work(system, system.block("OF_TF", T).tolist(), SF[SL.Z_OVER], SF[SL.Z_WORK], SF[SL.Z_DELIV])


def _lists(cpu: int, row: list, heads: list, nonempty: list, TI: list, where: dict) -> int:
    """The tasks on ``cpu``'s run-queue lists (``heads``: first and last task of each; ``nonempty``:
    the lists with a first task, ph x N_PRIO + i), checked link by link against their tasks and
    ``row``'s bitmaps; their count."""
    count = 0
    for a in (0, 1):                        # active, expired
        ph = row[SL.R_ACT] ^ a
        bm = 0
        for i in (k - ph * SL.N_PRIO for k in nonempty if k // SL.N_PRIO == ph):
            q = (ph * SL.N_PRIO + i) * 2
            t, prev = heads[q], -1
            bm |= 1 << i
            while t >= 0:
                count += 1
                if t in where or count > len(TI):
                    _fail(f"task {t} is both {where.get(t, 'listed twice')} and queued on CPU {cpu}")
                where[t] = f"queued on CPU {cpu}"
                state, on, expired, prio, before, after = (TI[t][c] for c in (
                    SL.T_STATE, SL.T_CPU, SL.T_EXP, SL.T_PRIO, SL.T_PREV, SL.T_NEXT))
                if state != LK.QUEUED or on != cpu or expired != a or prio - 100 != i or before != prev:
                    _fail(f"task {t} queued on CPU {cpu} has state {_name(state)}, cpu {on}, array {expired}, "
                          f"priority {prio}, previous {before}")
                t, prev = after, t
            if prev != heads[q + 1]:
                _fail(f"CPU {cpu}'s list {ph}/{i} ends with task {prev}, its tail says {heads[q + 1]}")
        if bm != row[SL.R_BMA + a]:
            _fail(f"CPU {cpu} bitmap {row[SL.R_BMA + a]:b} != {bm:b}")
    return count


def _name(state: int) -> str:
    """A state's name (a number outside them as itself)."""
    return STATES[state] if 0 <= state < len(STATES) else str(state)


def _sleepers(cpu: int, F, I) -> None:
    """Only quiet domains of ``cpu`` sleep (``timing_kernels.quiet``)."""
    P, L = int(I[SL.H_P]), int(I[SL.H_L])
    for j in range(int(I[I[SL.O_NPD] + cpu])):
        d = cpu * L + int(I[I[SL.O_PD] + cpu * P + j])
        if I[I[SL.O_DORMANT] + d] and not K.quiet(cpu, d, F, I):
            _fail(f"CPU {cpu}'s domain {d} sleeps while an attempt could find an imbalance")


def _states(system, TI: list, where: dict) -> None:
    """Each created task is where its state says; none is left new."""
    created = {id(task) for task in system.tasks}
    for i, task in enumerate(system.expected):
        state = TI[i][SL.T_STATE]
        if id(task) not in created:
            if state != LK.NEW or i in where:
                _fail(f"task {i} is not created yet but has state {_name(state)}")
        elif state in (LK.QUEUED, LK.RUNNING):
            if i not in where:
                _fail(f"task {i} is {_name(state)} but on no queue or CPU")
        elif state in (LK.BLOCKED, LK.DONE):
            if i in where:
                _fail(f"task {i} is {_name(state)} but {where[i]}")
        else:
            _fail(f"task {i} has state {_name(state)} after creation")


def _work(system, TF: list, overhead: float, work_done: float, delivered: float) -> None:
    """Work consumed by the tasks (their demand served, plus the costs' work) equals the work the
    CPUs delivered; CPU time received equals CPU time delivered; no task is over-served."""
    work, cpu_time = 0.0, 0.0
    created = {id(task) for task in system.tasks}
    for i, task in enumerate(system.expected):
        if id(task) not in created:
            continue
        demand, burst = TF[i][SL.F_DEMAND], TF[i][SL.F_BURST]
        work += task.spec.demand - demand - burst
        cpu_time += TF[i][SL.F_CPUT]
        if burst < -1e-6 or demand < -1e-6:
            _fail(f"task {i} over-served")
    work += overhead
    if not math.isclose(work, work_done, rel_tol=1e-9, abs_tol=1e-6):
        _fail(f"work consumed by tasks {work} != work delivered by CPUs {work_done}")
    if not math.isclose(cpu_time, delivered, rel_tol=1e-9, abs_tol=1e-6):
        _fail(f"CPU time received {cpu_time} != CPU time delivered {delivered}")


def check_final(system) -> None:
    """At the end of a run: every task done and all demand served (and the costs' work)."""
    check(system)
    if system.unfinished or any(t.state != DONE for t in system.tasks):
        _fail(f"{system.unfinished} task(s) never finished")
    demand = math.fsum(t.spec.demand for t in system.tasks) + system.overhead
    if not math.isclose(demand, system.work, rel_tol=1e-9, abs_tol=1e-6):
        _fail(f"demand {demand} != work delivered {system.work}")
