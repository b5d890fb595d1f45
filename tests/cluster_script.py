"""Scripted cluster scenarios: machines and processes by hand, every policy draw known in advance.

Machines are written ``(speed, memory MB)``, processes ``(arrival, demand CPU s, memory MB,
home)`` with pid = position. Policies draw their timer phases and message recipients from the
generator that ``simulate`` takes from ``streams.fresh(...)``; :class:`ScriptedStreams` hands
them a :class:`ScriptedRng` instead, so that:

* Mosix balancing wake-ups of every machine fall at ``balance * balance_interval + k *
  balance_interval`` (default ``balance=0``: at 1, 2, 3 ... s);
* information rounds fall at ``info * info_interval + k * info_interval`` (default
  ``info=0.5``: at 0.5, 1.5, ... s, so a wake-up at ``k`` sees the loads of ``k - 0.5``);
* in round ``k`` sender ``s`` reaches the ``mosix_known_machines`` machines ``r`` with the
  smallest ``prefer[k % len(prefer)][s][r]`` (default: all keys equal, which is only meaningful
  when ``mosix_known_machines >= n - 1``: every machine hears from all others);
* ``mosix_initial: random`` takes the listed ``integers`` in turn.

At one instant, events fire in the order they were scheduled: an information round before a
wake-up (the rounds are armed when the policy starts, before any arrival), and a completion
timer armed earlier before either.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.models.cluster import full_params, simulate
from simcore.models.cluster.base import Policy
from simcore.models.cluster.cluster import Cluster, Machine, Proc
from simcore.models.cluster.system import ClusterSystem
from simcore.models.cluster.workload import BackgroundSpec, ProcSpec, Workload

BIG = 1000.0  # memory (MB) that no scenario comes near


class ScriptedRng:
    """Stands in for a policy's numpy Generator with the draws described in the module docstring."""

    def __init__(self, balance: float = 0.0, info: float = 0.5, prefer=None, integers=()):
        self.balance, self.info = balance, info
        self.prefer = None if prefer is None else [np.asarray(p, dtype=float) for p in prefer]
        self.ints = list(integers)

    def random(self, size=None):
        if size is None:
            return self.info                      # phase of the information rounds
        if isinstance(size, int):
            return np.full(size, self.balance)    # phases of the balancing wake-ups
        if self.prefer is None:
            return np.zeros(size)                 # recipient keys: all equal
        return np.stack([self.prefer[k % len(self.prefer)] for k in range(size[0])])

    def integers(self, *args, **kwargs):
        return self.ints.pop(0)


class ScriptedStreams:
    """What ``simulate`` needs of Streams: ``fresh(name)`` gives the policy its generator."""

    def __init__(self, rng: ScriptedRng):
        self.rng = rng

    def fresh(self, name: str) -> ScriptedRng:
        return self.rng


def run(machines, procs, policy="mosix", rng: ScriptedRng | None = None, background=(), **params):
    """Simulate ``policy`` on the listed machines and processes (and background processes given as
    ``(machine, seed, max_period)``); the Result of the Python model, after the same scenario on the
    compiled cluster gave the same completions, migrations and metrics."""
    groups = [{"name": f"m{i}", "count": 1, "speed": s, "memory_mb": mem} for i, (s, mem) in enumerate(machines)]
    full = full_params({"machines": groups, **params})
    workload = Workload(tuple(ProcSpec(i, i, float(a), float(d), float(m), h, True)
                              for i, (a, d, m, h) in enumerate(procs)),
                        tuple(BackgroundSpec(*b) for b in background))
    rng = rng or ScriptedRng()
    untouched = ScriptedRng(rng.balance, rng.info, rng.prefer, rng.ints)
    result = simulate(full, workload, policy, ScriptedStreams(rng))
    compiled, Cluster.compiled = Cluster.compiled, True
    try:
        fast = simulate(full, workload, policy, ScriptedStreams(untouched))
    finally:
        Cluster.compiled = compiled
    assert isinstance(fast.cluster, ClusterSystem)
    assert [(p.pid, p.completion, p.migrations) for p in fast.procs] == \
           [(p.pid, p.completion, p.migrations) for p in result.procs]
    assert fast.metrics == result.metrics
    return result


def completions(result) -> dict[int, float]:
    return {p.pid: p.completion for p in result.procs}


def assert_run(result, expected: dict, migrations: int) -> None:
    assert completions(result) == pytest.approx({k: float(v) for k, v in expected.items()}, rel=1e-12)
    assert result.metrics["migrations"] == migrations


def bare_cluster(*speeds: float, unfinished: int = 1) -> Cluster:
    """Machines of the given speeds (memory BIG) under the base policy, with no workload: a test
    places processes and runs ``cluster.engine`` by hand. ``unfinished`` foreground processes are
    still to come, so background processes keep cycling."""
    machines = [Machine(i, f"m{i}", s, BIG) for i, s in enumerate(speeds)]
    cluster = Cluster(Engine(), machines, 10.0, Policy({}, None), lambda proc: None)
    cluster.unfinished = unfinished
    return cluster


def hand_cluster(machines, policy) -> Cluster:
    """Machines ``(speed, memory MB)`` under ``policy`` (built with its draws, started here), with no
    workload: a test places processes (``cluster.place``), sets what the policy knows and calls it
    by hand."""
    cluster = Cluster(Engine(), [Machine(i, f"m{i}", s, mem) for i, (s, mem) in enumerate(machines)], 10.0,
                      policy, lambda proc: None)
    cluster.unfinished = 1
    policy.start(cluster)
    return cluster


def proc(pid: int, memory: float = 0.0, pinned: bool = False) -> Proc:
    """A process (job = pid) arrived at 0 with demand BIG, of ``memory`` MB, not yet placed."""
    return Proc(ProcSpec(pid, pid, 0.0, BIG, float(memory), 0, True), pinned=pinned)
