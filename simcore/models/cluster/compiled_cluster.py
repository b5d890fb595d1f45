"""The cluster the model runs: :class:`CompiledCluster` makes every decision of
:class:`simcore.models.cluster.cluster.Cluster` and its policies (the Python model, the
reference) in compiled code (the ``*_kernels`` modules, numba).

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
from simcore.models.cluster import layout_kernels as L
from simcore.models.cluster import run_kernels as R
from simcore.models.cluster.cluster import Cluster, Proc
from simcore.models.cluster.mosix import Mosix, PVMOnMosix
from simcore.models.cluster.opportunity import EnhancedMosix, EnhancedPVM
from simcore.models.cluster.policies import PVM

_KINDS = {PVM: L.PVM, EnhancedPVM: L.ENHANCED_PVM, Mosix: L.MOSIX, PVMOnMosix: L.MOSIX,
          EnhancedMosix: L.ENHANCED_MOSIX}


class _Pending:
    """What ``Cluster.schedule`` gave the policy while it started (its first information round)."""

    def __init__(self, at: float, eid: int):
        self.at, self.eid = at, eid


class CompiledCluster(ProxyCalendar, Cluster):
    """``Cluster`` and its policy run by the kernels (``run_kernels``); every decision the same."""

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
            L.set_timer_with(2 * len(self.machines), pending.at, pending.eid, self.CI, self.CF)
        self._start_proxies()
        self._push_head()

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n, T, policy = len(self.machines), len(self._specs), self.policy
        knowledge = getattr(policy, "knowledge", None)
        window = knowledge.window if knowledge is not None else 0
        head = np.zeros(L.Y_SIZE, dtype=np.int64)
        isize, fsize = L.layout(n, T, window, head)
        CI, CF = np.zeros(isize, dtype=np.int64), np.zeros(fsize)
        CI[:L.Y_SIZE] = head
        CI[L.Y_UNFIN], CI[L.Y_N], CI[L.Y_T] = self.unfinished, n, T
        CI[L.Y_POLICY] = _KINDS[type(policy)]
        CI[L.Y_WINDOW], CI[L.Y_VSTRIDE] = window, max(window, 1) + 1
        CF[L.Z_TAU], CF[L.Z_MAXLOAD] = self.tau, self.max_load
        CF[L.Z_COST] = policy.migration_cost
        if knowledge is not None:
            CF[L.Z_INTERVAL] = knowledge.interval
        if isinstance(policy, Mosix):
            CI[L.Y_RR_INIT], CI[L.Y_LAZY] = int(policy.initial == "round-robin"), int(policy.lazy)
            CF[L.Z_PERIOD], CF[L.Z_RESID] = policy.period, policy.residency
            CF[L.Z_THRESH], CF[L.Z_MTHRESH] = policy.threshold, policy.memory_threshold
        costs = getattr(policy, "costs", None)
        if costs is not None:
            CI[L.Y_RUNNING] = int(costs.running)
            CF[L.Z_LOGBASE], CF[L.Z_BOUND], CF[L.Z_CTAU] = costs.log_base, costs.bound, costs.tau
        if isinstance(policy, EnhancedMosix):
            CI[L.Y_GREEDY] = int(policy.greedy)
            CF[L.Z_FACTOR], CF[L.Z_RESID] = policy.factor, policy.residency
        self._machines_into(_view(CI, CI[L.O_MI], n, L.M_COLS), _view(CF, CI[L.OF_MF], n, L.MF_COLS))
        PI, PF = _view(CI, CI[L.O_PI], T, L.P_COLS), _view(CF, CI[L.OF_PF], T, L.PF_COLS)
        PI[:, [L.P_MACHINE, L.P_TOKEN, L.P_NEXT, L.P_PREV, L.P_CTOKEN, L.P_DONE, L.P_ENDED]] = -1
        PI[:, L.P_HOME] = [spec.home for spec in self._specs]
        PF[:, L.PF_ARRIVAL] = [spec.arrival for spec in self._specs]
        PF[:, L.PF_MEMORY] = [spec.memory for spec in self._specs]
        PF[:, L.PF_REMAIN] = [spec.demand for spec in self._specs]
        PF[:, L.PF_COMPL] = math.nan
        slots = 2 * n + 1 + T
        _view(CI, CI[L.O_CI], slots, L.C_COLS)[:, L.C_POS] = -1
        CF[CI[L.OF_CT]:CI[L.OF_CT] + slots] = math.inf
        return CI, CF

    def _machines_into(self, MI: np.ndarray, MF: np.ndarray) -> None:
        """Each machine's constants and its state before the first arrival."""
        MI[:, [L.M_FIRST, L.M_LAST]] = -1
        MF[:, L.MF_SPEED] = [m.speed for m in self.machines]
        MF[:, L.MF_MEM] = [m.memory for m in self.machines]
        MF[:, L.MF_DUE] = math.inf
        MF[:, L.MF_ALERT] = -math.inf
        if isinstance(self.policy, Mosix):
            MF[:, L.MF_PHASE] = self.policy.phase

    # -- the run ---------------------------------------------------------------------------------
    def arrive(self, specs) -> None:
        """A group of arrivals (a SimPy event): the kernels place them and make the policy's moves."""
        first = self._first[id(specs[0])]
        self._call(R.arrive, first, first + len(specs), self.now)

    def _call(self, kernel, *args) -> None:
        """A kernel call with SimPy's insertion numbers handed over and back, then a proxy at the
        calendar's first timer."""
        self.handing(self.CI, L.Y_EID, kernel, *args, self.CI, self.CF)
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
            self.handing(CI, L.Y_EID, R.drain, stop[0], stop[1], stop[2], CI, self.CF)
            engine.events += int(CI[L.Y_FIRED])
            if not CI[L.Y_NEED]:
                break
            self._draw_rounds()
        if CI[L.Y_STOP] == 1:          # the last completion: SimPy's stop event, keyed as Engine.stop would
            CI[L.Y_STOP] = 2
            self._stop_at(float(self.CF[L.Z_STOPT]), int(CI[L.Y_STOPE]))
        self._push_head()

    def _draw_rounds(self) -> None:
        """The next 64 rounds' recipients, drawn as ``Knowledge._recipients`` draws them."""
        CI = self.CI
        n, W = len(self.machines), int(CI[L.Y_WINDOW])
        at = int(CI[L.O_R])
        CI[at:at + L.ROUNDS * n * W] = self.policy.knowledge.batch().ravel()
        CI[L.Y_RNEXT], CI[L.Y_RLEFT], CI[L.Y_NEED] = 0, L.ROUNDS, 0

    def _push_head(self) -> None:
        """A proxy at the key of the calendar's first timer, unless one is already at or before it."""
        CI = self.CI
        if not CI[L.Y_HN]:
            return
        s = int(CI[CI[L.O_H]])
        c = int(CI[L.O_CI]) + s * L.C_COLS
        self._proxy_at((float(self.CF[CI[L.OF_CT] + s]), int(CI[c + L.C_PRIO]), int(CI[c + L.C_EID])))

    def close(self) -> None:
        """At the end of the run: the processes that completed, in the order they did (``on_finish``),
        and the machines' and the cluster's counters, back into the Python objects."""
        CI, CF, T, n = self.CI, self.CF, len(self._specs), len(self.machines)
        PI, PF = _view(CI, CI[L.O_PI], T, L.P_COLS), _view(CF, CI[L.OF_PF], T, L.PF_COLS)
        MF = _view(CF, CI[L.OF_MF], n, L.MF_COLS)
        for m, row in zip(self.machines, MF):
            m.work, m.thrashed, m.vclock, m.stamp = (float(row[k]) for k in (L.MF_WORK, L.MF_THRASH, L.MF_VCLOCK,
                                                                              L.MF_STAMP))
        self.migrations, self.unfinished = int(CI[L.Y_MIGR]), int(CI[L.Y_UNFIN])
        self.max_load = float(CF[L.Z_MAXLOAD])
        order = sorted((int(PI[i, L.P_DONE]), i) for i in range(T) if PI[i, L.P_DONE] >= 0)
        for _, i in order:
            proc = Proc(self._specs[i])
            proc.completion, proc.remaining = float(PF[i, L.PF_COMPL]), 0.0
            proc.migrations, proc.ended_on = int(PI[i, L.P_MIGR]), int(PI[i, L.P_ENDED])
            self.on_finish(proc)


def _view(buf: np.ndarray, at, rows: int, cols: int) -> np.ndarray:
    """Block ``rows`` x ``cols`` of ``buf`` from ``at``, as a 2-D view."""
    at = int(at)
    return buf[at:at + rows * cols].reshape(rows, cols)
