"""What a batch's runs share: the tuned domain lists (``model.batch_domains``) and the balancer's
static part built from them (``balancer.Static``: the domains as the balancer reads them, and
the balancer's constant buffers). A run on shared ones is the run on fresh ones, for
every policy in any order, and no run writes into what it shares."""

from __future__ import annotations

import math

from test_numa_system import _same, _workload

from simcore.models.numa import balancer as B
from simcore.models.numa import model as M
from simcore.models.numa import simulate
from simcore.models.numa import slots_kernels as SL
from simcore.models.numa.balancer import Dom, DomState

ORDER = ["multilevel", "conservative-soft", "conservative-hard", "multilevel", "conservative-hard"]


def _forget() -> None:
    B._STATICS.clear()
    M._DOMAINS.clear()


def _sequence(fresh: bool) -> list:
    """mehta-sensitivity cell 0 (mehta-s3: the zones make the three policies' domains differ),
    each policy of ORDER on one workload, the shared parts kept or forgotten before each run."""
    spec, params, streams, workload = _workload("mehta-sensitivity", 0, 150)
    runs = []
    for policy in ORDER:
        if fresh:
            _forget()
        runs.append(simulate(params, workload, policy, streams, trace=True))
    return runs


def test_runs_on_shared_domains_are_the_runs_on_fresh_ones():
    _forget()
    shared = _sequence(fresh=False)
    statics = {id(entry) for entry in B._STATICS.values()}   # (a policy's answers_key names its entry again)
    assert len(statics) == 3 and len(M._DOMAINS) == 1          # one per policy's answers; one domain list
    _same(_sequence(fresh=True), shared)
    assert [r.metrics["events"] for r in shared] == [r.metrics["events"] for r in _sequence(fresh=True)]
    soft, hard = shared[1].system.balancer.static, shared[2].system.balancer.static
    assert shared[0].system.balancer.static is shared[3].system.balancer.static and soft is not hard
    assert shared[2].system.balancer.static is shared[4].system.balancer.static


def test_no_run_writes_into_the_domains_it_shares():
    """After the runs, the shared buffers hold the run-time state a new run starts with (no attempt
    made but the staggered start, 2.6.11's rebalance_tick offset of CPU c, -floor(1000/tick x c/n)
    ticks; no failure, none asleep, each interval its first), and each run read its own copy."""
    _forget()
    runs = _sequence(fresh=False)
    for run in runs:
        static = run.system.balancer.static
        assert all(type(d) is Dom for row in static.doms for d in row)
        starts = [made for key, made in static.extra.items() if key[0] == "start"]
        assert starts
        for L, I, F, _ in starts:
            n, tick = int(I[SL.H_N]), float(F[SL.B_TICK])
            D = n * L
            assert L == int(I[SL.H_L])
            assert all(F[I[SL.OF_LAST] + c * L + k] == -math.floor(1000.0 / tick * c / n) * tick
                       for c, row in enumerate(static.doms) for k in range(len(row)))
            assert not I[I[SL.O_FAILED]:I[SL.O_FAILED] + D].any() and not I[I[SL.O_DORMANT]:I[SL.O_DORMANT] + D].any()
            assert all(F[I[SL.OF_IVL] + c * L + k] == dom.interval for c, row in enumerate(static.doms)
                       for k, dom in enumerate(row))
        assert all(type(d) is DomState for row in run.system.balancer.doms for d in row)
        assert run.system.balancer.I is not starts[0][1] and run.system.balancer.F is not starts[0][2]
    assert sum(r.system.lb_attempts for r in runs) > 1000        # the runs did balance


def test_the_policy_answers_key_the_static_part():
    """The same domain list under the soft and the hard policy: the thresholds and the periodic
    levels outside the zone differ, so the static parts do."""
    _forget()
    runs = _sequence(fresh=False)
    soft = runs[1].system.balancer.static.doms
    hard = runs[2].system.balancer.static.doms
    assert runs[1].system.balancer.static.domains is runs[2].system.balancer.static.domains
    assert [d.imbalance_pct for row in soft for d in row] != [d.imbalance_pct for row in hard for d in row]
    assert [d.busy_ok for row in soft for d in row] != [d.busy_ok for row in hard for d in row]


def test_the_tuning_keys_the_domain_lists():
    """The same machine, builder, node init and tuning give the same lists; another cache-hot
    time or interval gives other lists, carrying it."""
    _forget()
    spec, params, streams, workload = _workload("mehta-sensitivity", 0, 10)
    machine = M.load_machine(params["topology"])
    first = M.batch_domains(machine, "multilevel", params)
    assert M.batch_domains(machine, "multilevel", dict(params)) is first
    hot = M.batch_domains(machine, "multilevel", {**params, "cache_hot_time_cpu": 7.5})
    assert hot is not first and hot[0][0].cache_hot_time == 7.5 != first[0][0].cache_hot_time
    slow = M.batch_domains(machine, "multilevel", {**params, "node_min_interval": 999})
    assert slow[0][-1].min_interval == 999 != first[0][-1].min_interval
    assert M.batch_domains(machine, "linux-2level", params) is not first


def test_each_domains_span_and_wide_set_are_listed_in_cpu_order():
    """The kernels scan a domain's span (and wide set) from its list, not every CPU of the
    machine: each list holds exactly the domain's CPUs, in CPU order (the busiest queue is the
    first in CPU order at a tie), and the membership marks agree with it."""
    _forget()
    run = _sequence(fresh=False)[0]
    bal = run.system.balancer
    I, n, L = bal.I, int(bal.I[SL.H_N]), bal.L
    for c, row in enumerate(bal.static.doms):
        for k, dom in enumerate(row):
            d = c * L + k
            for cpus, block, listed, count in ((dom.span, SL.O_SPAN, SL.O_SPANL, SL.O_SPANN),
                                               (dom.wide or (), SL.O_WIDE, SL.O_WIDEL, SL.O_WIDEN)):
                members = I[I[listed] + d * n:I[listed] + d * n + I[I[count] + d]].tolist()
                assert members == sorted(cpus) and len(set(members)) == len(members)
                assert [cpu for cpu in range(n) if I[I[block] + d * n + cpu]] == members
