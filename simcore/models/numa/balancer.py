"""Sched-domain load balancing of Linux 2.6.11 (periodic, newly idle, active): the domains as the
kernels read them, and their buffers.

Each CPU has one timer, set to the earliest due balance of its domains; a domain is due when
``balance_interval`` (times ``busy_factor`` while the CPU runs a task) has passed since its last
attempt. A *quiet* domain, one that every attempt is sure to find balanced, goes *dormant* (no
timer) and the attempts the kernel would make meanwhile are counted arithmetically when it wakes,
so attempt counts and domain state follow the tick-driven kernel without simulating its ticks.
The rules are kernels: ``timing_kernels`` (timers, sleeping domains, the search for the busiest
group), ``migrate_kernels`` (moves, newly idle) and ``balance_kernels`` (periodic and active
balancing).

Decisions a policy can change are asked of it once, when the domains are built: which domains
balance (``balances``) and the imbalance threshold (``imbalance_pct``); which task may move is one
of the kernels' rules, chosen by the policy's ``rules`` (``migrate_kernels.policy_allows``).

:class:`Balancer` builds the buffers ``F`` (float64) and ``I`` (int64) of ``timing_kernels``'s
layout: a header, the domains' constants (once per batch, ``Static``) and their run-time state
(``last``, ``interval``, ``failed``, ``dormant``), which :class:`DomState` reads by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from simcore.errors import InputError
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa import timing_kernels as K

#: the policy's name of each kind: periodic balancing of a busy CPU, of an idle CPU, newly idle
KINDS = ("periodic", "idle", "newidle")

# 2.6.12 flag bits (docs/linux26-scheduler.md, "Domain flags") for domains that carry an int bitmask
_FLAG_BITS = {"LOAD_BALANCE": 1, "BALANCE_NEWIDLE": 2, "BALANCE_EXEC": 4, "WAKE_IDLE": 8, "WAKE_AFFINE": 16,
              "WAKE_BALANCE": 32, "SHARE_CPUPOWER": 64}


_FLAG_CACHE: dict = {}


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


def busy_balancers(cpu_node, rule: str) -> list[bool]:
    """Per CPU, whether it balances periodically while busy (``periodic_balancer``): every CPU
    ('every-cpu', 2.6.11), or only the first CPU of each node ('node-first': mehta's balancing
    processor, 'the idle processor or the first processor'; an idle CPU is the other case)."""
    if rule == "every-cpu":
        return [True] * len(cpu_node)
    first: dict = {}
    for c, node in enumerate(cpu_node):
        first.setdefault(node, c)
    return [first[node] == c for c, node in enumerate(cpu_node)]


def policy_answers(d, k: int, cpu: int, policy, busy_balancer: bool = True) -> tuple:
    """What a domain asks the policy, in this order: its imbalance threshold (from its default),
    then, if it balances at all (LOAD_BALANCE, more than one group), whether newly idle (only
    with BALANCE_NEWIDLE), periodically while busy and, if not, while idle. Returns
    (imbalance_pct, balances, newidle, busy_ok, periodic); ``busy_balancer`` False (the CPU does
    not balance periodically while busy: :func:`busy_balancers`) clears busy_ok."""
    imbalance_pct = int(policy.imbalance_pct(cpu, k, int(getattr(d, "imbalance_pct"))))
    lb = has_flag(d, "LOAD_BALANCE") and len(d.groups) > 1
    newidle = lb and has_flag(d, "BALANCE_NEWIDLE") and policy.balances(cpu, k, "newidle")
    busy_ok = lb and policy.balances(cpu, k, "periodic") and busy_balancer
    periodic = busy_ok or (lb and policy.balances(cpu, k, "idle"))
    return imbalance_pct, lb, newidle, busy_ok, periodic


class Dom:
    """One (CPU, level) sched domain as the balancer reads it (its run-time state is in the
    buffers: :class:`DomState`)."""

    __slots__ = ("level", "name", "span", "cpus", "groups", "local", "min_interval", "max_interval",
                 "busy_factor", "imbalance_pct", "cache_nice_tries", "cache_hot_time", "lb", "newidle",
                 "exec", "periodic", "busy_ok", "interval", "sizes", "total_n", "wide")

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
        self.interval = float(bi0) if bi0 is not None else self.min_interval      # the first interval
        self.sizes = [len(g) for g in self.groups]
        self.total_n = sum(self.sizes)
        # the CPUs of the other groups of more than one CPU (see timing_kernels.quiet)
        self.wide = frozenset(c for i, g in enumerate(self.groups) if i != self.local and len(g) > 1 for c in g)


@dataclass
class Static:
    """The part of a balancer fixed by the domains and the policy: the domains as built and the
    buffers' constants derived from them (``extra``, by size and options)."""

    domains: list
    doms: list[list[Dom]]
    extra: dict


_STATICS: dict = {}
_KEEP = 16                    # runs of other domains or policies kept (a batch job needs 1-2)


def _static(domains, policy, n: int, busy: list[bool]) -> Static:
    """The :class:`Static` of ``domains`` under ``policy``, built once per domain lists and policy
    answers (a batch's replications share the model's domain lists, see ``model.batch_domains``).
    The key holds what ``Dom`` asks the policy, so another policy or zone is another entry; the
    entry holds the lists themselves, so an id is never taken for another list's. A policy whose
    ``answers_key`` names its answers is not asked again for the same lists."""
    named = policy.answers_key()
    if named is not None:
        hit = _STATICS.get(("named", id(domains), n, named, tuple(busy)))
        if hit is not None and hit.domains is domains:
            return hit
    answers = [[policy_answers(d, k, c, policy, busy[c]) for k, d in enumerate(domains[c])] for c in range(n)]
    key = (id(domains), n, tuple(map(tuple, answers)))
    hit = _STATICS.get(key)
    if hit is None or hit.domains is not domains:
        doms = [[Dom(d, k, c, policy, answers[c][k]) for k, d in enumerate(domains[c])] for c in range(n)]
        if len(_STATICS) >= _KEEP:
            _STATICS.clear()
        hit = _STATICS[key] = Static(domains, doms, {})
    if named is not None:
        _STATICS[("named", id(domains), n, named, tuple(busy))] = hit
    return hit


class DomState:
    """A domain of one run: the static fields of its :class:`Dom`, and its run-time state read from
    slot ``d`` of the buffers (views for monitors, checks and tests)."""

    __slots__ = ("_t", "_F", "_I", "_d", "_at")

    last = property(lambda self: float(self._F[self._at[0] + self._d]),
                    lambda self, v: self._F.__setitem__(self._at[0] + self._d, v))
    interval = property(lambda self: float(self._F[self._at[1] + self._d]))
    failed = property(lambda self: int(self._I[self._at[2] + self._d]))
    dormant = property(lambda self: bool(self._I[self._at[3] + self._d]),
                       lambda self, v: self._I.__setitem__(self._at[3] + self._d, int(v)))

    def __init__(self, dom: Dom, F, I, d: int, at: tuple):
        self._t, self._F, self._I, self._d, self._at = dom, F, I, d, at


for _name in Dom.__slots__:            # the static fields, read from the static domain
    if _name != "interval":
        setattr(DomState, _name, property(attrgetter(f"_t.{_name}")))


class Balancer:
    """The balancer's buffers for one run (every CPU's domains as the policy answered for them),
    and its Python steps: the start of each CPU's timer and the end-of-run count."""

    sleeps = True   # quiet domains sleep; False makes every attempt for real (tests)

    def __init__(self, system, domains, policy, params: dict):
        self.tick = float(params["tick"])
        self.idle_ignores_hot = bool(params["idle_ignores_cache_hot"])
        self.active = bool(params["active_balance"])
        self.instant = params["load_average"] == "instant"
        self.sleeps = type(self).sleeps and not float(params["lb_attempt_cost"])   # costed attempts: one by one
        n = system.ncpus
        if len(domains) != n:
            raise ValueError(f"numa model: {len(domains)} domain lists for {n} CPUs")
        self.static = _static(domains, policy, n, busy_balancers(system.cpu_node, params["periodic_balancer"]))
        key = ("start", self.instant, self.sleeps, self.tick)
        made = self.static.extra.get(key)
        if made is None:                  # the same for every run of the batch: made once
            made = self.static.extra[key] = self._start(n)
        self.L, I, F, self.first = made
        self.I, self.F = I.copy(), F.copy()
        self._doms = None

    def _start(self, n: int) -> tuple[int, np.ndarray, np.ndarray, list[float]]:
        """Domains per CPU (at most), the buffers at the run's start (the domains' constants, each
        CPU's last attempt staggered as rebalance_tick staggers it, its first timer armed) and each
        CPU's first attempt (t = 0)."""
        static = self.static.doms
        L = max(1, max(len(doms) for doms in static))       # (a machine may have no domains)
        P = max(1, max(sum(dom.periodic for dom in doms) for doms in static))
        G = max((len(dom.groups) for doms in static for dom in doms), default=1)
        I, F = self._constants(n, L, P, G)
        hz_stagger = 1000.0 / self.tick
        last = int(I[SL.OF_LAST])
        for c in range(n):
            offset = math.floor(hz_stagger * c / n) * self.tick   # rebalance_tick's per-CPU stagger
            F[last + c * L:last + c * L + len(static[c])] = -offset
        return L, I, F, [K.arm(c, 0.0, F, I) for c in range(n)]

    def _constants(self, n: int, L: int, P: int, G: int) -> tuple[np.ndarray, np.ndarray]:
        """The int and float buffers with their layout, header and every domain's constants."""
        D = n * L
        ints = [("O_BUSY", n), ("O_FAILED", D), ("O_DORMANT", D), ("O_BUSYOK", D), ("O_LOCAL", D), ("O_TOTALN", D),
                ("O_IMB", D), ("O_HASWIDE", D), ("O_PD", n * P), ("O_NPD", n), ("O_GOF", D * n), ("O_SIZES", D * G),
                ("O_NGROUPS", D), ("O_SPAN", D * n), ("O_WIDE", D * n), ("O_OUTCPU", n), ("O_NEWIDLE", D),
                ("O_SPANL", D * n), ("O_SPANN", D), ("O_WIDEL", D * n), ("O_WIDEN", D)]
        floats = [("OF_CUR", n), ("OF_AVG", n), ("OF_TCK", n), ("OF_TAT", n), ("OF_LAST", D), ("OF_IVL", D),
                  ("OF_BF", D), ("OF_MAXI", D), ("OF_OUTAT", n)]
        I = np.zeros(SL.H_SIZE + sum(size for _, size in ints), dtype=np.int64)
        F = np.zeros(SL.B_SIZE + sum(size for _, size in floats))
        at = SL.H_SIZE
        for name, size in ints:
            I[getattr(SL, name)] = at
            at += size
        at = SL.B_SIZE
        for name, size in floats:
            I[getattr(SL, name)] = at
            at += size
        I[SL.H_N], I[SL.H_L], I[SL.H_G], I[SL.H_P] = n, L, G, P
        I[SL.H_INSTANT], I[SL.H_SLEEPS] = int(self.instant), int(self.sleeps)
        F[SL.B_TICK] = self.tick
        F[I[SL.OF_TAT]:I[SL.OF_TAT] + n] = math.inf         # no timer set
        self._index(I, F, n, L, P, G)
        return I, F

    def _index(self, I, F, n: int, L: int, P: int, G: int) -> None:
        """Write every domain's constants and first state into the buffers."""
        ib = {name: int(I[getattr(SL, name)]) for name in ("O_BUSYOK", "O_LOCAL", "O_TOTALN", "O_IMB", "O_HASWIDE",
                                                          "O_GOF", "O_SIZES", "O_NGROUPS", "O_SPAN", "O_WIDE",
                                                          "O_PD", "O_NPD", "O_NEWIDLE", "O_SPANL", "O_SPANN",
                                                          "O_WIDEL", "O_WIDEN")}
        fb = {name: int(I[getattr(SL, name)]) for name in ("OF_BF", "OF_MAXI", "OF_IVL")}
        for c, doms in enumerate(self.static.doms):
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
                for block, listed, count, cpus in (("O_SPAN", "O_SPANL", "O_SPANN", dom.span),
                                                   ("O_WIDE", "O_WIDEL", "O_WIDEN", dom.wide or ())):
                    members = np.array(sorted(cpus), dtype=np.int64)
                    I[ib[block] + d * n + members] = 1
                    I[ib[listed] + d * n:ib[listed] + d * n + len(members)] = members
                    I[ib[count] + d] = len(members)
                F[fb["OF_BF"] + d] = dom.busy_factor
                F[fb["OF_MAXI"] + d] = dom.max_interval
                F[fb["OF_IVL"] + d] = dom.interval
            periodic = [dom for dom in doms if dom.periodic]
            I[ib["O_NPD"] + c] = len(periodic)
            for j, dom in enumerate(periodic):
                I[ib["O_PD"] + c * P + j] = dom.level

    def domain_table(self) -> tuple:
        """What the scheduler's kernels read of the domains (``layout_kernels``' blocks O_DI and
        OF_DF, D_* and DF_* columns, per domain c * L + k) and each CPU's number of domains; made
        once per batch (``Static.extra``)."""
        key = ("table", self.L)
        made = self.static.extra.get(key)
        if made is None:
            L, doms = self.L, self.static.doms
            dint, dfloat = np.zeros((len(doms) * L, SL.D_COLS), dtype=np.int64), np.zeros((len(doms) * L, SL.DF_COLS))
            for c, row in enumerate(doms):
                for k, dom in enumerate(row):
                    dint[c * L + k] = (dom.periodic, dom.exec, dom.cache_nice_tries, dom.level)
                    dfloat[c * L + k] = (dom.cache_hot_time, dom.min_interval)
            made = self.static.extra[key] = ([len(row) for row in doms], dint, dfloat)
        return made

    @property
    def doms(self) -> list[list[DomState]]:
        """Every domain as a :class:`DomState` of this run's buffers (built when first asked: the
        kernels need none)."""
        if self._doms is None:
            self._views()
        return self._doms

    @property
    def pdoms(self) -> list[list[DomState]]:
        """The periodic domains of each CPU, in order."""
        if self._doms is None:
            self._views()
        return self._pdoms

    def _views(self) -> None:
        F, I, L = self.F, self.I, self.L
        at = (int(I[SL.OF_LAST]), int(I[SL.OF_IVL]), int(I[SL.O_FAILED]), int(I[SL.O_DORMANT]))
        self._doms = [[DomState(dom, F, I, c * L + k, at) for k, dom in enumerate(doms)]
                      for c, doms in enumerate(self.static.doms)]
        self._pdoms = [[dom for dom in doms if dom.periodic] for doms in self._doms]

    @property
    def dormant_cpus(self) -> set[int]:
        """The CPUs with a sleeping domain."""
        return {c for c, doms in enumerate(self.pdoms) if any(dom.dormant for dom in doms)}

    def unflushed(self) -> tuple[int, int, int]:
        """The attempts, failures and certain failures the kernels counted so far."""
        attempts, failed, dead = self.I[SL.H_ATTEMPTS:SL.H_DEAD + 1].tolist()
        return attempts, failed, dead

    def close(self, until: float) -> tuple[int, int, int]:
        """The attempts sleeping domains owe up to ``until``, the end of the run
        (:func:`timing_kernels.close`); then every count: attempts, failures, certain failures."""
        K.close(until, self.F, self.I)
        return self.unflushed()
