"""The cluster the model runs: :class:`CompiledCluster` makes every decision of
:class:`simcore.models.cluster.cluster.Cluster` and its policies (the Python model, the
reference) in compiled code (:mod:`cluster_kernels`, numba).

SimPy stays the calendar that orders the run: the arrivals are SimPy events (the kernels place
each group of processes), and so is a *proxy* event at the key of the compiled calendar's first
timer. Each timer of the model (a machine's completion, a Mosix wake-up, the information round,
a delayed migration) is keyed as SimPy would key the Python model's: its time, SimPy's NORMAL
priority and an insertion number from SimPy's own counter, taken when the Python model would
have scheduled it. When a proxy fires, the kernels fire every timer keyed before SimPy's next
event, in key order; so every event happens in the Python model's order and the events counted
are the same. The policy's draws stay in Python, made when the Python model makes them: its
phases and first round when it starts, and each batch of 64 rounds' recipients when the round
that needs it comes (the kernels stop before it).

The compiled cluster runs pvm, enhanced-pvm, mosix (its processes starting at home or round
robin), pvm-on-mosix and enhanced-mosix, without background processes or monitors; anything
else runs on the Python model (``model.cluster_class`` chooses). tests/test_cluster_compiled.py
holds every run to the Python model's, bit for bit.
"""

from __future__ import annotations

import math
from heapq import heappop

import numpy as np

from simcore.core.engine import END, ProxyCalendar
from simcore.models.cluster import cluster_kernels as CK
from simcore.models.cluster.cluster import Cluster, Proc
from simcore.models.cluster.mosix import Mosix, PVMOnMosix
from simcore.models.cluster.opportunity import EnhancedMosix, EnhancedPVM
from simcore.models.cluster.policies import PVM

_KINDS = {PVM: CK.PVM, EnhancedPVM: CK.ENHANCED_PVM, Mosix: CK.MOSIX, PVMOnMosix: CK.MOSIX,
          EnhancedMosix: CK.ENHANCED_MOSIX}


class _Pending:
    """What ``Cluster.schedule`` gave the policy while it started (its first information round)."""

    def __init__(self, at: float, eid: int):
        self.at, self.eid = at, eid


class CompiledCluster(ProxyCalendar, Cluster):
    """``Cluster`` and its policy run by the kernels of :mod:`cluster_kernels`; every decision the same."""

    MODEL = "cluster"

    @staticmethod
    def runs(policy) -> bool:
        """Whether the kernels know ``policy``'s rules (its exact class; Mosix starting its
        processes at home or round robin)."""
        kind = type(policy)
        if kind not in _KINDS:
            return False
        return kind is not Mosix or policy.initial in ("home", "round-robin")

    def schedule(self, delay: float, callback) -> _Pending:
        """The policy's first information round, asked for while it starts: kept for the calendar
        (the only timer a policy the kernels run sets from Python)."""
        if getattr(self, "CI", None) is not None or getattr(callback, "__name__", "") != "_round":
            raise RuntimeError("cluster model: the compiled cluster takes no Python timer but the first information round")
        self._round_at = _Pending(self.now + delay, self.engine.next_number())
        return self._round_at

    # -- building the arrays ---------------------------------------------------------------------
    def expect(self, specs) -> None:
        """The workload's processes: the buffers, then the first information round on the calendar."""
        self._specs = list(specs)
        self._first = {id(spec): i for i, spec in enumerate(self._specs)}
        self.CI, self.CF = self._arrays()
        pending = getattr(self, "_round_at", None)
        if pending is not None:
            CK.set_timer_with(2 * len(self.machines), pending.at, pending.eid, self.CI, self.CF)
        self._start_proxies()
        self._push_head()

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n, T, policy = len(self.machines), len(self._specs), self.policy
        knowledge = getattr(policy, "knowledge", None)
        window = knowledge.window if knowledge is not None else 0
        io, isize, fo, fsize = CK.layout(n, T, window)
        CI, CF = np.zeros(isize, dtype=np.int64), np.zeros(fsize)
        for key, at in {**io, **fo}.items():
            CI[key] = at
        CI[CK.Y_UNFIN], CI[CK.Y_N], CI[CK.Y_T] = self.unfinished, n, T
        CI[CK.Y_POLICY] = _KINDS[type(policy)]
        CI[CK.Y_WINDOW], CI[CK.Y_VSTRIDE] = window, max(window, 1) + 1
        CF[CK.Z_TAU], CF[CK.Z_MAXLOAD] = self.tau, self.max_load
        CF[CK.Z_COST] = policy.migration_cost
        if knowledge is not None:
            CF[CK.Z_INTERVAL] = knowledge.interval
        if isinstance(policy, Mosix):
            CI[CK.Y_RR_INIT], CI[CK.Y_LAZY] = int(policy.initial == "round-robin"), int(policy.lazy)
            CF[CK.Z_PERIOD], CF[CK.Z_RESID] = policy.period, policy.residency
            CF[CK.Z_THRESH], CF[CK.Z_MTHRESH] = policy.threshold, policy.memory_threshold
        costs = getattr(policy, "costs", None)
        if costs is not None:
            CI[CK.Y_RUNNING] = int(costs.running)
            CF[CK.Z_LOGBASE], CF[CK.Z_BOUND], CF[CK.Z_CTAU] = costs.log_base, costs.bound, costs.tau
        if isinstance(policy, EnhancedMosix):
            CI[CK.Y_GREEDY] = int(policy.greedy)
            CF[CK.Z_FACTOR], CF[CK.Z_RESID] = policy.factor, policy.residency
        self._machines_into(_view(CI, io[CK.O_MI], n, CK.M_COLS), _view(CF, fo[CK.OF_MF], n, CK.MF_COLS))
        PI, PF = _view(CI, io[CK.O_PI], T, CK.P_COLS), _view(CF, fo[CK.OF_PF], T, CK.PF_COLS)
        PI[:, [CK.P_MACHINE, CK.P_TOKEN, CK.P_NEXT, CK.P_PREV, CK.P_CTOKEN, CK.P_DONE, CK.P_ENDED]] = -1
        PI[:, CK.P_HOME] = [spec.home for spec in self._specs]
        PF[:, CK.PF_ARRIVAL] = [spec.arrival for spec in self._specs]
        PF[:, CK.PF_MEMORY] = [spec.memory for spec in self._specs]
        PF[:, CK.PF_REMAIN] = [spec.demand for spec in self._specs]
        PF[:, CK.PF_COMPL] = math.nan
        slots = 2 * n + 1 + T
        _view(CI, io[CK.O_CI], slots, CK.C_COLS)[:, CK.C_POS] = -1
        CF[fo[CK.OF_CT]:fo[CK.OF_CT] + slots] = math.inf
        return CI, CF

    def _machines_into(self, MI: np.ndarray, MF: np.ndarray) -> None:
        """Each machine's constants and its state before the first arrival."""
        MI[:, [CK.M_FIRST, CK.M_LAST]] = -1
        MF[:, CK.MF_SPEED] = [m.speed for m in self.machines]
        MF[:, CK.MF_MEM] = [m.memory for m in self.machines]
        MF[:, CK.MF_DUE] = math.inf
        MF[:, CK.MF_ALERT] = -math.inf
        if isinstance(self.policy, Mosix):
            MF[:, CK.MF_PHASE] = self.policy.phase

    # -- the run ---------------------------------------------------------------------------------
    def arrive(self, specs) -> None:
        """A group of arrivals (a SimPy event): the kernels place them and make the policy's moves."""
        first = self._first[id(specs[0])]
        self._call(CK.arrive, first, first + len(specs), self.now)

    def _call(self, kernel, *args) -> None:
        """A kernel call with SimPy's insertion numbers handed over and back, then a proxy at the
        calendar's first timer."""
        self.handing(self.CI, CK.Y_EID, kernel, *args, self.CI, self.CF)
        self._push_head()

    def _on_proxy(self, _event) -> None:
        """Fire every compiled timer keyed before SimPy's next event (and before the run's stop),
        drawing the rounds' recipients when one needs them; then keep a proxy at or before the
        first timer left."""
        now = heappop(self._proxies)[0]          # the proxy firing: SimPy's clock
        engine, CI = self.engine, self.CI
        engine.now = now
        queue = self._simpy_queue
        while True:
            stop = queue[0] if queue else END
            self.handing(CI, CK.Y_EID, CK.drain, stop[0], stop[1], stop[2], CI, self.CF)
            engine.events += int(CI[CK.Y_FIRED])
            if not CI[CK.Y_NEED]:
                break
            self._draw_rounds()
        if CI[CK.Y_STOP] == 1:          # the last completion: SimPy's stop event, keyed as Engine.stop would
            CI[CK.Y_STOP] = 2
            self._stop_at(float(self.CF[CK.Z_STOPT]), int(CI[CK.Y_STOPE]))
        self._push_head()

    def _draw_rounds(self) -> None:
        """The next 64 rounds' recipients, drawn as ``Knowledge._recipients`` draws them."""
        CI = self.CI
        n, W = len(self.machines), int(CI[CK.Y_WINDOW])
        at = int(CI[CK.O_R])
        CI[at:at + CK.ROUNDS * n * W] = self.policy.knowledge.batch().ravel()
        CI[CK.Y_RNEXT], CI[CK.Y_RLEFT], CI[CK.Y_NEED] = 0, CK.ROUNDS, 0

    def _push_head(self) -> None:
        """A proxy at the key of the calendar's first timer, unless one is already at or before it."""
        CI = self.CI
        if not CI[CK.Y_HN]:
            return
        s = int(CI[CI[CK.O_H]])
        c = int(CI[CK.O_CI]) + s * CK.C_COLS
        self._proxy_at((float(self.CF[CI[CK.OF_CT] + s]), int(CI[c + CK.C_PRIO]), int(CI[c + CK.C_EID])))

    def close(self) -> None:
        """At the end of the run: the processes that completed, in the order they did (``on_finish``),
        and the machines' and the cluster's counters, back into the Python objects."""
        CI, CF, T, n = self.CI, self.CF, len(self._specs), len(self.machines)
        PI, PF = _view(CI, CI[CK.O_PI], T, CK.P_COLS), _view(CF, CI[CK.OF_PF], T, CK.PF_COLS)
        MF = _view(CF, CI[CK.OF_MF], n, CK.MF_COLS)
        for m, row in zip(self.machines, MF):
            m.work, m.thrashed, m.vclock, m.stamp = (float(row[k]) for k in (CK.MF_WORK, CK.MF_THRASH, CK.MF_VCLOCK,
                                                                              CK.MF_STAMP))
        self.migrations, self.unfinished = int(CI[CK.Y_MIGR]), int(CI[CK.Y_UNFIN])
        self.max_load = float(CF[CK.Z_MAXLOAD])
        order = sorted((int(PI[i, CK.P_DONE]), i) for i in range(T) if PI[i, CK.P_DONE] >= 0)
        for _, i in order:
            proc = Proc(self._specs[i])
            proc.completion, proc.remaining = float(PF[i, CK.PF_COMPL]), 0.0
            proc.migrations, proc.ended_on = int(PI[i, CK.P_MIGR]), int(PI[i, CK.P_ENDED])
            self.on_finish(proc)


def _view(buf: np.ndarray, at, rows: int, cols: int) -> np.ndarray:
    """Block ``rows`` x ``cols`` of ``buf`` from ``at``, as a 2-D view."""
    at = int(at)
    return buf[at:at + rows * cols].reshape(rows, cols)
