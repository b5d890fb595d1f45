"""The compiled balancer the model runs (simcore/models/numa/compiled.py, timing_kernels.py) against
the pure-Python reference ``Balancer`` (``Balancer.compiled = False``): its arithmetic on random
values, and the same runs, bit for bit, on the experiments' workloads and under every option that
changes the balancer's path."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from simcore.core.rng import Streams, replication_seed
from simcore.experiments import load_spec
from simcore.models.numa import full_params, make_workload, simulate
from simcore.models.numa import balancer as reference
from simcore.models.numa import timing_kernels as K
from simcore.models.numa.balancer import Balancer
from simcore.models.numa.compiled import CompiledBalancer
from simcore.models.numa.model import load_machine

ROOT = Path(__file__).resolve().parents[1]


class _Dom:
    """What ``balancer.due`` reads of a domain."""

    def __init__(self, interval: float, busy_factor: float):
        self.interval, self.busy_factor = interval, busy_factor


def test_the_due_times_are_the_references():
    """``due`` and ``on_tick`` on random last attempts, intervals, busy factors and ticks (on and
    off tick boundaries, idle and busy)."""
    rng = np.random.default_rng(3)
    for _ in range(3000):
        tick = float(rng.choice([0.1, 1.0, 4.0, 10.0 / 3]))
        last = float(rng.choice([rng.integers(0, 10**6) * tick, rng.random() * 1e5, -rng.integers(0, 100) * tick]))
        dom = _Dom(float(rng.choice([1.0, 2.0, 8.0, 64.0, 0.05, rng.random() * 300])), float(rng.choice([1.0, 32.0, 64.0, 320.0])))
        for idle in (True, False):
            assert K.due(last, dom.interval, dom.busy_factor, idle, tick) == reference.due(last, dom, idle, tick)
        assert K.on_tick(last, tick) == reference.on_tick(last, tick)


def _run(spec_id: str, cell: int, fast: bool, monkeypatch, n_tasks: int = 200, **overrides):
    spec = load_spec(ROOT / f"config/experiments/{spec_id}.yaml")
    values = spec.cell(cell).values
    params = full_params({**spec.params(values), "n_tasks": min(values.get("n_tasks", n_tasks), n_tasks), **overrides})
    streams = Streams(replication_seed(5, spec_id, cell, 0))
    workload = make_workload(params, streams, int(load_machine(params["topology"]).cpus))
    monkeypatch.setattr(Balancer, "compiled", fast)
    runs = [simulate(params, workload, p, streams, trace=True) for p in spec.policies]
    assert all(type(r.system.balancer) is (CompiledBalancer if fast else Balancer) for r in runs)
    return runs


def _same(ref, fast) -> None:
    for a, b in zip(ref, fast):
        assert [(t.finished, t.trace) for t in b.tasks] == [(t.finished, t.trace) for t in a.tasks]
        assert b.metrics == a.metrics          # lb_attempts, lb_failed, their live parts, events
        assert b.system.migrations > 0


@pytest.mark.parametrize("spec_id, cell", [
    ("corr05-fig13", 7), ("corr05-fig12", 7), ("corr05-fig10", 9), ("corr05-fig9", 9), ("mehta-table3-w1", 0),
    pytest.param("mehta-table5-w3", 3, marks=pytest.mark.slow),
])
def test_the_compiled_timing_gives_the_reference_runs(monkeypatch, spec_id, cell):
    """On the experiments' own workloads: every task's completion time and trace, and every metric
    (attempt counts and events included), equal to the bit."""
    _same(_run(spec_id, cell, False, monkeypatch), _run(spec_id, cell, True, monkeypatch))


@pytest.mark.parametrize("overrides", [
    {"load_average": "instant"},
    {"active_balance": False},
    {"domain_init": "x86_64-2.6.12"},
    {"idle_ignores_cache_hot": False},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_the_compiled_timing_follows_the_options(monkeypatch, overrides):
    """Options that change which attempts fail, sleep or push: still the reference's runs."""
    _same(_run("corr05-fig10", 4, False, monkeypatch, **overrides), _run("corr05-fig10", 4, True, monkeypatch, **overrides))


def test_with_no_sleeping_domains_it_is_the_reference(monkeypatch):
    """``Balancer.sleeps = False`` (every attempt made): the compiled loop never puts a domain to
    sleep, and the runs are the reference's."""
    monkeypatch.setattr(Balancer, "sleeps", False)
    ref, fast = _run("corr05-fig9", 3, False, monkeypatch), _run("corr05-fig9", 3, True, monkeypatch)
    _same(ref, fast)
    assert not any(fast_run.system.balancer.dormant_cpus for fast_run in fast)


def test_domains_do_sleep_and_wake_in_the_compiled_runs(monkeypatch):
    """The runs compared above go through every compiled path: attempts that found a group and were
    carried on in Python, domains put to sleep, woken, and their attempts counted while asleep."""
    calls = {"carry_on": 0, "wake": 0}
    carry_on, wake = CompiledBalancer._carry_on, CompiledBalancer._wake

    def counting_carry_on(self, *args):
        calls["carry_on"] += 1
        return carry_on(self, *args)

    def counting_wake(self, *args):
        calls["wake"] += 1
        return wake(self, *args)

    monkeypatch.setattr(CompiledBalancer, "_carry_on", counting_carry_on)
    monkeypatch.setattr(CompiledBalancer, "_wake", counting_wake)
    runs = _run("corr05-fig13", 1, True, monkeypatch, n_tasks=100)
    assert calls["carry_on"] > 0 and calls["wake"] > 0
    assert all(r.metrics["lb_attempts"] > r.metrics["lb_attempts_live"] > 0 for r in runs)   # sleeping attempts counted


def test_the_invariants_hold_with_the_compiled_timing(monkeypatch):
    """The model's invariant checker after every event (a sleeping domain is quiet, among others),
    the sleeping CPUs read from the compiled state."""
    runs = _run("corr05-fig12", 2, True, monkeypatch, n_tasks=100, check_invariants=True)
    assert all(r.metrics["lb_attempts"] > 0 for r in runs)


def test_a_domains_state_lives_in_the_buffers(monkeypatch):
    """What the Python side writes into a domain, the kernels read, and the other way round."""
    run = _run("corr05-fig9", 0, True, monkeypatch, n_tasks=50)[0]
    bal = run.system.balancer
    dom = bal.pdoms[3][0]
    d = dom._d
    dom.interval, dom.last, dom.failed, dom.dormant = 12.5, 40.0, 2, True
    assert (bal.F[bal.I[K.OF_IVL] + d], bal.F[bal.I[K.OF_LAST] + d]) == (12.5, 40.0)
    assert (bal.I[bal.I[K.O_FAILED] + d], bal.I[bal.I[K.O_DORMANT] + d]) == (2, 1)
    assert 3 in bal.dormant_cpus
    bal.F[bal.I[K.OF_LAST] + d] = math.pi
    assert dom.last == math.pi and type(dom.last) is float


def _pair(topology: str, policy: str, monkeypatch, **params):
    """A reference system and a compiled one of ``topology`` under ``policy``, with no task."""
    from test_numa_kernels import system
    monkeypatch.setattr(Balancer, "compiled", False)
    ref = system(topology, policy, **params)
    monkeypatch.setattr(Balancer, "compiled", True)
    return ref, system(topology, policy, **params)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_timer_due_with_another_event_fires_in_simpys_order(monkeypatch, compiled):
    """The calendar keeps SimPy's order at equal times: the lower priority first, then the event
    scheduled first. The empty corr05-4x2 (1 ms tick, domains at 1 and 80 ms, none sleeping): the
    stagger puts the last attempts of CPUs 1-7 125c ms back, so their timers are overdue, at 0 ms.
    A probe Z is scheduled at 0 ms; then CPU 0's first domain is put 5 ms back and re-armed, at
    0 ms too, after Z. So Z sees 14 attempts (both domains of CPUs 1-7, all failing on the empty
    machine), and Z2, which Z schedules at 0 ms, sees CPU 0's as well: 15. The eight timers are set
    again during 0 ms, at 2 ms (first domains' intervals doubled to 2; the others are due at 80 ms
    and later). A probe scheduled before that, at 2 ms, sees 15; an urgent one that Z2 schedules at
    2 ms also 15 (priority first); a probe scheduled at 2 ms by the former sees the eight more: 23."""
    from test_numa_kernels import system
    monkeypatch.setattr(Balancer, "sleeps", False)
    monkeypatch.setattr(Balancer, "compiled", compiled)
    seen, events = tie_probes(system("corr05-4x2", "linux-2level"))
    assert seen == {"Z": 14, "Z2": 15, "urgent at 2": 15, "at 2": 15, "scheduled at 2": 23}
    assert events == 8 + 8 + 5        # the timers fired count as events, as the probes do


def tie_probes(sys) -> tuple[dict, int]:
    """The probes of the case above on ``sys`` (an empty system, sleeping domains off): the
    attempts each probe saw, and the events of the run to 2.5 ms."""
    engine, seen = sys.engine, {}
    then = {"Z": (0.0, "Z2", 1), "Z2": (2.0, "urgent at 2", 0), "at 2": (2.0, "scheduled at 2", 1)}

    def probe(name):
        seen[name] = sys.lb_counts()[0]
        if name in then:
            at, child, priority = then[name]
            engine.call_at(at, probe, child, priority=priority)

    engine.call_at(0.0, probe, "Z")
    engine.call_at(2.0, probe, "at 2")
    sys.balancer.pdoms[0][0].last = -5.0
    sys.balancer.arm(0)
    engine.run(until=2.5)
    return seen, engine.events


@pytest.mark.parametrize("topology, policy, tick", [
    ("superdome-16x4", "multilevel", 1.0), ("superdome-16x4", "linux-2level", 0.1), ("mehta-s1", "conservative-hard", 0.3)])
def test_sleeping_attempts_are_counted_as_the_reference_counts_them(monkeypatch, topology, policy, tick):
    """``settle`` against ``Balancer._settle`` from random last attempts and intervals up to random
    ends, a third of them on the exact instant of an attempt (where, with a tick of 0.1 or 0.3 ms,
    the sums are off by an ulp and the 1e-9 decides), idle and busy: the same last attempt,
    interval and counts."""
    ref, fast = _pair(topology, policy, monkeypatch, tick=tick)
    rng = np.random.default_rng(8)
    tick = ref.balancer.tick
    for trial in range(600):
        cpu = int(rng.integers(ref.ncpus))
        j = int(rng.integers(len(ref.balancer.pdoms[cpu])))
        a, b = ref.balancer.pdoms[cpu][j], fast.balancer.pdoms[cpu][j]
        interval = float(rng.choice([a.min_interval, a.max_interval, a.min_interval * 2 ** int(rng.integers(0, 6))]))
        last = int(rng.integers(0, 10**5)) * tick
        idle = bool(rng.integers(2))
        span = reference.due(0.0, _Dom(interval, a.busy_factor), idle, tick)   # the step once the interval is at its cap
        until = last + (int(rng.integers(0, 40)) * span if trial % 3 == 0 else float(rng.random()) * 40 * span)
        for dom in (a, b):
            dom.last, dom.interval = last, interval
        counts = (ref.lb_attempts, ref.lb_failed, ref.lb_dead)
        ref.balancer._settle(cpu, a, until, idle)
        fast.balancer._cnt[:] = 0
        K.settle(b._d, until, idle, fast.balancer.F, fast.balancer.I)
        assert (b.last, b.interval) == (a.last, a.interval), (trial, last, interval, until)
        made = tuple(x - y for x, y in zip((ref.lb_attempts, ref.lb_failed, ref.lb_dead), counts))
        assert tuple(fast.balancer._cnt.tolist()) == made


def test_the_quiet_test_is_the_references(monkeypatch):
    """``quiet`` against ``Balancer.quiet`` on 300 random run-queue lengths of the Superdome (0-3
    runnable tasks per CPU, most CPUs at 0 or 1 so that quiet domains occur), every CPU and domain."""
    ref, fast = _pair("superdome-16x4", "linux-2level", monkeypatch)
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(300):
        counts = rng.choice([0, 1, 2, 3], size=ref.ncpus, p=[0.45, 0.45, 0.07, 0.03])
        for sys in (ref, fast):
            sys.np_cur[:] = counts * 128.0
            sys.loaded = {c for c in range(sys.ncpus) if counts[c] >= 1}
            sys.overloaded = {c for c in range(sys.ncpus) if counts[c] >= 2}
        for cpu in range(ref.ncpus):
            for a, b in zip(ref.balancer.pdoms[cpu], fast.balancer.pdoms[cpu]):
                answer = ref.balancer.quiet(cpu, a)
                assert K.quiet(cpu, b._d, fast.balancer.F, fast.balancer.I) == answer
                seen.add(answer)
    assert seen == {True, False}


def test_a_job_compiles_into_and_loads_from_that_folder(tmp_path):
    """A fresh process (no NUMBA_CACHE_DIR) that imports simcore caches the kernels of a compiled
    run under XDG_CACHE_HOME/numa-lb-repro/numba, each kernel file in <folder>_<file>-<hash of its
    sources> (simcore.core.jit); where that folder cannot be made (XDG_CACHE_HOME is a file),
    under the temporary folder, with one warning."""
    import os
    import subprocess
    import sys

    import simcore
    from simcore.core.jit import sources_digest

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"XDG_CACHE_HOME": str(tmp_path)}
    code = ("import os, simcore\n"
            "from simcore.core.rng import Streams, replication_seed\n"
            "from simcore.models.numa import run_replication\n"
            "run_replication({'topology': 'corr05-4x2', 'n_tasks': 10}, ['linux-2level'], Streams(replication_seed(1, 'c', 0, 0)))\n"
            "print(os.environ['NUMBA_CACHE_DIR'])\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()[-1]
    assert Path(out) == tmp_path / "numa-lb-repro" / "numba"
    timing = Path(simcore.__file__).parent / "models" / "numa" / "timing_kernels.py"
    folder = Path(out) / f"numa_timing_kernels-{sources_digest(timing)[:16]}"
    assert any(p.suffix == ".nbi" for p in folder.iterdir())
    (tmp_path / "file").write_text("")
    env["XDG_CACHE_HOME"], env["TMPDIR"] = str(tmp_path / "file"), str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    probe = "import os, simcore; print(os.environ.get('NUMBA_CACHE_DIR', 'unset'))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert Path(done.stdout.split()[-1]).is_relative_to(tmp_path / "tmp")
    assert done.stderr.count("\n") == 1 and "cannot be written; the compiled kernels are cached in" in done.stderr


def test_without_a_writable_folder_numba_keeps_its_default_and_a_warning_says_so(tmp_path, monkeypatch):
    """Both candidate folders are files (so not even root can make them): no NUMBA_CACHE_DIR is
    set, and one warning names them; the first writable one is taken, silently when it is first."""
    import os

    import simcore

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    numba = __import__("sys").modules.get("numba")
    if numba is not None:
        monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    for name in ("a", "b"):
        (tmp_path / name).write_text("")
    said = []
    assert simcore._use_numba_cache([tmp_path / "a", tmp_path / "b"], said.append) is None
    assert "NUMBA_CACHE_DIR" not in os.environ and len(said) == 1 and "none of" in said[0]
    said.clear()
    path = simcore._use_numba_cache([tmp_path / "c", tmp_path / "d"], said.append)
    assert path == tmp_path / "c" and os.environ["NUMBA_CACHE_DIR"] == str(path) and not said
