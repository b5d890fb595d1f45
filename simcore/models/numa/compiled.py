"""The compiled balancer: ``CompiledBalancer`` makes the decisions of
:class:`simcore.models.numa.balancer.Balancer` (the pure-Python reference, ``Balancer.compiled =
False``) with the periodic and newly-idle attempts up to the busiest queue, the timers' due times,
the sleeping domains and the CPUs' timers themselves in compiled code (:mod:`timing_kernels`, numba).
The Python system (``NumaSystem``: traces, invariant checks, monitors) runs it; the compiled
system runs its subclass ``compiled_system.SystemBalancer``, whose timers go to the system's own
calendar, and keeps only its buffers, domains and Python steps from here.

The CPUs' timers form a calendar in the kernels' buffers instead of SimPy events. Each entry is
keyed as SimPy would key the reference's timer: its time, SimPy's NORMAL priority, and the
insertion number taken from SimPy's own counter at the moment the reference would have scheduled
it. A proxy event on SimPy's queue, at the first entry's key, hands control to the kernels, which
fire every entry keyed before SimPy's next event. So attempts happen in the reference's order among
themselves and with every other event (ties included), and the events counted are the same.

What stays in Python: the moves of an attempt that found a busiest group (the policy decides
which task may move; SimPy's clock is set to that attempt's time first), active balancing, and the
end-of-run count (``close``). The domains' run-time state
(``last``, ``interval``, ``failed``, ``dormant``) lives in the kernels' buffers; a domain object
reads and writes it there (:class:`ArrayDom`, a view of the batch's static domain), so the
inherited Python methods see one state. The buffers' constants are built once per batch
(``Balancer.static``) and copied by each run.
The system's load mirrors (``np_cur``, ``np_avg``, ``np_tick``) become views of the float buffer.

The attempts the kernels count are kept in their buffer and added to the system's counters at
the end of the run (``close``); ``NumaSystem.lb_counts`` reads both during a run.
tests/test_numa_timing.py holds every run to the reference's, bit for bit.
"""

from __future__ import annotations

import math
from heapq import heappop
from operator import attrgetter

import numpy as np
from simpy.events import NORMAL

from simcore.core.engine import END, ProxyCalendar

from simcore.models.numa import timing_kernels as K
from simcore.models.numa.balancer import IDLE, NEWLY_IDLE, NOT_IDLE, Balancer, Dom

_STATE = ("last", "interval", "failed", "dormant")
_NO_LIMIT = 1 << 62


class ArrayDom(Dom):
    """A view of a static domain (``Balancer.static``) whose run-time state lives in the run's
    buffers (slot ``d`` of each block; its first values are in the cached constants): the other
    fields read the static domain's."""

    __slots__ = ("_t", "_F", "_I", "_d", "_at")

    last = property(lambda self: float(self._F[self._at[0] + self._d]),
                    lambda self, v: self._F.__setitem__(self._at[0] + self._d, v))
    interval = property(lambda self: float(self._F[self._at[1] + self._d]),
                        lambda self, v: self._F.__setitem__(self._at[1] + self._d, v))
    failed = property(lambda self: int(self._I[self._at[2] + self._d]),
                      lambda self, v: self._I.__setitem__(self._at[2] + self._d, v))
    dormant = property(lambda self: bool(self._I[self._at[3] + self._d]),
                       lambda self, v: self._I.__setitem__(self._at[3] + self._d, int(v)))

    @classmethod
    def of(cls, dom: Dom, F, I, d: int, at: tuple) -> "ArrayDom":
        """``dom`` with its state in slot ``d`` of the buffers (``at``: the state blocks' offsets)."""
        new = cls.__new__(cls)
        new._t, new._F, new._I, new._d, new._at = dom, F, I, d, at
        return new


for _name in Dom.__slots__:            # the static fields, read from the static domain
    if _name not in _STATE:
        setattr(ArrayDom, _name, property(attrgetter(f"_t.{_name}")))


class CompiledBalancer(ProxyCalendar, Balancer):
    """``Balancer`` with its timing compiled; every decision the same (tests/test_numa_timing.py)."""

    # -- the buffers -------------------------------------------------------------------------
    def _own_domains(self) -> list[list[Dom]]:
        """The static domains themselves: ``_slots`` replaces each by an :class:`ArrayDom` (its
        state in this run's buffers) before anything writes to one."""
        return [list(doms) for doms in self.static.doms]

    def _setup(self, n: int) -> None:
        """The buffers and the calendar, before ``Balancer.__init__`` arms the CPUs."""
        self._build(self.sys)
        self._calt = self._block(self.F, "OF_CALT", n)
        self._cale = self._block(self.I, "O_CALEID", n)
        self._calt[:] = math.inf
        self._start_proxies()

    def _build(self, sys) -> None:
        n = sys.ncpus
        L = max(1, max(len(doms) for doms in self.doms))       # (a machine may have no domains)
        P = max(1, max(len(p) for p in self.pdoms))
        G = max((len(dom.groups) for doms in self.doms for dom in doms), default=1)
        key = ("buffers", L, P, G, self.instant, self.sleeps, self.tick)
        made = self.static.extra.get(key)
        if made is None:                  # the domains' constants, once per batch (Balancer.static)
            made = self.static.extra[key] = self._constants(n, L, P, G)
        self.I, self.F = made[0].copy(), made[1].copy()
        I, F = self.I, self.F
        self._mirror(sys, n)
        self._slots(L)
        self.timer_at = self._block(F, "OF_TAT", n)
        self.timer_at[:] = math.inf
        self._cnt = I[K.H_ATTEMPTS:K.H_DEAD + 1]
        self._out_cpu = self._block(I, "O_OUTCPU", n)
        self._out_at = self._block(F, "OF_OUTAT", n)

    def _constants(self, n: int, L: int, P: int, G: int) -> tuple[np.ndarray, np.ndarray]:
        """The int and float buffers with their layout, header and every domain's constants."""
        D = n * L
        ints = [("O_BUSY", n), ("O_FAILED", D), ("O_DORMANT", D), ("O_BUSYOK", D), ("O_LOCAL", D), ("O_TOTALN", D),
                ("O_IMB", D), ("O_HASWIDE", D), ("O_PD", n * P), ("O_NPD", n), ("O_GOF", D * n), ("O_SIZES", D * G),
                ("O_NGROUPS", D), ("O_SPAN", D * n), ("O_WIDE", D * n), ("O_OUTCPU", n),
                ("O_NEWIDLE", D), ("O_CALEID", n)]
        floats = [("OF_CUR", n), ("OF_AVG", n), ("OF_TCK", n), ("OF_TAT", n), ("OF_LAST", D), ("OF_IVL", D),
                  ("OF_BF", D), ("OF_MAXI", D), ("OF_OUTAT", n), ("OF_CALT", n)]
        I = np.zeros(K.HEADER + sum(size for _, size in ints), dtype=np.int64)
        F = np.zeros(K.F_HEADER + sum(size for _, size in floats))
        at = K.HEADER
        for name, size in ints:
            I[getattr(K, name)] = at
            at += size
        at = K.F_HEADER
        for name, size in floats:
            I[getattr(K, name)] = at
            at += size
        I[K.H_N], I[K.H_L], I[K.H_G], I[K.H_P] = n, L, G, P
        I[K.H_INSTANT], I[K.H_SLEEPS] = int(self.instant), int(self.sleeps)
        F[K.F_TICK] = self.tick
        self._index(I, F, n, L, P, G)
        return I, F

    def _block(self, buf, name: str, size: int):
        start = int(self.I[getattr(K, name)])
        return buf[start:start + size]

    def _mirror(self, sys, n: int) -> None:
        """Make the system's load mirrors views of the float buffer (values kept)."""
        F = self.F
        for attr, name in (("np_cur", "OF_CUR"), ("np_avg", "OF_AVG"), ("np_tick", "OF_TCK")):
            view = self._block(F, name, n)
            view[:] = getattr(sys, attr)
            setattr(sys, attr, view)
        for rq in sys.rqs:
            rq.np_avg, rq.np_tick = sys.np_avg, sys.np_tick

    def _index(self, I, F, n: int, L: int, P: int, G: int) -> None:
        """Write every domain's constants into the buffers."""
        ib = {name: int(I[getattr(K, name)]) for name in ("O_BUSYOK", "O_LOCAL", "O_TOTALN", "O_IMB", "O_HASWIDE",
                                                          "O_GOF", "O_SIZES", "O_NGROUPS", "O_SPAN", "O_WIDE",
                                                          "O_PD", "O_NPD", "O_NEWIDLE", "O_FAILED", "O_DORMANT")}
        fb = {name: int(I[getattr(K, name)]) for name in ("OF_BF", "OF_MAXI", "OF_LAST", "OF_IVL")}
        for c, doms in enumerate(self.doms):
            for k, dom in enumerate(doms):
                d = c * L + k
                I[ib["O_BUSYOK"] + d] = int(dom.busy_ok)
                I[ib["O_NEWIDLE"] + d] = int(dom.newidle)
                I[ib["O_LOCAL"] + d] = dom.local
                I[ib["O_TOTALN"] + d] = dom.total_n
                I[ib["O_IMB"] + d] = dom.imbalance_pct
                I[ib["O_HASWIDE"] + d] = int(bool(dom.wide))
                I[ib["O_NGROUPS"] + d] = len(dom.groups)
                gof = np.full(n, -1, dtype=np.int64)
                for g, cpus in enumerate(dom.groups):
                    gof[list(cpus)] = g
                I[ib["O_GOF"] + d * n:ib["O_GOF"] + (d + 1) * n] = gof
                I[ib["O_SIZES"] + d * G:ib["O_SIZES"] + d * G + len(dom.sizes)] = dom.sizes
                I[ib["O_SPAN"] + d * n + np.fromiter(dom.span, np.int64, len(dom.span))] = 1
                if dom.wide:
                    I[ib["O_WIDE"] + d * n + np.fromiter(dom.wide, np.int64, len(dom.wide))] = 1
                F[fb["OF_BF"] + d] = dom.busy_factor
                F[fb["OF_MAXI"] + d] = dom.max_interval
                F[fb["OF_LAST"] + d], F[fb["OF_IVL"] + d] = dom.last, dom.interval     # the first state
                I[ib["O_FAILED"] + d], I[ib["O_DORMANT"] + d] = dom.failed, int(dom.dormant)
            periodic = [dom for dom in doms if dom.periodic]
            I[ib["O_NPD"] + c] = len(periodic)
            for j, dom in enumerate(periodic):
                I[ib["O_PD"] + c * P + j] = dom.level

    def _slots(self, L: int) -> None:
        """Give every domain its state slot in the buffers (:class:`ArrayDom`)."""
        F, I = self.F, self.I
        at = (int(I[K.OF_LAST]), int(I[K.OF_IVL]), int(I[K.O_FAILED]), int(I[K.O_DORMANT]))
        of = ArrayDom.of
        for c, doms in enumerate(self.doms):
            for k, dom in enumerate(doms):
                doms[k] = of(dom, F, I, c * L + k, at)
            self.pdoms[c] = [dom for dom in doms if dom.periodic]

    # -- Python views of the compiled state ------------------------------------------------------
    @property
    def dormant_cpus(self) -> set[int]:
        """The CPUs with a sleeping domain (the reference keeps this set by hand)."""
        return {c for c, doms in enumerate(self.pdoms) if any(dom.dormant for dom in doms)}

    def unflushed(self) -> tuple[int, int, int]:
        """The attempts, failures and certain failures the kernels counted since the last flush."""
        attempts, failed, dead = self._cnt.tolist()
        return attempts, failed, dead

    def _flush(self) -> None:
        """Move the counts the kernels made to the system's counters (at the end of the run: until
        then the system's counters hold only the attempts made in Python)."""
        attempts, failed, dead = self.unflushed()
        sys = self.sys
        sys.lb_attempts += attempts
        sys.lb_failed += failed
        sys.lb_dead += dead
        self._cnt[:] = 0

    # -- timing: the calendar ----------------------------------------------------------------------
    # The CPUs' timers are not SimPy events: each is a calendar entry keyed as SimPy would key its
    # timer, (time, NORMAL, insertion number), the number taken from SimPy's counter when the
    # reference would have scheduled it. One proxy event on SimPy's queue, at the key of the
    # calendar's first entry (or earlier), makes SimPy call ``_on_proxy``, which fires in compiled
    # code every entry keyed before the next SimPy event: the same attempts, in the same order
    # among themselves and with every other event, as the reference's timers.
    def arm(self, cpu: int) -> None:
        now = self.engine.now
        at = K.arm(cpu, now, self.F, self.I)
        if at != math.inf:
            self._set_timer(cpu, at, now)

    def _set_timer(self, cpu: int, at: float, now: float) -> None:
        """Set the CPU's timer at ``at`` (``Engine.call(max(at - now, 0), ...)``), replacing any."""
        t = now + max(at - now, 0.0)
        eid = self.engine.next_number()
        self._calt[cpu] = t
        self._cale[cpu] = eid
        key = (t, NORMAL, eid)
        if not self._proxies or key < self._proxies[0]:     # _proxy_at tests it too; here it saves
            self._proxy_at(key)                              # the call when a proxy is already earlier

    def _on_proxy(self, _event) -> None:
        """Fire every calendar entry keyed before SimPy's next event (each attempt that found a
        group carried on in Python at its own time), then keep a proxy at or before the first
        entry left."""
        now = heappop(self._proxies)[0]          # the proxy firing: SimPy's clock
        engine, sys = self.engine, self.sys
        engine.now = now
        queue = self._simpy_queue
        F, I = self.F, self.I
        while True:
            limit = 1 if sys.check is not None else _NO_LIMIT      # the checker runs after each attempt
            stop = queue[0] if queue else END
            found = self.handing(I, K.H_EID, K.drain, stop[0], stop[1], stop[2], limit, F, I)
            fired = int(I[K.H_FIRED])
            engine.events += fired
            if found:
                now = float(F[K.F_FOUND])
                self._jump(now)
                self._found(int(I[K.H_FCPU]), int(I[K.H_FJ]), now)
            if fired and sys.check is not None:
                sys.check(sys)
            if not found and fired < limit:
                break
        first = int(I[K.H_HEAD])
        if first >= 0:
            self._proxy_at((float(self._calt[first]), NORMAL, int(self._cale[first])))

    def _found(self, cpu: int, j: int, now: float) -> None:
        """The rest of ``Balancer.fire`` after the compiled loop found a busiest group in the CPU's
        ``j``-th periodic domain: carry that attempt on, and go on with the domains above."""
        sys, F, I = self.sys, self.F, self.I
        idle = not sys.busy[cpu]
        moved_any = False
        r = -(j + 1.0)
        while r < 0:                      # domain -r - 1 found a busiest group
            j = int(-r) - 1
            if self._carry_on(cpu, self.pdoms[cpu][j], idle, now):
                idle = False
                moved_any = True
            r = K.periodic(cpu, j + 1, now, idle, moved_any, F, I)
        if moved_any:
            sys.resched(sys.rqs[cpu])
            self.arm(cpu)
        elif r != math.inf:
            self._set_timer(cpu, r, now)

    def _carry_on(self, cpu: int, dom: ArrayDom, idle: bool, now: float) -> int:
        """``load_balance`` after the compiled search found its busiest queue, then the end of
        ``fire``'s step for the domain; returns the number of tasks moved."""
        sys, I = self.sys, self.I
        imb, busiest, was_quiet = int(I[K.H_IMB]), sys.rqs[int(I[K.H_BUSIEST])], bool(I[K.H_QUIET])
        moved = self._after_search(sys.rqs[cpu], dom, busiest, imb, IDLE if idle else NOT_IDLE)
        dom.last = now
        if self.sleeps and (was_quiet or self.quiet(cpu, dom)):
            dom.dormant = True
            if dom.wide:
                I[K.H_WIDE_SLEEPERS] += 1
        return moved

    def newidle(self, rq) -> None:
        """``Balancer.newidle``: the compiled attempts, and in Python the moves of one that found a
        busiest group."""
        cpu, F, I = rq.cpu, self.F, self.I
        now = self.engine.now
        k = K.newidle(cpu, 0, now, F, I)
        while k:
            busiest = self.sys.rqs[int(I[K.H_BUSIEST])]
            if busiest.nr_running > 1 and self.move_tasks(busiest, rq, int(I[K.H_IMB]), self.doms[cpu][k - 1], NEWLY_IDLE):
                return
            self.sys.lb_failed += 1
            k = K.newidle(cpu, k, now, F, I)

    def on_state(self, cpu: int, idle: bool) -> None:
        now = self.engine.now
        at = K.on_state(cpu, idle, now, self.F, self.I)
        if at != math.inf:
            self._set_timer(cpu, at, now)

    def on_loaded(self, src: int) -> None:
        if self.I[K.H_WIDE_SLEEPERS]:
            self._wake(src, True)

    def _wake(self, src: int, wide: bool) -> None:
        now = self.engine.now
        out = K.wake(src, wide, now, self.F, self.I)
        for i in range(out):
            self._set_timer(int(self._out_cpu[i]), float(self._out_at[i]), now)

    def close(self, until: float) -> None:
        """``Balancer.close`` in the kernels (:func:`timing_kernels.close`), then the counts."""
        K.close(until, self.F, self.I)
        self._flush()
