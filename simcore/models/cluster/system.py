"""The cluster the model runs: machines and processes on the compiled rules (the ``*_kernels``
modules: fair sharing and thrashing, migrations, the load vector, Mosix, the opportunity cost),
with SimPy as the calendar that orders the run.

The arrivals are SimPy events, and so is a *proxy* event at the key of the compiled calendar's
first timer (a machine's completion, a Mosix wake-up, the information round, a delayed migration,
the end of a background process's idle period). Each compiled timer is keyed as SimPy keys an
event (time, priority, insertion number from SimPy's own counter); when a proxy fires, the
kernels fire every timer keyed before SimPy's next event, in key order.

What stays in Python is what only Python does: the random draws (a Mosix policy's phases and
first round, each batch of 64 rounds' recipients, each background process's batches of 64
bursts and idle periods, mosix's 'random' placement), made when the run needs them; and the
decisions of a policy the kernels do not know (``PYTHON``: e.g. ``optimal``, or a policy of
another package). Such a policy places each arriving process (``assign``), answers the arrivals
and completions with migrations (``on_arrival``, ``on_completion``), and may set its own timers
(``schedule``, ``at``); it reads the state through views (``machines[i]``: ``procs``, ``load``,
``mem_used``, ``memory``, ``speed``, ``movable``; ``remaining(p)``, ``finishing(p)``).
"""

from __future__ import annotations

import math
from heapq import heappop
from typing import NamedTuple

import numpy as np

from simcore.core import calendar_kernels as C
from simcore.core.engine import END, ProxyCalendar
from simcore.errors import InputError
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import run_kernels as R
from simcore.models.cluster import sharing_kernels as S
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.base import host_list
from simcore.models.cluster.mosix import Mosix, PVMOnMosix
from simcore.models.cluster.opportunity import EnhancedMosix, EnhancedPVM
from simcore.models.cluster.policies import PVM
from simcore.models.cluster.workload import ProcSpec

KINDS = {PVM: L.PVM, EnhancedPVM: L.ENHANCED_PVM, Mosix: L.MOSIX, PVMOnMosix: L.MOSIX, EnhancedMosix: L.ENHANCED_MOSIX}


class Machine(NamedTuple):
    """One workstation: its place, name, speed (relative) and memory (MB)."""

    index: int
    name: str
    speed: float
    memory: float


def expand_machines(machines: list[dict]) -> list[Machine]:
    """Machines from ``[{name, count, speed, memory_mb}, ...]``, in the listed order."""
    out: list[Machine] = []
    for group in machines:
        for k in range(int(group.get("count", 1))):
            name = group.get("name", "m")
            out.append(Machine(len(out), f"{name}-{k}", float(group["speed"]), float(group["memory_mb"])))
    if not out:
        raise InputError("parameter 'machines': the cluster has no machine.")
    return out


class Proc:
    """A finished foreground process: its workload data, when it completed, on which machine,
    after how many migrations."""

    __slots__ = (
        "pid",
        "job",
        "arrival",
        "demand",
        "memory",
        "home",
        "measured",
        "completion",
        "ended_on",
        "migrations",
    )

    def __init__(self, spec: ProcSpec, completion: float, ended_on: int, migrations: int):
        self.pid, self.job, self.arrival, self.demand, self.memory, self.home, self.measured = spec
        self.completion, self.ended_on, self.migrations = completion, ended_on, migrations


def kind_of(policy) -> int:
    """The kernels' code of ``policy``'s rules (its exact class), or PYTHON for a policy that
    decides in its Python hooks. A subclass of a policy whose rules are in the kernels is refused
    (TypeError): it would inherit none of those rules, only the hooks of ``base.Policy``."""
    cls = type(policy)
    if cls in KINDS:
        return KINDS[cls]
    compiled = [base.__name__ for base in cls.__mro__[1:] if base in KINDS]
    if compiled:
        raise TypeError(f"cluster policy class {cls.__name__} derives from {compiled[0]}, whose rules run in the "
                        "compiled kernels (system.KINDS), so it would run none of them: derive it from "
                        "cluster.base.Policy and decide in its hooks, or give it a rule code in the kernels")
    return L.PYTHON


class ProcView:
    """A process of the compiled state (row ``row``): its workload data and where it is."""

    __slots__ = ("system", "row", "spec")

    def __init__(self, system: "ClusterSystem", row: int):
        self.system, self.row = system, row
        self.spec = system._specs[row] if row < system.T else None

    pid = property(lambda self: self.spec.pid if self.spec else -1 - (self.row - self.system.T))
    job = property(lambda self: self.spec.job if self.spec else -1)
    arrival = property(lambda self: self.spec.arrival if self.spec else 0.0)
    demand = property(lambda self: self.spec.demand if self.spec else 0.0)
    home = property(lambda self: int(self.system.CI[CS.proc(self.row, self.system.CI) + CS.P_HOME]))
    measured = property(lambda self: bool(self.spec and self.spec.measured))
    pinned = property(lambda self: self.row >= self.system.T)
    memory = property(lambda self: float(self.system.CF[CS.fproc(self.row, self.system.CI) + CS.PF_MEMORY]))
    machine = property(lambda self: int(self.system.CI[CS.proc(self.row, self.system.CI) + CS.P_MACHINE]))
    placed_at = property(lambda self: float(self.system.CF[CS.fproc(self.row, self.system.CI) + CS.PF_PLACED]))
    migrations = property(lambda self: int(self.system.CI[CS.proc(self.row, self.system.CI) + CS.P_MIGR]))
    completion = property(lambda self: float(self.system.CF[CS.fproc(self.row, self.system.CI) + CS.PF_COMPL]))


class MachineView:
    """What a policy, a monitor or a test reads of a machine."""

    __slots__ = ("system", "index", "name", "speed", "memory")

    def __init__(self, system: "ClusterSystem", index: int, name: str, speed: float, memory: float):
        self.system, self.index, self.name, self.speed, self.memory = system, index, name, speed, memory

    def _i(self, col: int) -> int:
        return int(self.system.CI[CS.machine(self.index, self.system.CI) + col])

    def _f(self, col: int) -> float:
        return float(self.system.CF[CS.fmachine(self.index, self.system.CI) + col])

    @property
    def procs(self) -> dict[int, ProcView]:
        """Resident processes by pid, in the order they joined the machine."""
        out, p, CI = {}, self._i(CS.M_FIRST), self.system.CI
        while p >= 0:
            view = ProcView(self.system, p)
            out[view.pid] = view
            p = int(CI[CS.proc(p, CI) + CS.P_NEXT])
        return out

    n_procs = property(lambda self: self._i(CS.M_NPROC))
    movable = property(lambda self: self._i(CS.M_NPROC) - self._i(CS.M_NPIN))
    load = property(lambda self: self._i(CS.M_NPROC) / self.speed)
    mem_used = property(lambda self: self._f(CS.MF_USED))
    thrashing = property(lambda self: self._f(CS.MF_USED) > self.memory)
    work = property(lambda self: self._f(CS.MF_WORK))
    thrashed = property(lambda self: self._f(CS.MF_THRASH))


class _Pending:
    """The first information round, asked for while the policy starts (before the buffers)."""

    def __init__(self, at: float, eid: int):
        self.at, self.eid = at, eid


class ClusterSystem(ProxyCalendar):
    """The machines run by ``policy``; ``on_finish(proc)`` is called, at the end of the run, for
    each foreground process in the order they completed."""

    MODEL = "cluster"

    def __init__(self, engine, machines: list, thrashing_factor: float, policy, on_finish):
        self.engine, self.tau, self.policy, self.on_finish = engine, float(thrashing_factor), policy, on_finish
        self.kind = kind_of(policy)
        self.machines = [MachineView(self, m.index, m.name, m.speed, m.memory) for m in machines]
        self.unfinished = 0
        self.CI = None
        self._round_at = None

    # -- what policies read and do -------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.engine.now

    @property
    def finished(self) -> bool:
        return (int(self.CI[CS.Y_UNFIN]) if self.CI is not None else self.unfinished) == 0

    @property
    def migrations(self) -> int:
        return int(self.CI[CS.Y_MIGR])

    @property
    def max_load(self) -> float:
        return float(self.CF[CS.Z_MAXLOAD])

    def remaining(self, proc: ProcView) -> float:
        """Remaining demand of a resident process now."""
        return S.remaining(proc.row, self.now, self.CI, self.CF)

    def finishing(self, proc: ProcView) -> bool:
        """Whether resident ``proc`` completes at this instant (its tag tied with its machine's clock)."""
        return bool(S.finishing(proc.row, self.now, self.CI, self.CF))

    def first_round(self, delay: float) -> None:
        """The first information round, ``delay`` from now (asked for while the policy starts):
        keyed now, set on the calendar with the buffers."""
        self._round_at = _Pending(self.now + delay, self.engine.next_number())

    def schedule(self, delay: float, callback):
        """A Python policy's timer (a SimPy event)."""
        return self.engine.schedule(delay, self._after(callback))

    def at(self, time: float, callback, arg):
        """Call ``callback(arg)`` at exactly ``time`` (a Python policy's timer)."""
        return self.engine.call_at(time, self._after(callback), arg)

    def _after(self, callback):
        """``callback`` followed by a proxy at the calendar's (possibly new) first timer."""
        def run(*args):
            callback(*args)
            self._push_head()
        run.__name__ = getattr(callback, "__name__", "timer")
        return run

    def migrate(self, proc: ProcView, target: int, cost: float = 0.0) -> None:
        """Move ``proc`` to ``target`` (a pinned process, one placed nowhere or on the target stays)."""
        self._call(R.migrate, proc.row, target, float(cost), self.now)

    def apply(self, migrations, cost: float) -> None:
        """A Python policy's answer to an arrival or a completion: each (process view, target
        machine) pair migrated in order at ``cost`` (``migrate``); None or () moves nothing."""
        for proc, target in migrations or ():
            self.migrate(proc, target, cost)

    # -- building the buffers ------------------------------------------------------------------
    def expect(self, specs, background=()) -> None:
        """The workload's processes and background processes, before the first arrival: the
        buffers, the first information round on the calendar, then every background process's
        first burst."""
        self._specs, self._background = list(specs), list(background)
        self.T, self.B = len(self._specs), len(self._background)
        self._first = {id(spec): i for i, spec in enumerate(self._specs)}
        self._draws = [np.random.Generator(np.random.PCG64(b.seed)) for b in self._background]
        self.CI, self.CF = self._arrays()
        if self._round_at is not None:
            L.set_timer_with(2 * len(self.machines), self._round_at.at, self._round_at.eid, self.CI, self.CF)
        self._start_proxies()
        if self.B:
            self._call(R.start_background, self.now)
        else:
            self._push_head()

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n, T, B, policy = len(self.machines), self.T, self.B, self.policy
        knowledge = getattr(policy, "knowledge", None) if self.kind != L.PYTHON else None
        window = knowledge.window if knowledge is not None else 0
        head = np.zeros(CS.Y_SIZE, dtype=np.int64)
        isize, fsize = CS.layout(n, T, B, window, head)
        CI, CF = np.zeros(isize, dtype=np.int64), np.zeros(fsize)
        CI[:CS.Y_SIZE] = head
        CI[CS.Y_UNFIN], CI[CS.Y_N], CI[CS.Y_T], CI[CS.Y_NP] = self.unfinished, n, T, T + B
        CI[CS.Y_POLICY] = self.kind
        CI[CS.Y_WINDOW], CI[CS.Y_VSTRIDE] = window, max(window, 1) + 1
        CF[CS.Z_TAU] = self.tau
        CF[CS.Z_COST] = policy.migration_cost
        hosts = host_list(getattr(policy, "hp", {}).get("host_order", "listed"), [m.speed for m in self.machines])
        CI[CI[CS.O_HOSTS]:CI[CS.O_HOSTS] + n] = hosts
        if self.kind != L.PYTHON:
            self._policy_into(CI, CF, knowledge)
        self._machines_into(_view(CI, CI[CS.O_MI], n, CS.M_COLS), _view(CF, CI[CS.OF_MF], n, CS.MF_COLS))
        self._procs_into(_view(CI, CI[CS.O_PI], T + B, CS.P_COLS), _view(CF, CI[CS.OF_PF], T + B, CS.PF_COLS))
        for b in range(B):
            self._refill(CI, CF, b)
        slots = 2 * n + 1 + T + B
        _view(CI, CI[CS.O_CI], slots, CS.C_COLS)[:, CS.C_POS] = -1
        CF[CI[CS.OF_CT]:CI[CS.OF_CT] + slots] = math.inf
        return CI, CF

    def _policy_into(self, CI: np.ndarray, CF: np.ndarray, knowledge) -> None:
        """The hyperparameters of a policy the kernels run."""
        policy = self.policy
        if knowledge is not None:
            CF[CS.Z_INTERVAL] = knowledge.interval
        if isinstance(policy, Mosix):
            CI[CS.Y_RR_INIT], CI[CS.Y_LAZY] = int(policy.initial == "round-robin"), int(policy.lazy)
            CF[CS.Z_PERIOD], CF[CS.Z_RESID] = policy.period, policy.residency
            CF[CS.Z_THRESH], CF[CS.Z_MTHRESH] = policy.threshold, policy.memory_threshold
        costs = getattr(policy, "costs", None)
        if costs is not None:
            CI[CS.Y_RUNNING] = int(costs.running)
            CF[CS.Z_LOGBASE], CF[CS.Z_BOUND], CF[CS.Z_CTAU] = costs.log_base, costs.bound, costs.tau
        if isinstance(policy, EnhancedMosix):
            CI[CS.Y_GREEDY], CI[CS.Y_KNOWN] = int(policy.greedy), int(policy.placement_window)
            CF[CS.Z_FACTOR], CF[CS.Z_RESID] = policy.factor, policy.residency

    def _machines_into(self, MI: np.ndarray, MF: np.ndarray) -> None:
        """Each machine's constants and its state before the first arrival."""
        MI[:, [CS.M_FIRST, CS.M_LAST]] = -1
        MF[:, CS.MF_SPEED] = [m.speed for m in self.machines]
        MF[:, CS.MF_MEM] = [m.memory for m in self.machines]
        MF[:, CS.MF_DUE] = math.inf
        MF[:, CS.MF_ALERT] = -math.inf
        if isinstance(self.policy, Mosix) and self.kind != L.PYTHON:
            MF[:, CS.MF_PHASE] = self.policy.phase

    def _procs_into(self, PI: np.ndarray, PF: np.ndarray) -> None:
        """Each process's data: the foreground ones, then the background ones (pinned)."""
        T = self.T
        PI[:, [CS.P_MACHINE, CS.P_TOKEN, CS.P_NEXT, CS.P_PREV, CS.P_CTOKEN, CS.P_DONE, CS.P_ENDED]] = -1
        PI[:T, CS.P_HOME] = [spec.home for spec in self._specs]
        PI[T:, CS.P_HOME] = [b.machine for b in self._background]
        PI[T:, CS.P_PINNED] = 1
        PF[:T, CS.PF_ARRIVAL] = [spec.arrival for spec in self._specs]
        PF[:T, CS.PF_MEMORY] = [spec.memory for spec in self._specs]
        PF[:T, CS.PF_REMAIN] = [spec.demand for spec in self._specs]
        PF[:, CS.PF_COMPL] = math.nan

    def _refill(self, CI: np.ndarray, CF: np.ndarray, b: int) -> None:
        """Background process ``b``'s next batch of draws (as its own generator draws them)."""
        at = int(CI[CS.OF_BD]) + b * CS.DRAWS
        CF[at:at + CS.DRAWS] = self._draws[b].random(CS.DRAWS) * self._background[b].max_period
        CI[CS.proc(self.T + b, CI) + CS.P_DRAW] = 0

    # -- the run -------------------------------------------------------------------------------
    def arrive(self, specs) -> None:
        """A group of arrivals (a SimPy event): placed by the kernels, or one by one where the
        policy decides in Python, then its answer to the arrivals."""
        first = self._first[id(specs[0])]
        if self.kind != L.PYTHON and not getattr(self.policy, "assigns_in_python", False):
            self._call(R.arrive, first, first + len(specs), self.now)
            return
        procs = [ProcView(self, p) for p in range(first, first + len(specs))]
        for proc in procs:
            self._call(R.place, proc.row, int(self.policy.assign(proc, self)), self.now)
        if self.kind == L.PYTHON:
            self.apply(self.policy.on_arrival(procs, self), self.policy.migration_cost)

    @property
    def observed(self) -> bool:
        """Whether Python takes part in the run between its arrivals: a policy that decides in
        Python (its hooks, its own placement draws); such a run is driven by SimPy (``arrive``)."""
        return self.kind == L.PYTHON or bool(getattr(self.policy, "assigns_in_python", False))

    def run_compiled(self, groups) -> None:
        """The whole run in the kernels' event loop (``run_kernels.run``), for a run nothing in
        Python observes: the arrival ``groups`` ((time, processes), as ``model.simulate`` would
        schedule them) keyed as SimPy would key them, every timer and arrival fired in that
        order, Python called only for the draws the kernels ask for. The engine's clock and
        event count end as the SimPy-driven run leaves them."""
        engine, CI = self.engine, self.CI
        times = np.array([t for t, _ in groups], dtype=np.float64)
        firsts = np.array([self._first[id(specs[0])] for _, specs in groups], dtype=np.int64)
        ends = firsts + np.array([len(specs) for _, specs in groups], dtype=np.int64)
        state, at = self.arrival_cursor(times[0] if groups else None)
        while True:
            self.handing(CI, CS.Y_EID, R.run, times, firsts, ends, state, at, CI, self.CF)
            need = int(CI[CS.Y_NEED])
            if not need:
                break
            CI[CS.Y_NEED] = 0
            self._draw_rounds() if need == L.NEED_ROUNDS else self._refill_used()
        engine.events += int(state[C.A_EVENTS])
        if CI[CS.Y_STOP]:
            self._jump(float(self.CF[CS.Z_STOPT]))

    def _call(self, kernel, *args) -> None:
        """A kernel call with SimPy's insertion numbers handed over and back, then a proxy at the
        calendar's first timer."""
        self.handing(self.CI, CS.Y_EID, kernel, *args, self.CI, self.CF)
        self._push_head()

    def _on_proxy(self, _event) -> None:
        """Fire every compiled timer keyed before SimPy's next event (and before the run's stop),
        doing in between what Python must (draws, a Python policy's completion hook); then keep
        a proxy at or before the first timer left."""
        now = heappop(self._proxies)[0]          # the proxy firing: SimPy's clock
        engine, CI = self.engine, self.CI
        engine.now = now
        queue = self._simpy_queue
        while True:
            stop = queue[0] if queue else END
            self.handing(CI, CS.Y_EID, R.drain, stop[0], stop[1], stop[2], CI, self.CF)
            engine.events += int(CI[CS.Y_FIRED])
            need = int(CI[CS.Y_NEED])
            if not need:
                break
            CI[CS.Y_NEED] = 0
            if need == L.NEED_ROUNDS:
                self._draw_rounds()
            elif need == L.NEED_DRAWS:
                self._refill_used()
            else:
                self._completion_hook(int(CI[CS.Y_HOOKM]))
        if CI[CS.Y_STOP] == 1:          # the last completion: SimPy's stop event, keyed as Engine.stop would
            CI[CS.Y_STOP] = 2
            self._stop_at(float(self.CF[CS.Z_STOPT]), int(CI[CS.Y_STOPE]))
        self._push_head()

    def _draw_rounds(self) -> None:
        """The next 64 rounds' recipients (``Knowledge.batch``)."""
        CI = self.CI
        n, W = len(self.machines), int(CI[CS.Y_WINDOW])
        at = int(CI[CS.O_R])
        CI[at:at + CS.ROUNDS * n * W] = self.policy.knowledge.batch().ravel()
        CI[CS.Y_RNEXT], CI[CS.Y_RLEFT] = 0, CS.ROUNDS

    def _refill_used(self) -> None:
        """A new batch for every background process whose batch is used up."""
        for b in range(self.B):
            if self.CI[CS.proc(self.T + b, self.CI) + CS.P_DRAW] == CS.DRAWS:
                self._refill(self.CI, self.CF, b)
        self.CI[CS.Y_BLOW] = 0

    def _completion_hook(self, machine: int) -> None:
        """A Python policy's answer to a completion on ``machine``, at the completion's time."""
        at = float(self.CF[CS.fmachine(machine, self.CI) + CS.MF_STAMP])
        self._jump(at)
        self.apply(self.policy.on_completion(machine, self), self.policy.migration_cost)

    def _calendar(self) -> tuple:
        """The calendar's heap description and buffers (``ProxyCalendar._push_head``)."""
        return L.calendar(self.CI), self.CI, self.CF

    def close(self) -> None:
        """At the end of the run: the processes that completed, in the order they did (``on_finish``)."""
        CI, CF, T = self.CI, self.CF, self.T
        self.unfinished = int(CI[CS.Y_UNFIN])
        PI, PF = _view(CI, CI[CS.O_PI], T, CS.P_COLS), _view(CF, CI[CS.OF_PF], T, CS.PF_COLS)
        order = sorted((int(PI[i, CS.P_DONE]), i) for i in range(T) if PI[i, CS.P_DONE] >= 0)
        for _, i in order:
            self.on_finish(Proc(self._specs[i], float(PF[i, CS.PF_COMPL]), int(PI[i, CS.P_ENDED]),
                                int(PI[i, CS.P_MIGR])))


def _view(buf: np.ndarray, at, rows: int, cols: int) -> np.ndarray:
    """Block ``rows`` x ``cols`` of ``buf`` from ``at``, as a 2-D view."""
    at = int(at)
    return buf[at:at + rows * cols].reshape(rows, cols)
