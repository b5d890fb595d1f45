"""The machine under one policy: per-CPU run queues, dispatch, timeslices, I/O, placement and
balancing, run by the kernels (the ``*_kernels`` modules of this folder, numba).

Everything is an event: a running task's end of burst or of timeslice is one timer per CPU
(cancelled on preemption), an I/O completion is one timer per blocked task, and each CPU has one
balancing timer (``balancer``). No scheduler tick is simulated; the tick-driven load average is
computed lazily (``runqueue_kernels.settle_load``).

A task alone on its CPU crosses ends of bursts that do not block and ends of slices that give
the CPU straight back to it: nothing anyone can see changes there. Its timer is set at the
first end that decides something (a block, the task's end; at most ``LOOKAHEAD`` ends ahead),
and the ends before it are *pending*: they are replayed in order, with the arithmetic they
would have had as events, when the timer fires or when anything touches the CPU first (a task
queued on it, a preemption by active balancing); see ``run_kernels.look_ahead`` and
``catch_up``. The results are those of an event at every end (``NumaSystem.look_ahead =
False``, which the scenario tests run too). This holds because events of the same instant fire
in a fixed order: the ends of bursts and slices first, by CPU number (their timers' SimPy
priority is below NORMAL), then the others in the order they were scheduled; so an end due at
the instant of another event always comes before it, whether it is pending or not, and no end of
one CPU touches another CPU whose task is alone. (2.6.11's ``scheduler_tick`` likewise charges
the running task's slice, and requeues it when the slice is over, before ``rebalance_tick``.)

SimPy stays the calendar that orders the run: the workload's arrivals are SimPy events (Python
creates each task and the kernels place and queue it), and so is a *proxy* event at the key of
the kernels' calendar's first timer. Each timer is keyed as SimPy would key it as an event: its
time, its SimPy priority, and an insertion number from SimPy's own counter. When a proxy fires,
the kernels fire every timer keyed before SimPy's next event, in key order (``system_kernels.
drain``); so every event happens in SimPy's order, ties included, and a monitor's samples fall
between them.

With tasks that keep a trace, the kernels log their segments and moves (read into the tasks'
traces and ``moves``); with ``check`` set (``check_invariants``) they return after every event
and ``check`` runs.
"""

from __future__ import annotations

import math
from heapq import heappop
from typing import NamedTuple

import numpy as np
from simpy.events import NORMAL

from simcore.core import calendar_kernels as C
from simcore.core.engine import END, Engine, ProxyCalendar
from simcore.models.numa import layout_kernels as LK
from simcore.models.numa import scheduler_kernels as SC
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import system_kernels as SK
from simcore.models.numa import task_kernels as TKK
from simcore.models.numa.balancer import Balancer
from simcore.models.numa.task import BLOCKED, DONE, NEW, QUEUED, RUNNING, TaskColumns
from simcore.models.numa.task import columns as task_columns

_STATES = (NEW, QUEUED, RUNNING, BLOCKED, DONE)
_SEGMENTS = ("wait", "run", "io")       # the log's kinds LOG_WAIT, LOG_RUN, LOG_IO as a trace names them


class NumaSystem(ProxyCalendar):
    """The machine, its tasks, the balancer and the counters of one run."""

    MODEL = "numa"
    look_ahead = True   # timers skip the ends that decide nothing (module docstring); False: an event at each

    def __init__(self, engine: Engine, machine, domains, policy, params: dict):
        self.engine = engine
        self.machine = machine
        self.params = params
        self.policy = policy
        self.ncpus = int(machine.cpus)
        self.tick = float(params["tick"])
        self.cpu_node, self.dist, self.levels, self.level_of, self.factor = _distances(
            machine, float(params["memory_stall_fraction"]))
        self.lifetime = params["locality_scope"] == "lifetime"   # bursts drawn as wall time (bursts.py)
        self.migration_cost = float(params["migration_cost"])   # work redone after a migration
        self.attempt_cost = float(params["lb_attempt_cost"])    # CPU time of a balancing attempt
        self.tasks: list = []                 # the tasks created so far
        self.unfinished = 0
        self.check = None                     # invariant checker, set by the model when asked
        self.balancer = Balancer(self, domains, policy, params)
        self._first_timers = [(cpu, at, engine.next_number()) for cpu, at in enumerate(self.balancer.first)
                              if at != math.inf]

    @property
    def now(self) -> float:
        return self.engine.now

    def lb_counts(self) -> tuple[int, int, int]:
        """Balancing attempts, failed attempts and certain failures so far."""
        return self.balancer.unflushed()

    # -- building the arrays ---------------------------------------------------------------------
    def expect(self, tasks: list | None, draws: dict | None = None, scripted: dict | None = None,
               cols: TaskColumns | None = None) -> None:
        """The workload's tasks (not yet created): the arrays of the run, then the calendar with
        each CPU's first balancing timer. ``cols``: the workload as arrays (``task.columns``; made
        from ``tasks`` if not given); ``tasks`` None: a run that keeps no Task objects (compiled,
        nothing filled). ``draws``: a dict shared by the runs of one workload, where the tasks'
        draws and columns are kept for the next; ``scripted``: draws given by hand (``_draws``)."""
        if cols is None:
            cols = task_columns([t.spec for t in tasks], self.params)
        self._shared, self._scripted, self.cols = draws, scripted, cols
        self.created_at = cols.created
        self.to_finish = len(cols)
        self._tasks = self.expected = tasks
        self.created_order: list[int] = []
        self.moves: list[tuple[float, int, int, int]] = []
        self._index = {id(task): i for i, task in enumerate(tasks)} if tasks is not None else {}
        bal = self.balancer
        self.F, self.I = bal.F, bal.I
        self.SI, self.SF = self._arrays(cols, tasks is not None and any(t.trace is not None for t in tasks))
        for cpu, t, eid in self._first_timers:
            LK.schedule_with(self.ncpus + cpu, t, NORMAL, eid, self.SI, self.SF)
        self._start_proxies()
        self._push_head()

    def _arrays(self, cols: TaskColumns, logged: bool) -> tuple[np.ndarray, np.ndarray]:
        """The buffers ``SI`` and ``SF`` (``layout_kernels``) for this run; ``logged``: with room
        for the log of the tasks' traces."""
        n, T, L = self.ncpus, len(cols), self.balancer.L
        bal, params, nodes, levels = self.balancer, self.params, len(self.dist), len(self.levels)
        draws, starts = _draws(cols, params["io_wait"] == "rest-of-slice", self._slowest(), self._first_slowest(),
                               self._shared, self._scripted)
        head = np.zeros(SL.Y_SIZE, dtype=np.int64)
        room = LK.log_room(n, T) if logged else 0
        sizes = (n, T, n * L, nodes, levels, len(draws), 2 * room)
        isize, fsize = SL.layout(*sizes, head)
        self._dims = SL.dims(*sizes)
        SI, SF = np.zeros(isize, dtype=np.int64), np.zeros(fsize)
        SI[:SL.Y_SIZE] = head
        SI[SL.Y_LOGCAP], SI[SL.Y_ROOM], SI[SL.Y_STEP] = 2 * room, room, int(self.check is not None)

        self._header(SI, SF, T, nodes, levels)
        self._tasks_into(cols, starts, _view(SI, SI[SL.O_TI], T, SL.T_COLS), _view(SF, SI[SL.OF_TF], T, SL.F_COLS))
        RI = _view(SI, SI[SL.O_RI], n, SL.R_COLS)
        RI[:, SL.R_CURR] = -1
        RI[:, SL.R_ORDER] = np.arange(n) - n
        RI[:, SL.R_NODE] = self.cpu_node
        ndoms, dint, dfloat = bal.domain_table()
        RI[:, SL.R_NDOMS] = ndoms
        _view(SF, SI[SL.OF_RF], n, SL.RF_COLS)[:, SL.RF_FACTOR] = 1.0
        _view(SI, SI[SL.O_Q], n, SL.Q_COLS)[:] = -1
        _view(SI, SI[SL.O_LORD], T, levels)[:] = -1
        _view(SI, SI[SL.O_LV], nodes, nodes)[:] = self.level_of
        _view(SF, SI[SL.OF_FR], nodes, nodes)[:] = self.factor
        SF[SI[SL.OF_D]:SI[SL.OF_D] + len(draws)] = draws
        _view(SI, SI[SL.O_DI], n * L, SL.D_COLS)[:] = dint
        _view(SF, SI[SL.OF_DF], n * L, SL.DF_COLS)[:] = dfloat
        slots = 2 * n + T
        _view(SI, SI[SL.O_CI], slots, SL.C_COLS)[:, SL.C_POS] = -1
        SF[SI[SL.OF_CT]:SI[SL.OF_CT] + slots] = math.inf
        rules = self.policy.rules()
        if rules["conservative"]:
            _view(SF, SI[SL.OF_ND], nodes, nodes)[:] = rules["dist"]
            _view(SI, SI[SL.O_ZN], n, nodes)[:] = rules["in_zone"]
        return SI, SF

    def _slowest(self) -> float:
        """The largest slowdown a burst can be drawn at: the machine's under locality_scope
        'lifetime', 1.0 when bursts are work at local speed."""
        return max(max(row) for row in self.factor) if self.lifetime else 1.0

    def _first_slowest(self) -> float:
        """The largest slowdown a task's first burst can be drawn at: 1 where it starts at home
        (home_node 'start'), else the largest slowdown of all."""
        return self._slowest() if self.params["home_node"] == "creation" else 1.0

    def _header(self, SI: np.ndarray, SF: np.ndarray, T: int, nodes: int, levels: int) -> None:
        """The run-wide values: sizes, options, the policy's rules."""
        bal, params = self.balancer, self.params
        SI[SL.Y_TOFIN], SI[SL.Y_N], SI[SL.Y_T], SI[SL.Y_NODES], SI[SL.Y_LEVELS] = T, self.ncpus, T, nodes, levels
        SI[SL.Y_LOOK], SI[SL.Y_INSTANT] = int(self.look_ahead), int(params["load_average"] == "instant")
        SI[SL.Y_IOREST], SI[SL.Y_ACTIVE] = int(params["io_wait"] == "rest-of-slice"), int(bal.active)
        SI[SL.Y_IGNHOT], SI[SL.Y_LIFE] = int(bal.idle_ignores_hot), int(self.lifetime)
        rules = self.policy.rules()
        SI[SL.Y_PARENT], SI[SL.Y_MEMAT] = int(rules["parent"]), int(params["home_node"] == "creation")
        if rules["conservative"]:
            SI[SL.Y_RULES], SI[SL.Y_MAXMIG] = 1, rules["max_migrations"]
            SI[SL.Y_HOME], SI[SL.Y_HARD], SI[SL.Y_SCOPE] = int(rules["home"]), int(rules["hard"]), rules["scope"]
            SI[SL.Y_AGEMEM] = int(rules["aged_memory"])
        SF[SL.Z_MEANIO] = float(params["mean_io"])
        SF[SL.Z_MCOST], SF[SL.Z_ACOST] = self.migration_cost, self.attempt_cost

    @staticmethod
    def _tasks_into(cols: TaskColumns, starts: np.ndarray, TI: np.ndarray, TF: np.ndarray) -> None:
        """Each task's state before its creation (its first burst is drawn when it is created)."""
        TI[:, SL.T_PRIO], TI[:, SL.T_IOBOUND] = cols.prio, cols.io_bound
        TI[:, SL.T_CPU] = TI[:, SL.T_HOME] = -1
        TI[:, SL.T_DI] = starts[:-1]
        TI[:, SL.T_DEND] = starts[1:]
        TF[:, SL.F_SLICE] = TF[:, SL.F_SLEFT] = cols.slice
        TF[:, SL.F_DEMAND], TF[:, SL.F_SEG], TF[:, SL.F_MEANB] = cols.demand, cols.created, cols.mean_burst
        TF[:, SL.F_LAST] = -1e18
        TF[:, SL.F_SCALE] = 1.0          # a task's first burst is drawn at home (bursts.py)
        TI[:, SL.T_STATE] = LK.NEW
        TI[:, SL.T_NEXT] = TI[:, SL.T_PREV] = -1
        TF[:, SL.F_FIN] = math.nan

    # -- the run ---------------------------------------------------------------------------------
    def create(self, task) -> None:
        """A new task (an arrival, a SimPy event): the kernels place and queue it."""
        self.tasks.append(task)
        self.created_order.append(self._index[id(task)])
        SI = self.SI
        self.handing(SI, SL.Y_EID, SC.create, self._index[id(task)], task.spec.parent_cpu, self.engine.now, SI,
                     self.SF, self.F, self.I)
        self._after_kernels()
        self._push_head()

    @property
    def observed(self) -> bool:
        """Whether Python must see the run event by event: the invariant checks, a trace's log.
        Such a run is driven by SimPy (``create``)."""
        return self.check is not None or bool(self.SI[SL.Y_LOGCAP])

    def run_compiled(self) -> None:
        """The whole run in the kernels' event loop (``system_kernels.run``), for a run nothing
        in Python observes: the tasks created in creation order at their creation times, keyed as
        SimPy would key the arrivals ``model.simulate`` schedules. The engine's clock and event
        count, and the tasks created, end as the SimPy-driven run leaves them."""
        engine, SI, cols = self.engine, self.SI, self.cols
        order = cols.order
        state, at = self.arrival_cursor(cols.created[order[0]] if len(order) else None)
        self.handing(SI, SL.Y_EID, SK.run, cols.created, order, cols.parent, state, at, SI, self.SF, self.F, self.I)
        if SI[SL.Y_MORE]:
            raise RuntimeError("numa model: the compiled loop stopped for Python in a run nothing observes")
        self.created_order = order[:int(state[C.A_NEXT])].tolist()
        if self._tasks is not None:
            self.tasks.extend(self._tasks[k] for k in self.created_order)
        engine.events += int(state[C.A_EVENTS])
        self.unfinished = int(SI[SL.Y_UNFIN])
        if SI[SL.Y_STOP]:
            self._jump(float(self.SF[SL.Z_STOPT]))

    def _on_proxy(self, _event) -> None:
        """Fire every compiled timer keyed before SimPy's next event (and before the run's stop),
        then keep a proxy at or before the first timer left."""
        now = heappop(self._proxies)[0]          # the proxy firing: SimPy's clock
        engine, SI = self.engine, self.SI
        engine.now = now
        queue = self._simpy_queue
        stop = queue[0] if queue else END
        while True:
            self.handing(SI, SL.Y_EID, SK.drain, stop[0], stop[1], stop[2], SI, self.SF, self.F, self.I)
            engine.events += int(SI[SL.Y_FIRED])
            if SI[SL.Y_FIRED]:
                if SI[SL.Y_STEP]:                # the checks see the event's time
                    self._jump(float(self.SF[SL.Z_STEPT]))
                self._after_kernels()
            if not SI[SL.Y_MORE]:
                break
        if SI[SL.Y_STOP] == 1:          # the last task finished: SimPy's stop event, keyed as Engine.stop would
            SI[SL.Y_STOP] = 2
            self._stop_at(float(self.SF[SL.Z_STOPT]), int(SI[SL.Y_STOPE]))
        self._push_head()

    def _after_kernels(self) -> None:
        """After the kernels made an event: the count of unfinished tasks, the log read out, then
        the invariants checked."""
        self.unfinished = int(self.SI[SL.Y_UNFIN])
        if self.SI[SL.Y_NLOG]:
            self._read_log()
        if self.check is not None:
            self.check(self)

    def _read_log(self) -> None:
        """The log's rows into the tasks' traces and ``moves``; the log emptied."""
        SI, SF = self.SI, self.SF
        rows, cap = int(SI[SL.Y_NLOG]), int(SI[SL.Y_LOGCAP])
        if rows > cap:
            raise RuntimeError(f"numa model: the kernels wrote {rows} rows of log where {cap} fit; "
                               "layout_kernels.log_room undercounts what one event writes")
        LG = _view(SI, SI[SL.O_LOG], rows, SL.LG_COLS).tolist()
        at = int(SI[SL.OF_LOG])
        tasks = self._tasks
        for (kind, t, cpu, dst), x in zip(LG, SF[at:at + rows].tolist()):
            if kind == LK.LOG_MOVE:
                self.moves.append((x, tasks[t].tid, cpu, dst))
            else:
                tasks[t].trace.append((_SEGMENTS[kind], cpu, x))
        SI[SL.Y_NLOG] = 0

    def block(self, name: str, rows: int | None = None) -> np.ndarray:
        """Block ``name`` of the buffers (``O_TI``, ``OF_TF``, ``O_RI``, ``OF_RF``, ``O_Q``, ...:
        ``slots_kernels.BLOCKS``) as a rows x width view, its first ``rows`` rows (default all):
        what monitors and the invariant checks read."""
        full, width = self._dims[name]
        buf = self.SF if SL.BLOCKS[name][0] == "SF" else self.SI
        return _view(buf, self.SI[getattr(SL, name)], full if rows is None else rows, width)

    def runnable(self, cpu: int) -> int:
        """Tasks queued on ``cpu`` plus the one it runs."""
        row = self.SI[int(self.SI[SL.O_RI]) + cpu * SL.R_COLS:]
        return int(row[SL.R_NQ]) + int(row[SL.R_CURR] >= 0)

    def _fill_tasks(self, TI: np.ndarray, TF: np.ndarray) -> None:
        """Each task's results into its fields: finish, migrations, CPU time, home, last CPU, state,
        and its CPU time per level in the order it first reached them."""
        done = self.outcome
        finished, cpu_time = done.finished.tolist(), TF[:, SL.F_CPUT].tolist()
        migrations, home, cpu, state = (TI[:, col].tolist() for col in (SL.T_MIGR, SL.T_HOME, SL.T_CPU, SL.T_STATE))
        for i, (task, times, reached) in enumerate(zip(self._tasks, done.level_time.tolist(), done.reached.tolist())):
            task.finished, task.migrations, task.cpu_time = finished[i], migrations[i], cpu_time[i]
            task.home, task.cpu, task.state = home[i], cpu[i], _STATES[state[i]]
            task.level_time = {
                lvl: times[lvl] for _, lvl in sorted((o, lvl) for lvl, o in enumerate(reached) if o >= 0)
            }

    def _calendar(self) -> tuple:
        """The calendar's heap description and buffers (``ProxyCalendar._push_head``)."""
        return LK.calendar(self.SI), self.SI, self.SF

    def close(self, fill_tasks: bool = True) -> None:
        """At the end of the run: the attempts owed by sleeping domains counted, then the tasks'
        results read out as arrays (``outcome``: what ``model.measure`` reads) and, with
        ``fill_tasks``, into the tasks' own fields; then the system's counters."""
        self.lb_attempts, self.lb_failed, self.lb_dead = self.balancer.close(self.engine.now)
        SI, SF, T, levels = self.SI, self.SF, len(self.cols), int(self.SI[SL.Y_LEVELS])
        TI, TF = self.block("O_TI", T), self.block("OF_TF", T)
        self.outcome = Outcome(np.array(self.created_order, dtype=np.int64),
                               TF[:, SL.F_FIN].copy(), self.created_at,
                               _view(SF, SI[SL.OF_LT], T, levels).copy(), _view(SI, SI[SL.O_LORD], T, levels).copy(),
                               TI[:, SL.T_MIGR].copy())
        if fill_tasks:
            self._fill_tasks(TI, TF)
        self.migrations, self.active_pushes, self.wasted_migrations = (
            int(SI[k]) for k in (SL.Y_MIGR, SL.Y_PUSH, SL.Y_WASTE)
        )
        self.migration_levels, self.away_moves, self.home_moves = (
            int(SI[k]) for k in (SL.Y_MLEVEL, SL.Y_AWAY, SL.Y_HOMEM)
        )
        self.refused = {why: int(SI[k]) for why, k in (("aged", SL.Y_REFAGE), ("distance", SL.Y_REFDIST),
                                                        ("zone", SL.Y_REFZONE))}
        self.lb_found = int(SI[SL.Y_FOUND])
        self.unfinished, self.to_finish = int(SI[SL.Y_UNFIN]), int(SI[SL.Y_TOFIN])
        self.delivered, self.work, self.overhead = float(SF[SL.Z_DELIV]), float(SF[SL.Z_WORK]), float(SF[SL.Z_OVER])


class Outcome(NamedTuple):
    """The tasks' results of a finished run as arrays, by the tasks' index in the workload."""

    order: np.ndarray          # the tasks created, in the order they were created
    finished: np.ndarray       # finish time, ms (NaN: unfinished)
    created: np.ndarray        # creation time, ms
    level_time: np.ndarray     # CPU time per distance level from home (tasks x levels)
    reached: np.ndarray        # the order in which each level was first reached (-1: never)
    migrations: np.ndarray     # moves by the balancer


_MACHINES: dict = {}


def _distances(machine, stall: float) -> tuple[list, list, list, list, list]:
    """Per CPU its node; the node distances, the distinct ones in order (levels), each pair's
    level and each pair's memory slowdown at ``stall`` (memory_stall_fraction): made once per
    machine and stall, shared by the runs of a batch (read only)."""
    hit = _MACHINES.get((id(machine), stall))
    if hit is None or hit[0] is not machine:
        if len(_MACHINES) >= 16:
            _MACHINES.clear()
        dist = [[float(x) for x in row] for row in machine.distances]
        levels = sorted({d for row in dist for d in row})
        hit = _MACHINES[(id(machine), stall)] = (
            machine, [int(n) for n in machine.cpu_node], dist, levels, [[levels.index(d) for d in row] for row in dist],
            [[1.0 + stall * (d / 10.0 - 1.0) for d in row] for row in dist])
    return hit[1:]


def _view(buf: np.ndarray, at, rows: int, cols: int) -> np.ndarray:
    """Block ``rows`` x ``cols`` of ``buf`` from ``at``, as a 2-D view."""
    at = int(at)
    return buf[at:at + rows * cols].reshape(rows, cols)


def _draws(cols: TaskColumns, io_rest: bool, slowest: float = 1.0, first: float = 1.0,
           shared: dict | None = None, scripted: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every task's draws, as one array, and where each task's start (``starts[i]``; the last entry
    is the end): as many as the task can take (``task_kernels.workload_draws``), which does not
    depend on the policy (its bursts and I/O waits come in a fixed order, see ``task``). A task
    with bursts drawn as wall time (locality_scope 'lifetime', bursts.py) serves each over the
    slowdown where it is drawn: the first at ``first`` (1 when it starts at home), the others at
    ``slowest``, where every burst serves least, so the count bounds any run's (whether a burst
    ends in I/O does not depend on the slowdown). ``shared``: the dict kept by the runs of one
    workload (``task.columns``), where the draws are found again by the next policy's run.
    ``scripted``: draws given by hand, seed -> array, to the tasks of those seeds (scenario tests)."""
    if scripted:
        return _scripted_draws(cols, io_rest, slowest, first, scripted)
    key = ("draws", io_rest, slowest, first, *(cols.slice.tobytes(), cols.mean_burst.tobytes()))
    if shared is not None and key in shared:
        return shared[key]
    found = TKK.workload_draws(cols.seed, cols.mean_burst, cols.slice, cols.demand, cols.io_bound, io_rest, slowest,
                               first)
    if shared is not None:
        shared[key] = found
    return found


def _scripted_draws(cols: TaskColumns, io_rest: bool, slowest: float, first: float,
                    scripted: dict) -> tuple[np.ndarray, np.ndarray]:
    """``_draws`` with the tasks whose seed ``scripted`` names taking the values given there; an
    error if they are fewer than such a task's run can take."""
    draws, starts = _draws(cols, io_rest, slowest, first)
    parts = []
    for i, seed in enumerate(cols.seed.tolist()):
        given = scripted.get(seed)
        if given is None or not cols.io_bound[i]:
            parts.append(draws[starts[i]:starts[i + 1]])
            continue
        given = np.asarray(given, dtype=np.float64)
        need = TKK.count_draws(given, cols.mean_burst[i], cols.slice[i], cols.demand[i], io_rest, slowest, first)
        if not 0 <= need <= len(given):
            raise ValueError(f"numa model: the {len(given)} draws scripted for seed {seed} are fewer "
                             "than its run can take")
        parts.append(given[:need])
    return np.concatenate(parts), np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
