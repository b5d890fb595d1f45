"""Sched-domain load balancing of Linux 2.6.11 (periodic, newly idle, active), event-driven.

Each CPU has one timer, set to the earliest due balance of its domains; a domain is due when
``balance_interval`` (times ``busy_factor`` while the CPU runs a task) has passed since its last
attempt. A *quiet* domain, one that every attempt is sure to find balanced (see ``quiet``), goes
*dormant* (no timer) and the attempts the kernel would make meanwhile are counted arithmetically
when it wakes (see ``_settle``), so attempt counts and domain state follow the tick-driven kernel
without simulating its ticks.

Decisions a policy can change go through the policy object: which domains balance
(``balances``), the imbalance threshold (``imbalance_pct``), and which task may move
(``can_migrate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.errors import InputError
from simcore.models.numa.runqueue import SCHED_LOAD_SCALE as SLS
from simcore.models.numa.runqueue import tick_index

# domains spanning at least this many CPUs compute group loads with numpy
VECTOR_MIN = 16

# idle kinds of load_balance
NOT_IDLE, IDLE, NEWLY_IDLE = 0, 1, 2
#: the policy's name of each kind: periodic balancing of a busy CPU, of an idle CPU, newly idle
KINDS = ("periodic", "idle", "newidle")

# 2.6.12 flag bits (docs/linux26-scheduler.md, "Domain flags") for domains that carry an int bitmask
_FLAG_BITS = {"LOAD_BALANCE": 1, "BALANCE_NEWIDLE": 2, "BALANCE_EXEC": 4, "WAKE_IDLE": 8, "WAKE_AFFINE": 16,
              "WAKE_BALANCE": 32, "SHARE_CPUPOWER": 64}


_FLAG_CACHE: dict = {}


def due(last: float, dom: "Dom", idle: bool, tick: float) -> float:
    """The tick of ``dom``'s attempt after one at ``last``: rebalance_tick's interval later, i.e.
    ``balance_interval``, times ``busy_factor`` unless the CPU is idle, at least one tick; rounded
    up to a tick boundary as ``on_tick`` does (inlined: this is the hottest helper).
    ``due(0.0, ...)``: the interval in whole ticks. The one place of this arithmetic: the timers,
    the due test and the counting of a sleeping domain's attempts must agree, or a CPU re-arms
    at the instant it fired."""
    ivl = dom.interval if idle else dom.interval * dom.busy_factor
    return math.ceil((last + (ivl if ivl > tick else tick)) / tick - 1e-9) * tick


def on_tick(t: float, tick: float) -> float:
    """The first tick boundary at or after ``t`` (1e-9 ms absorbs rounding)."""
    return math.ceil(t / tick - 1e-9) * tick


def has_flag(domain, name: str) -> bool:
    """Whether ``domain.flags`` holds ``name`` (e.g. "BALANCE_NEWIDLE"); accepts ints, strings, sets.
    Answers for hashable flags (ints, strings, frozensets: every domain of a run shares a few) are kept."""
    flags = getattr(domain, "flags", None)
    try:
        key = (type(flags), flags, name)
        return _FLAG_CACHE[key]
    except TypeError:       # unhashable flags (a set, a list): no caching
        return _has_flag(flags, name)
    except KeyError:
        pass
    answer = _has_flag(flags, name)
    _FLAG_CACHE[key] = answer
    return answer


def _has_flag(flags, name: str) -> bool:
    if flags is None:
        return True
    if isinstance(flags, int):
        return bool(flags & _FLAG_BITS[name])
    if isinstance(flags, str):
        flags = flags.replace("|", " ").replace(",", " ").split()
    norm = {str(f).upper().removeprefix("SD_") for f in flags}
    aliases = {"LOAD_BALANCE": {"LOAD_BALANCE", "LB"}, "BALANCE_NEWIDLE": {"BALANCE_NEWIDLE", "NEWIDLE", "NI"},
               "BALANCE_EXEC": {"BALANCE_EXEC", "EXEC", "EX"}}.get(name, {name})
    return bool(norm & aliases)


def policy_answers(d, k: int, cpu: int, policy) -> tuple:
    """What a domain asks the policy, in this order: its imbalance threshold (from its default),
    then, if it balances at all (LOAD_BALANCE, more than one group), whether newly idle (only
    with BALANCE_NEWIDLE), periodically while busy and, if not, while idle. Returns
    (imbalance_pct, balances, newidle, busy_ok, periodic)."""
    imbalance_pct = int(policy.imbalance_pct(cpu, k, int(getattr(d, "imbalance_pct"))))
    lb = has_flag(d, "LOAD_BALANCE") and len(d.groups) > 1
    newidle = lb and has_flag(d, "BALANCE_NEWIDLE") and policy.balances(cpu, k, "newidle")
    busy_ok = lb and policy.balances(cpu, k, "periodic")
    periodic = busy_ok or (lb and policy.balances(cpu, k, "idle"))
    return imbalance_pct, lb, newidle, busy_ok, periodic


class Dom:
    """One (CPU, level) sched domain as the balancer uses it, plus its run-time state."""

    __slots__ = ("level", "name", "span", "cpus", "groups", "local", "min_interval", "max_interval",
                 "busy_factor", "imbalance_pct", "cache_nice_tries", "cache_hot_time", "lb", "newidle",
                 "exec", "periodic", "busy_ok", "interval", "last", "failed", "dormant", "matrix", "sizes",
                 "total_n", "wide")

    def __init__(self, d, k: int, cpu: int, policy, answers: tuple | None = None):
        """``answers``: :func:`policy_answers` for this domain, if already asked."""
        self.level = k
        self.name = getattr(d, "name", f"level{k}")
        self.span = frozenset(d.span)
        self.cpus = tuple(sorted(self.span))
        self.groups = [tuple(sorted(g)) for g in d.groups]
        self.local = next((i for i, g in enumerate(self.groups) if cpu in g), -1)
        if self.local < 0:   # the kernel's sched domains always hold their CPU (find_busiest_group relies on it)
            raise InputError(f"sched domain '{self.name}' (level {k}) of CPU {cpu}: the CPU is in none of its groups "
                             f"{[list(g) for g in self.groups]}.")
        self.min_interval = float(getattr(d, "min_interval"))
        self.max_interval = float(getattr(d, "max_interval"))
        self.busy_factor = float(getattr(d, "busy_factor"))
        self.imbalance_pct, self.lb, self.newidle, self.busy_ok, self.periodic = (
            answers if answers is not None else policy_answers(d, k, cpu, policy))
        self.cache_nice_tries = int(getattr(d, "cache_nice_tries"))
        self.cache_hot_time = float(d.cache_hot_time)   # ms, set by the model (model.tune_domains)
        self.exec = has_flag(d, "BALANCE_EXEC")
        bi0 = getattr(d, "balance_interval", None)
        self.interval = float(bi0) if bi0 is not None else self.min_interval
        self.last = 0.0
        self.failed = 0
        self.dormant = False
        self.matrix = None   # group membership (groups x CPUs) for vectorised loads of wide domains
        self.sizes = [len(g) for g in self.groups]
        self.total_n = sum(self.sizes)
        # the CPUs of the other groups of more than one CPU (see Balancer.quiet)
        self.wide = frozenset(c for i, g in enumerate(self.groups) if i != self.local and len(g) > 1 for c in g)


    def copy(self) -> "Dom":
        """A new domain with this one's fields (the static ones are never written after ``__init__``)."""
        new = Dom.__new__(Dom)
        for name in Dom.__slots__:
            setattr(new, name, getattr(self, name))
        return new


def _matrices(doms: list[list[Dom]], n: int) -> None:
    """Give each wide balancing domain its group-membership matrix (one per distinct grouping)."""
    shared: dict = {}
    for row in doms:
        for dom in row:
            if len(dom.span) >= VECTOR_MIN and dom.lb:
                key = tuple(dom.groups)
                if key not in shared:
                    m = np.zeros((len(dom.groups), n))
                    for i, g in enumerate(dom.groups):
                        m[i, list(g)] = 1.0
                    shared[key] = m
                dom.matrix = shared[key]


@dataclass
class Static:
    """The part of a balancer fixed by the domains and the policy: the domains as built (copied
    by each run) and what a subclass derives from them (``extra``)."""

    domains: list
    doms: list[list[Dom]]
    extra: dict


_STATICS: dict = {}
_KEEP = 16                    # runs of other domains or policies kept (a batch job needs 1-2)


def _static(domains, policy, n: int) -> Static:
    """The :class:`Static` of ``domains`` under ``policy``, built once per domain lists and policy
    answers (a batch's replications share the model's domain lists, see ``model.batch_domains``).
    The key holds what ``Dom`` asks the policy, so another policy or zone is another entry; the
    entry holds the lists themselves, so an id is never taken for another list's."""
    answers = [[policy_answers(d, k, c, policy) for k, d in enumerate(domains[c])] for c in range(n)]
    key = (id(domains), n, tuple(map(tuple, answers)))
    hit = _STATICS.get(key)
    if hit is not None and hit.domains is domains:
        return hit
    doms = [[Dom(d, k, c, policy, answers[c][k]) for k, d in enumerate(domains[c])] for c in range(n)]
    _matrices(doms, n)
    if len(_STATICS) >= _KEEP:
        _STATICS.clear()
    _STATICS[key] = Static(domains, doms, {})
    return _STATICS[key]


class Balancer:
    """Periodic, newly-idle and active balancing over every CPU's domains."""

    sleeps = True   # quiet domains sleep; False makes every attempt for real (the reference, for tests)
    compiled = True   # systems build compiled.CompiledBalancer (timing and searches in numba); False: this class, the pure-Python reference

    def __init__(self, system, domains, policy, params: dict):
        self.sys = system
        self.engine = system.engine
        self.policy = policy
        self.tick = float(params["tick"])
        self.idle_ignores_hot = bool(params["idle_ignores_cache_hot"])
        self.active = bool(params["active_balance"])
        self.instant = params["load_average"] == "instant"
        self.attempt_cost = float(params["lb_attempt_cost"])
        self.sleeps = type(self).sleeps and not self.attempt_cost   # costed attempts are made one by one
        n = system.ncpus
        if len(domains) != n:
            raise ValueError(f"numa model: {len(domains)} domain lists for {n} CPUs")
        self.static = _static(domains, policy, n)
        self.doms = self._own_domains()
        # wide domains: per-CPU load vectors (see _wide_loads) and the products of each group matrix
        self._bufs = tuple(np.zeros(n) for _ in range(4))
        self._vec_lo = self._vec_hi = None
        self._vec_t = math.nan
        self._vec_stamp = 0
        self._loads_cache: dict = {}
        # the domains of each CPU that balance periodically (fixed for the run)
        self.pdoms = [[dom for dom in doms if dom.periodic] for doms in self.doms]
        self._fire = self.fire
        self._setup(n)
        hz_stagger = 1000.0 / self.tick
        for c in range(n):
            offset = math.floor(hz_stagger * c / n) * self.tick   # rebalance_tick's per-CPU stagger
            for dom in self.doms[c]:
                dom.last = -offset
            self.arm(c)

    def _own_domains(self) -> list[list[Dom]]:
        """This run's domains: copies of the static ones (their run-time state is this run's)."""
        return [[dom.copy() for dom in doms] for doms in self.static.doms]

    def _setup(self, n: int) -> None:
        """The timers' and sleeping domains' run-time state, before the CPUs are armed (a subclass
        may keep it elsewhere)."""
        self.timers = [None] * n
        self.timer_at = [math.inf] * n
        self.dormant_cpus: set[int] = set()
        self.wide_sleepers = 0         # dormant domains with a non-empty ``wide`` set

    def unflushed(self) -> tuple[int, int, int]:
        """Attempts, failures and certain failures counted but not yet in the system's counters
        (none here: this class counts there at once)."""
        return 0, 0, 0

    # -- timing --------------------------------------------------------------------------------
    def arm(self, cpu: int) -> None:
        """(Re)set the CPU's timer to its earliest due domain if that is earlier than the current one."""
        idle = not self.sys.busy[cpu]
        tick = self.tick
        at = math.inf
        for dom in self.pdoms[cpu]:
            if not dom.dormant and (idle or dom.busy_ok):
                t = due(dom.last, dom, idle, tick)
                if t < at:
                    at = t
        if at == math.inf:
            return
        now = self.engine.now
        if now > at:                  # overdue: the next tick
            at = on_tick(now, tick)
        if at < self.timer_at[cpu] - 1e-9:
            if self.timers[cpu] is not None:
                self.timers[cpu].cancel()
            self.timers[cpu] = self.engine.call(max(at - now, 0.0), self._fire, cpu)
            self.timer_at[cpu] = at

    def fire(self, cpu: int) -> None:
        """``rebalance_tick`` at a tick where some domain of ``cpu`` may be due."""
        sys = self.sys
        self.timers[cpu] = None
        self.timer_at[cpu] = math.inf
        now = self.engine.now
        idle = not sys.busy[cpu]
        busy = not idle
        tick = self.tick
        moved_any = False
        made = 0
        for dom in self.pdoms[cpu]:
            if dom.dormant or not (idle or dom.busy_ok):
                continue
            if now + 1e-9 < due(dom.last, dom, idle, tick):
                continue
            made += 1
            quiet = self.quiet(cpu, dom)
            if quiet:                         # a certain failure (counted, and done, all the same)
                sys.lb_dead += 1
            moved = self.load_balance(cpu, dom, IDLE if idle else NOT_IDLE)
            dom.last = now
            if moved:
                idle = False
                moved_any = True
            if self.sleeps and (quiet or self.quiet(cpu, dom)):  # a quiet attempt changes nothing
                dom.dormant = True
                self.dormant_cpus.add(cpu)
                if dom.wide:
                    self.wide_sleepers += 1
        if busy and made and self.attempt_cost:   # the attempts took the running task's CPU time
            sys.charge(sys.rqs[cpu], made * self.attempt_cost)
        if moved_any:
            sys.resched(sys.rqs[cpu])
        self.arm(cpu)
        if sys.check is not None:
            sys.check(sys)

    def _movable(self, cpu: int, dom: Dom) -> bool:
        """Whether another CPU of the domain's span has a queued task (something could be pulled)."""
        span = dom.span
        for c in self.sys.overloaded:
            if c != cpu and c in span:
                return True
        return False

    def quiet(self, cpu: int, dom: Dom) -> bool:
        """Whether every periodic attempt of ``cpu`` on ``dom`` finds it balanced while this holds
        (so it fails, doubles the interval and leaves the failure count alone, as ``_settle``
        counts): no other CPU of the span has two runnable tasks, and no CPU of another group of
        several CPUs has any. Then the busiest group, if any, is one CPU with source load
        m <= 128, and whatever the local group's load t < m over n CPUs and the average a > 0:
        the imbalance min(m - a, (a - t) n) is at most m - a < 128, the gap m - t below 2 x 128,
        the power test finds no gain (after the move n min(128, t + m/n) <= n t + m, the power
        now), and m > 128 fails for the idle rule. Anything else is left to a real attempt: a
        group of several CPUs running one task each may be the busiest with a real imbalance,
        and nothing but active balancing can then move a task."""
        if self._movable(cpu, dom):
            return False
        return not dom.wide or dom.wide.isdisjoint(self.sys.loaded)

    def _settle(self, cpu: int, dom: Dom, until: float, idle: bool | None = None) -> None:
        """Count the attempts a dormant domain would have made up to ``until``: each finds the
        domain balanced (it is quiet), counts as failed, and doubles the interval (capped).
        ``idle``: the CPU's state meanwhile (default: its current one)."""
        if idle is None:
            idle = not self.sys.busy[cpu]
        if not (idle or dom.busy_ok):      # a domain that balances only while idle made no attempt
            return
        tick = self.tick
        t = dom.last
        n = 0
        limit = until + 1e-9
        while True:
            at = due(t, dom, idle, tick)
            if at > limit:
                break
            if dom.interval >= dom.max_interval:   # the interval no longer changes: count whole steps
                step = due(0.0, dom, idle, tick)
                k = int((until + 1e-9 - t) // step)
                t += k * step
                n += k
                break
            t = at
            n += 1
            dom.interval *= 2
        dom.last = t
        if n:
            self.sys.lb_attempts += n
            self.sys.lb_failed += n
            self.sys.lb_dead += n

    def close(self, until: float) -> None:
        """The run ends at ``until``: count every attempt due by then that was not made, those of
        sleeping domains and any timer left behind by the end, as ``_settle`` does (nothing is
        left to move). Attempt counts then cover the whole run, as a tick-driven kernel's would."""
        for cpu, doms in enumerate(self.pdoms):
            idle = not self.sys.busy[cpu]
            for dom in doms:
                if idle and not dom.dormant:   # awake: its next attempt is the CPU's timer at the earliest
                    if self.timer_at[cpu] == math.inf:
                        continue
                    self._overdue(dom, self.timer_at[cpu])
                self._settle(cpu, dom, until)

    def on_state(self, cpu: int, idle: bool) -> None:
        """The CPU went idle or busy: settle dormant domains under the old state, re-arm."""
        if cpu in self.dormant_cpus:
            now = self.engine.now
            was_idle = not idle          # settle under the old state
            tick = self.tick
            limit = now + 1e-9
            for dom in self.pdoms[cpu]:  # only periodic domains go dormant
                # nothing to count when no attempt has come due (_settle's first test)
                if dom.dormant and (not (was_idle or dom.busy_ok) or due(dom.last, dom, was_idle, tick) <= limit):
                    self._settle(cpu, dom, now, was_idle)
                if dom.dormant and idle:
                    self._overdue(dom, now)
        if idle:
            self.arm(cpu)

    def _overdue(self, dom: Dom, now: float) -> None:
        """A sleeping domain of a CPU that just went idle: if its idle attempt is already overdue,
        the kernel makes it at the next tick (as ``arm`` does for a domain awake); set ``last``
        so that this is when it falls due."""
        tick = self.tick
        if due(dom.last, dom, True, tick) < now:   # one whole-tick interval before the next tick:
            dom.last = on_tick(now, tick) - due(0.0, dom, True, tick)   # on a tick, as a real attempt's

    def on_overload(self, src: int) -> None:
        """CPU ``src`` now has a second runnable task: wake dormant domains whose span holds it."""
        self._wake(src, False)

    def on_loaded(self, src: int) -> None:
        """CPU ``src`` now has a runnable task: wake dormant domains where it lies in another
        group of several CPUs (``Dom.wide``)."""
        if self.wide_sleepers:
            self._wake(src, True)

    def _wake(self, src: int, wide: bool) -> None:
        """Settle and wake the dormant domains of other CPUs whose span (``wide``: whose
        ``Dom.wide``) holds ``src``: they are no longer quiet."""
        now = self.engine.now
        busy = self.sys.busy
        tick = self.tick
        limit = now + 1e-9
        for cpu in sorted(self.dormant_cpus):   # CPU order: timers armed here fire in it (as awake CPUs')
            if cpu == src:
                continue
            still = False
            woke = False
            for dom in self.pdoms[cpu]:
                if dom.dormant:
                    if src in (dom.wide if wide else dom.span):
                        idle = not busy[cpu]
                        if not (idle or dom.busy_ok) or due(dom.last, dom, idle, tick) <= limit:
                            self._settle(cpu, dom, now, idle)
                        dom.dormant = False
                        if dom.wide:
                            self.wide_sleepers -= 1
                        woke = True
                    else:
                        still = True
            if not still:
                self.dormant_cpus.discard(cpu)
            if woke:
                self.arm(cpu)

    # -- the balancing itself ----------------------------------------------------------------------
    def group_loads(self, dom: Dom):
        """Per group: sum of source loads and sum of target loads (2.6.11 load estimates, inlined),
        as two lists. The caller must not change them (wide domains share cached ones)."""
        sys = self.sys
        rqs = sys.rqs
        now = self.engine.now
        if dom.matrix is not None:
            return self._wide_loads(dom.matrix, now)
        instant = self.instant
        t = tick_index(now, self.tick)
        ss = []
        ts = []
        for g in dom.groups:
            ssum = tsum = 0.0
            for c in g:
                rq = rqs[c]
                cur = (rq.n_queued + (rq.curr is not None)) * SLS
                if instant:
                    ssum += cur
                    tsum += cur
                    continue
                avg = rq.load_avg
                if avg == cur:
                    ssum += cur
                    tsum += cur
                    continue
                k = t - rq.load_tick
                if k > 0:
                    d = avg - cur     # decayed(avg, cur, k), inlined
                    avg = cur + (d >> k) if d >= 0 else cur - ((-d) >> k)
                if avg < cur:
                    ssum += avg
                    tsum += cur
                else:
                    ssum += cur
                    tsum += avg
            ss.append(ssum)
            ts.append(tsum)
        return ss, ts

    def _wide_loads(self, matrix, now: float):
        """group_loads of a wide domain with numpy: per CPU the load estimates, then one
        matrix-vector product per kind (the products fix the summation order, so they stay).
        The per-CPU vectors are kept while no run queue changed and the tick is the same
        (``sys.np_dirty``), and so are the products of each group matrix."""
        sys = self.sys
        t = tick_index(now, self.tick)
        if sys.np_dirty or t != self._vec_t:
            cur = sys.np_cur
            if self.instant:
                self._vec_lo = self._vec_hi = cur
            else:
                # runqueue.decayed in floats holding integers: d = avg - cur; |d| scaled by 2**-k
                # (exact), floored, sign restored; lo/hi = min/max(avg, cur)
                b1, b2, lo, hi = self._bufs
                np.subtract(sys.np_tick, t, b1)
                np.maximum(b1, -64.0, out=b1)
                np.subtract(sys.np_avg, cur, b2)
                np.copysign(np.floor(np.ldexp(np.abs(b2), b1.astype(np.int64))), b2, out=b2)
                np.add(cur, b2, b2)
                np.minimum(b2, cur, out=lo)
                np.maximum(b2, cur, out=hi)
                self._vec_lo, self._vec_hi = lo, hi
            sys.np_dirty = False
            self._vec_t = t
            self._vec_stamp += 1
        key = id(matrix)
        hit = self._loads_cache.get(key)
        if hit is not None and hit[0] == self._vec_stamp:
            return hit[1]
        # Loads are integers (as in the kernel) far below 2**53, so these sums are exact in any
        # order: the BLAS kernel's summation order (which varies by CPU) cannot change a result.
        ss = matrix.dot(self._vec_lo).tolist()
        ts = ss if self.instant else matrix.dot(self._vec_hi).tolist()
        self._loads_cache[key] = (self._vec_stamp, (ss, ts))
        return ss, ts

    def find_busiest_group(self, cpu: int, dom: Dom, idle: int):
        """(busiest group, imbalance in tasks) or (None, 0) when balanced. Group loads are load
        sums over CPU counts; every test after the choice of the busiest group is done on the
        integer sums, so it is exact (floats of the quotients miss boundaries by an ulp). The compiled
        balancer makes the same search in kernels.busiest_group (tests/test_numa_kernels.py)."""
        max_load = 0.0
        this_sum = max_sum = total = 0.0
        this_n = busiest_n = 0
        busiest = None
        local = dom.local
        sizes = dom.sizes
        if dom.matrix is not None:   # group_loads(dom), without its dispatch
            ss, ts = self._wide_loads(dom.matrix, self.engine.now)
        else:
            ss, ts = self.group_loads(dom)
        for i, s in enumerate(ss):
            n = sizes[i]
            if i == local:
                s = ts[i]
                this_sum, this_n = s, n
            else:
                load = s / n     # correctly rounded quotients keep the exact order
                if load > max_load:
                    max_load, busiest, busiest_n, max_sum = load, dom.groups[i], n, s
            total += s
        # max = max_sum / busiest_n, this = this_sum / this_n, avg = total / n_all (all sums integers)
        n_all = dom.total_n
        if busiest is None or this_sum * busiest_n >= max_sum * this_n:
            return self._out_balanced(busiest, max_load, idle)
        if (this_sum * n_all >= total * this_n
                or 100 * max_sum * this_n <= dom.imbalance_pct * this_sum * busiest_n):
            return self._out_balanced(busiest, max_load, idle)
        # the imbalance times n_all: min((max - avg) x busiest_n, (avg - this) x this_n) x n_all
        imb = min(max_sum * n_all - total * busiest_n, total * this_n - this_sum * n_all)
        if imb < SLS * n_all:                     # below one task
            if max_sum * this_n - this_sum * busiest_n >= 2 * SLS * busiest_n * this_n:
                return busiest, 1
            if self._power_gain(max_sum, this_sum, busiest_n, this_n):
                return busiest, 1
            return self._out_balanced(busiest, max_load, idle)
        return busiest, int(imb // (SLS * n_all))

    @staticmethod
    def _power_gain(max_sum, this_sum, nb, nt) -> bool:
        """2.6.11's "cpu power used" test: does moving one task raise the throughput of the pair?
        With group powers 128 nb and 128 nt and loads max_sum / nb and this_sum / nt, the kernel's
        power now is min(128 nb, max_sum) + min(128 nt, this_sum), and after the move
        min(128 nb, max_sum - 128) (if max_sum > 128) + min(128 nt, this_sum + min(max_sum, 128)):
        integers, so the comparison is exact."""
        now = min(SLS * nb, max_sum) + min(SLS * nt, this_sum)
        move = min(SLS * nb, max_sum - SLS) if max_sum > SLS else 0.0
        move += min(SLS * nt, this_sum + min(max_sum, SLS))
        return move > now

    @staticmethod
    def _out_balanced(busiest, max_load, idle):
        if busiest is not None and (idle == NEWLY_IDLE or (idle == IDLE and max_load > SLS)):
            return busiest, 1
        return None, 0

    def find_busiest_queue(self, group):
        rqs, now = self.sys.rqs, self.engine.now
        best, best_load = None, -1.0
        for c in group:
            load = rqs[c].loads(now)[0]
            if load > best_load:
                best, best_load = rqs[c], load
        return best

    def can_migrate(self, task, src, dst, dom: Dom, idle: int, ignore_hot: bool = False) -> bool:
        kind = KINDS[idle]
        if not self.policy.can_migrate(task, src.cpu, dst.cpu, dom.level, kind, self.sys):
            return False
        if ignore_hot or dom.failed > dom.cache_nice_tries:
            return True
        if self.idle_ignores_hot and idle != NOT_IDLE:
            return True
        return self.engine.now - task.last_ran >= dom.cache_hot_time

    def move_tasks(self, src, dst, max_nr: int, dom: Dom, idle: int) -> int:
        moved = 0
        for task in src.migration_candidates():
            if moved >= max_nr:
                break
            if self.can_migrate(task, src, dst, dom, idle):
                self.sys.pull(task, src, dst)
                moved += 1
        return moved

    def load_balance(self, cpu: int, dom: Dom, idle: int) -> int:
        """Periodic balancing of ``dom`` from ``cpu``; returns the number of tasks pulled."""
        sys = self.sys
        sys.lb_attempts += 1
        this = sys.rqs[cpu]
        group, imb = self.find_busiest_group(cpu, dom, idle)
        if group is None:
            if dom.interval < dom.max_interval:
                dom.interval *= 2
            sys.lb_failed += 1
            return 0
        return self._after_search(this, dom, self.find_busiest_queue(group), imb, idle)

    def _after_search(self, this, dom: Dom, busiest, imb: int, idle: int) -> int:
        """The rest of ``load_balance`` once the search found the busiest queue: pull up to ``imb``
        tasks to ``this``, keep the domain's books, and ask for active balancing after repeated
        failures; returns the number of tasks pulled."""
        sys = self.sys
        moved = 0
        if busiest.nr_running > 1:
            moved = self.move_tasks(busiest, this, imb, dom, idle)
        if moved:
            dom.failed = 0
            dom.interval = dom.min_interval
            return moved
        dom.failed += 1
        sys.lb_failed += 1
        if self.active and dom.failed > dom.cache_nice_tries + 2:
            self.active_balance(busiest, idle)
            dom.failed = dom.cache_nice_tries
        if dom.interval < dom.max_interval:
            dom.interval += 1
        return 0

    def active_balance(self, src, idle: int) -> None:
        """2.6.11 ``active_load_balance``, run at once by the busiest CPU's migration thread, which
        preempts the running task (``NumaSystem.stop_current``): walk ``src``'s balancing domains
        bottom-up, each one's groups from its own, and push one task to each idle CPU not yet
        visited, the first in move_tasks order (the preempted task included) that the policy allows
        (cache-hot or not: the target is idle); stop once ``src`` has no task left (the kernel's
        nr_running <= 1 counts the migration thread). The CPU that asked is not looked for: the
        push goes to the idle CPUs nearest ``src``. ``idle``: the asking attempt's kind, for the
        policy."""
        sys = self.sys
        rqs = sys.rqs
        if src.curr is not None:
            sys.stop_current(src)
        pushed, visited = 0, {src.cpu}
        for dom in self.doms[src.cpu]:
            if not dom.periodic:
                break
            groups = dom.groups
            for g in groups[dom.local:] + groups[:dom.local]:
                for c in g:
                    if not src.n_queued:
                        self._after_push(src, pushed)
                        return
                    if c in visited:
                        continue
                    visited.add(c)
                    dst = rqs[c]
                    if dst.curr is None and not dst.n_queued and self._push_one(src, dst, dom, idle):
                        pushed += 1
        self._after_push(src, pushed)

    def _push_one(self, src, dst, dom: Dom, idle: int) -> bool:
        """move_tasks(src -> dst, at most one task), cache-hot tasks allowed."""
        for task in src.migration_candidates():
            if self.can_migrate(task, src, dst, dom, idle, ignore_hot=True):
                self.sys.pull(task, src, dst)
                self.sys.resched(dst)
                return True
        return False

    def _after_push(self, src, pushed: int) -> None:
        """The migration thread sleeps: ``src`` runs its best task (or goes idle)."""
        self.sys.active_pushes += pushed
        self.sys.schedule(src)

    def newidle(self, rq) -> None:
        """``idle_balance``: bottom-up over newly-idle domains, stop at the first that pulls (no
        domain state changes: 2.6.11's load_balance_newidle keeps no books but the counters)."""
        sys = self.sys
        cpu = rq.cpu
        for dom in self.doms[cpu]:
            if not dom.newidle:
                continue
            sys.lb_attempts += 1
            if not self._movable(cpu, dom):   # nothing movable: a certain failure
                sys.lb_failed += 1
                sys.lb_dead += 1
                continue
            group, imb = self.find_busiest_group(cpu, dom, NEWLY_IDLE)
            moved = 0
            if group is not None:
                busiest = self.find_busiest_queue(group)
                if busiest.nr_running > 1:
                    moved = self.move_tasks(busiest, rq, imb, dom, NEWLY_IDLE)
            if moved:               # 2.6.11 leaves nr_balance_failed and the interval as they are
                return
            sys.lb_failed += 1

    def exec_domain(self, cpu: int):
        """The highest domain of ``cpu`` with exec balancing, or None."""
        for dom in reversed(self.doms[cpu]):
            if dom.exec:
                return dom
        return None
