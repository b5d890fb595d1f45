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

``run`` runs a whole scenario through the model; :class:`Hand` builds the cluster's compiled
state and lets a test place processes and call the kernels' rules on it.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.models.cluster import full_params, simulate
from simcore.models.cluster import knowledge_kernels as KN
from simcore.models.cluster import run_kernels as R
from simcore.models.cluster import slots_kernels as CS
from simcore.models.cluster.system import ClusterSystem, ProcView, expand_machines
from simcore.models.cluster.workload import BackgroundSpec, ProcSpec, Workload
from simcore.models.registry import get_policy

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


def groups(machines) -> list[dict]:
    """Machines ``(speed, memory MB)`` as the parameter ``machines`` lists them, one per group."""
    return [{"name": f"m{i}", "count": 1, "speed": s, "memory_mb": mem} for i, (s, mem) in enumerate(machines)]


def run(machines, procs, policy="mosix", rng: ScriptedRng | None = None, background=(), jobs=None, **params):
    """Simulate ``policy`` on the listed machines and processes (and background processes given as
    ``(machine, seed, max_period)``): the Result of the model's run. Process ``i`` is job
    ``jobs[i]`` (default: a job of its own)."""
    full = full_params({"machines": groups(machines), **params})
    jobs = range(len(procs)) if jobs is None else jobs
    workload = Workload(tuple(ProcSpec(i, j, float(a), float(d), float(m), h, True)
                              for i, ((a, d, m, h), j) in enumerate(zip(procs, jobs))),
                        tuple(BackgroundSpec(*b) for b in background))
    return simulate(full, workload, policy, ScriptedStreams(rng or ScriptedRng()))


def completions(result) -> dict[int, float]:
    return {p.pid: p.completion for p in result.procs}


def assert_run(result, expected: dict, migrations: int) -> None:
    assert completions(result) == pytest.approx({k: float(v) for k, v in expected.items()}, rel=1e-12)
    assert result.metrics["migrations"] == migrations


class Hand:
    """A cluster by hand on the model's compiled rules: machines ``(speed, memory MB)`` under
    ``policy`` (its draws scripted), processes ``(demand, memory MB)`` (pid = position, home 0,
    arrived at 0) that the test places (``place``) when it likes, background processes
    ``(machine, seed, max_period)`` that start at once. ``unfinished`` foreground processes are
    still to come (default: all), so background processes keep cycling. The kernels' state is
    ``system.CI`` and ``system.CF``; ``system`` gives the views (``machines``, ``remaining``,
    ``finishing``)."""

    def __init__(self, machines, procs=(), policy="pvm", rng: ScriptedRng | None = None, background=(),
                 unfinished: int | None = None, lazy: bool | None = None, **params):
        full = full_params({"machines": groups(machines), **params})
        self.policy = (
            policy if not isinstance(policy, str) else get_policy("cluster", policy)(full, rng or ScriptedRng())
        )
        if lazy is not None:
            self.policy.lazy = lazy
        self.done: list = []
        self.system = ClusterSystem(Engine(), expand_machines(full["machines"]), full["thrashing_factor"], self.policy,
                                    self.done.append)
        self.system.unfinished = len(procs) if unfinished is None else unfinished
        self.policy.start(self.system)
        self.system.expect([ProcSpec(i, i, 0.0, float(d), float(m), 0, True) for i, (d, m) in enumerate(procs)],
                           [BackgroundSpec(*b) for b in background])
        self.engine = self.system.engine

    @property
    def CI(self):
        return self.system.CI

    @property
    def CF(self):
        return self.system.CF

    def place(self, pid: int, machine: int) -> ProcView:
        """Process ``pid`` joins ``machine`` now (with the policy's hook, as an arrival would)."""
        self.system._call(R.place, pid, machine, self.system.now)
        return self.proc(pid)

    def detach(self, pid: int) -> None:
        """Process ``pid`` leaves its machine now, keeping its remaining demand (with the policy's hook)."""
        self.system._call(R.detach, pid, self.system.now)

    def at(self, time: float, action) -> None:
        """``action()`` at ``time`` (a SimPy event)."""
        self.engine.schedule(time - self.engine.now, action)

    def run(self, until: float) -> None:
        self.engine.run(until=until)

    def proc(self, pid: int) -> ProcView:
        """Foreground process ``pid``, or background process ``-1 - k`` for a negative ``pid``."""
        return ProcView(self.system, pid if pid >= 0 else self.system.T - 1 - pid)

    def know(self, machine: int, known: dict) -> None:
        """Machine ``machine``'s view, replaced by ``known`` ``{sender: (load, memory in use)}``,
        oldest first."""
        self.CI[CS.machine(machine, self.CI) + CS.M_VN] = 0
        for sender, (load, used) in known.items():
            KN.view_put(machine, sender, float(load), float(used), self.CI, self.CF)

    def view(self, machine: int) -> dict:
        """Machine ``machine``'s view: ``{sender: (load, memory in use)}``, oldest first."""
        CI, CF, V = self.CI, self.CF, int(self.CI[CS.Y_VSTRIDE])
        vs, vl, vm = int(CI[CS.O_VS]) + machine * V, int(CI[CS.OF_VL]) + machine * V, int(CI[CS.OF_VM]) + machine * V
        return {int(CI[vs + k]): (float(CF[vl + k]), float(CF[vm + k]))
                for k in range(int(CI[CS.machine(machine, CI) + CS.M_VN]))}

    def due(self, machine: int) -> float:
        """When Mosix's next wake-up of ``machine`` is armed (inf: none)."""
        return float(self.CF[CS.fmachine(machine, self.CI) + CS.MF_DUE])

    def alert(self, machine: int) -> float:
        """The load below which news of a round wakes ``machine`` (lazy Mosix)."""
        return float(self.CF[CS.fmachine(machine, self.CI) + CS.MF_ALERT])
