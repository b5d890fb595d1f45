"""The NUMA system driven by hand (the scenario tests' harness, like cluster_script.Hand).

:class:`Hand` builds the system the experiments run (``system.NumaSystem``) on one node without
running its engine: tasks are dispatched or queued by the kernels that do it in a run
(``scheduler_kernels.activate``, ``runqueue_kernels.enqueue``), a rule's kernel is called directly
(``migrate_kernels.newidle``, ``timing_kernels.newidle``), and the state is read in its buffers.
:func:`corrupt_queue` and friends write the state by hand, to show that the invariant checks see
each kind of corruption: test-only, and named so.
"""

from __future__ import annotations

import math

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed
from simcore.models.numa import full_params
from simcore.models.numa import hook_kernels as HK
from simcore.models.numa import migrate_kernels as MK
from simcore.models.numa import runqueue_kernels as RQ
from simcore.models.numa import scheduler_kernels as SC
from simcore.models.numa import search_kernels as SRK
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import task_kernels as TK
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.model import default_domains_for, load_machine, make_policy, tune_domains
from simcore.models.numa.system import NumaSystem
from simcore.models.numa.task import Task, TaskSpec
from simcore.topology.machine import make_machine


class Hand:
    """``machine`` (or that many CPUs of one node) with ``domains`` (one list per CPU), room for
    ``tasks`` CPU-bound nice-0 tasks of 1000 ms (ids 0, 1, ...), at t = 0: ``policy``, nothing
    cache-hot, loads instantaneous unless ``params`` say otherwise; with ``trace``, the moves are
    logged (``moves``)."""

    def __init__(self, machine, domains: list, tasks: int = 8, policy: str = "linux-2level", trace: bool = False,
                 **params):
        self.params = full_params({"topology": "scripted", "load_average": "instant", "cache_hot_time_cpu": 0.0,
                                   "cache_hot_time_node": 0.0, "placement": "parent", **params})
        streams = Streams(replication_seed(1, "hand", 0, 0))
        if isinstance(machine, int):
            machine = make_machine("test", f"flat-{machine}", [machine], [[10]])
        self.policy = make_policy(policy, self.params, streams)
        self.policy.setup(machine, domains)
        self.engine = Engine()
        self.system = NumaSystem(self.engine, machine, domains, self.policy, self.params)
        self.tasks = [Task(TaskSpec(i, 0.0, 0, 1000.0, 0, False, i), self.params, trace) for i in range(tasks)]
        self.system.expect(self.tasks)

    @property
    def state(self) -> tuple:
        s = self.system
        return s.SI, s.SF, s.F, s.I

    def set_now(self, now: float) -> None:
        """The clock, set by hand (the engine never runs)."""
        self.engine.now = now

    def _created(self, t: int) -> None:
        """Task ``t`` created: its first burst drawn (``task_kernels.next_burst``, as
        ``scheduler_kernels.create`` does), its home node 0 unless set."""
        task = self.tasks[t]
        if task not in self.system.tasks:
            self.system.tasks.append(task)
            TK.next_burst(t, self.system.SI, self.system.SF)
            if self.system.block("O_TI", len(self.tasks))[t, SL.T_HOME] < 0:
                set_task(self.system, t, T_HOME=0)

    def moves(self) -> list[tuple[float, int, int, int]]:
        """The moves logged so far: (time, task, from CPU, to CPU)."""
        self.system._read_log()
        return self.system.moves

    def dispatch(self, cpu: int, *tids: int) -> None:
        """Each task queued on ``cpu`` through the scheduler (``activate``): the first runs on an
        idle CPU, the rest wait."""
        for t in tids:
            self._created(t)
            SC.activate(t, cpu, self.engine.now, *self.state)

    def queue(self, cpu: int, *tids: int) -> None:
        """Each task only queued on ``cpu`` (as between a pull and its dispatch)."""
        SI, SF, F, I = self.state
        for t in tids:
            self._created(t)
            RQ.enqueue(cpu, t, False, False, SI)
            HK.nr_changed(cpu, self.engine.now, SI, SF, F, I)

    def newidle(self, cpu: int) -> None:
        """``cpu`` goes newly idle: its newly-idle balancing (``migrate_kernels.newidle``)."""
        MK.newidle(cpu, self.engine.now, *self.state)

    def busiest(self, cpu: int, k: int, kind: int) -> tuple[tuple[int, ...], int]:
        """The search of ``cpu``'s ``k``-th domain as ``kind`` (``search_kernels.IDLE`` ...): the
        busiest group's CPUs and the imbalance in tasks (``((), 0)``: balanced)."""
        SI, SF, F, I = self.state
        L, n = int(I[SL.H_L]), self.system.ncpus
        d = cpu * L + k
        t_now = float(math.floor(self.engine.now / float(F[SL.B_TICK]) + 1e-9))     # the tick (timing_kernels.newidle)
        if not K._search(cpu, d, t_now, kind, F, I):
            return (), 0
        g = int(I[SL.H_GROUP])
        gof = I[I[SL.O_GOF] + d * n:I[SL.O_GOF] + (d + 1) * n]
        return tuple(c for c in range(n) if gof[c] == g), int(I[SL.H_IMB])

    def queued(self, cpu: int) -> list[int]:
        """The tasks queued on ``cpu``, active array then expired, by priority, head first."""
        SI = self.system.SI
        rb = int(SI[SL.O_RI]) + cpu * SL.R_COLS
        out = []
        for a in (0, 1):
            for i in range(SL.N_PRIO):
                t = int(SI[RQ.queue_at(cpu, SI[rb + SL.R_ACT] ^ a, i, SI)])
                while t >= 0:
                    out.append(t)
                    t = int(SI[int(SI[SL.O_TI]) + t * SL.T_COLS + SL.T_NEXT])
        return out

    def running(self, cpu: int) -> int:
        return int(RQ.nr_running(cpu, self.system.SI))

    @property
    def migrations(self) -> int:
        return int(self.system.SI[SL.Y_MIGR])

    @property
    def counts(self) -> tuple[int, int, int]:
        """Attempts, failed ones and certain failures so far."""
        return self.system.lb_counts()

    @property
    def found(self) -> int:
        """Attempts so far whose search found an imbalance (the model's ``lb_imbalanced``)."""
        return int(self.system.SI[SL.Y_FOUND])

    @property
    def refused(self) -> tuple[int, int, int]:
        """Moves the policy refused so far: as aged, for distance, for the zone."""
        SI = self.system.SI
        return int(SI[SL.Y_REFAGE]), int(SI[SL.Y_REFDIST]), int(SI[SL.Y_REFZONE])


def empty_system(topology: str, policy: str, **params) -> NumaSystem:
    """A system of ``topology`` under ``policy``, built as ``simulate`` builds it, with no task (its
    calendar holds the CPUs' first balancing timers)."""
    params = full_params({"topology": topology, **params})
    machine = load_machine(topology)
    impl = make_policy(policy, params, Streams(replication_seed(3, "empty", 0, 0)))
    built = default_domains_for(machine, impl.builder, params["domain_init"], params["node_groups"])
    domains = tune_domains(built, params)
    impl.setup(machine, domains)
    system = NumaSystem(Engine(), machine, domains, impl, params)
    system.expect([])
    return system


def bare_buffers(*sizes):
    """Empty buffers SI, SF laid out for ``sizes`` (``layout_kernels.layout``'s counts, no log)."""
    import numpy as np

    head = np.zeros(SL.Y_SIZE, dtype=np.int64)
    isize, fsize = SL.layout(*sizes, 0, head)
    SI, SF = np.zeros(isize, dtype=np.int64), np.zeros(fsize)
    SI[:SL.Y_SIZE] = head
    return SI, SF


def rearm(system: NumaSystem, cpu: int) -> None:
    """``cpu``'s balancing timer set again from its domains (``hook_kernels.arm``) at the engine's
    time, with SimPy's next insertion number, as an event of the run would set it."""
    SI, SF, F, I = system.SI, system.SF, system.F, system.I
    system.handing(SI, SL.Y_EID, HK.arm, cpu, system.engine.now, SI, SF, F, I)
    system._push_head()


# -- the state written by hand (invariant checks) --------------------------------------------------
def corrupt_queue(system, t: int, cpu: int = 0, expired: bool = False, prio: int | None = None) -> None:
    """Task ``t`` appended to ``cpu``'s list of priority ``prio`` (default its own) by hand, its
    state, CPU, array and priority left as they are; the CPU's marks and load mirror kept in line."""
    SI = system.SI
    tb = int(SI[SL.O_TI]) + t * SL.T_COLS
    cols = [SL.T_STATE, SL.T_CPU, SL.T_EXP, SL.T_PRIO]
    kept = SI[[tb + c for c in cols]].copy()
    if prio is not None:
        SI[tb + SL.T_PRIO] = prio
    RQ.enqueue(cpu, t, expired, False, SI)
    SI[[tb + c for c in cols]] = kept
    marks_in_line(system, cpu)


def corrupt_running(system, t: int, cpu: int) -> None:
    """Task ``t`` made ``cpu``'s current task by hand (its own state left as it is); the busy flag,
    marks and load mirror kept in line."""
    SI, I = system.SI, system.I
    SI[int(SI[SL.O_RI]) + cpu * SL.R_COLS + SL.R_CURR] = t
    I[I[SL.O_BUSY] + cpu] = 1
    marks_in_line(system, cpu)


def marks_in_line(system, cpu: int) -> None:
    """``cpu``'s loaded and overloaded marks and load mirror as its runnable tasks say."""
    SI, F, I = system.SI, system.F, system.I
    rb = int(SI[SL.O_RI]) + cpu * SL.R_COLS
    nr = int(RQ.nr_running(cpu, SI))
    SI[rb + SL.R_LOADED], SI[rb + SL.R_OVER] = int(nr >= 1), int(nr >= 2)
    F[I[SL.OF_CUR] + cpu] = nr * SRK.SLS


def set_task(system, t: int, **columns) -> None:
    """Columns of task ``t``'s row by name (``T_STATE=LK.QUEUED``, ``F_BURST=-0.01``, ...)."""
    SI, SF = system.SI, system.SF
    for name, value in columns.items():
        if name.startswith("T_"):
            SI[int(SI[SL.O_TI]) + t * SL.T_COLS + getattr(SL, name)] = value
        else:
            SF[int(SI[SL.OF_TF]) + t * SL.F_COLS + getattr(SL, name)] = value
