"""Machines shared fairly by their processes, with thrashing and migration (Amir et al., section 2).

Each of the ``L`` processes on machine ``i`` progresses at ``speed_i / L_eff`` CPU seconds (of a
speed-1.0 machine) per second, where ``L_eff = L`` while the memory in use fits the machine and
``L * thrashing_factor`` once it does not. Processor sharing is kept event-driven: per machine a
virtual clock holds the service attained by every resident process, each process finishes when
the clock reaches its finish tag, and one timer waits for the smallest tag. Any change of a
machine's process set (hence of its rate) advances the clock and re-arms that timer.

A migrated process keeps its remaining demand. With a migration cost ``c > 0`` it leaves its
source at once and joins its target ``c`` seconds later; in between it runs nowhere and counts
on neither machine (load nor memory).
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, Callable

import numpy as np

from simcore.core.engine import Engine, Timer
from simcore.errors import InputError
from simcore.models.cluster.workload import BackgroundSpec, ProcSpec

_TIE = 1e-9  # relative tolerance under which finish tags count as simultaneous


class Proc:
    """A process: its workload data plus where it is and what it still needs."""

    __slots__ = ("pid", "job", "arrival", "demand", "memory", "home", "measured", "pinned",
                 "machine", "token", "finish_v", "remaining", "placed_at", "h_mem", "h_load",
                 "completion", "migrations", "ended_on")

    def __init__(self, spec: ProcSpec | None = None, *, pinned: bool = False):
        if spec is not None:
            self.pid, self.job, self.arrival, self.demand, self.memory, self.home, self.measured = spec
        self.pinned = pinned
        self.machine = -1
        self.token = -1
        self.finish_v = 0.0
        self.remaining = self.demand if spec is not None else 0.0
        self.placed_at = 0.0
        self.h_mem = 0.0
        self.h_load = 0.0
        self.completion = float("nan")
        self.migrations = 0
        self.ended_on = -1  # the machine it completed on


class Machine:
    """One workstation: speed (relative), memory (MB) and its resident processes."""

    __slots__ = ("index", "name", "speed", "memory", "procs", "mem_used", "n_pinned", "vclock",
                 "stamp", "rate", "heap", "timer", "work", "thrashed")

    def __init__(self, index: int, name: str, speed: float, memory: float):
        self.index, self.name, self.speed, self.memory = index, name, float(speed), float(memory)
        self.procs: dict[int, Proc] = {}
        self.mem_used = 0.0
        self.n_pinned = 0
        self.vclock = 0.0
        self.stamp = 0.0
        self.rate = 0.0
        self.heap: list = []
        self.timer: Timer | None = None
        self.work = 0.0
        self.thrashed = 0.0  # seconds spent thrashing (memory in use above the memory) with work to do

    @property
    def load(self) -> float:
        """Resident processes per unit of speed."""
        return len(self.procs) / self.speed

    @property
    def thrashing(self) -> bool:
        return self.mem_used > self.memory

    @property
    def movable(self) -> int:
        return len(self.procs) - self.n_pinned


def expand_machines(machines: list[dict]) -> list[Machine]:
    """Machine objects from ``[{name, count, speed, memory_mb}, ...]``, in the listed order."""
    out: list[Machine] = []
    for group in machines:
        for k in range(int(group.get("count", 1))):
            name = group.get("name", "m")
            out.append(Machine(len(out), f"{name}-{k}", float(group["speed"]), float(group["memory_mb"])))
    if not out:
        raise InputError("parameter 'machines': the cluster has no machine.")
    return out


class Cluster:
    """Machine state, fair-share dynamics and the calls into one policy: the Python model, the
    reference. The model runs ``compiled_cluster.CompiledCluster`` (the same decisions compiled)
    wherever it can; background processes and monitors run here."""

    compiled = True   # simulate builds the compiled cluster where it can (model.cluster_class); False: this class

    def __init__(self, engine: Engine, machines: list[Machine], thrashing_factor: float, policy,
                 on_finish: Callable[[Proc], None]):
        self.engine = engine
        self.machines = machines
        self.tau = float(thrashing_factor)
        self.policy = policy
        self.on_finish = on_finish
        self.unfinished = 0  # foreground processes not yet completed (arrived or not)
        self.migrations = 0
        self.max_load = 0.0
        self._tokens = 0

    # --- what policies read -------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.engine.now

    @property
    def finished(self) -> bool:
        """True once every foreground process has completed."""
        return self.unfinished == 0

    def expect(self, procs, background=()) -> None:
        """The workload's processes, before the first arrives: the background processes start."""
        for k, spec in enumerate(background):
            Background(self, spec, -1 - k).start()

    def remaining(self, proc: Proc) -> float:
        """Remaining demand of a resident process now."""
        m = self.machines[proc.machine]
        return max(proc.finish_v - (m.vclock + (self.now - m.stamp) * m.rate), 0.0)

    def finishing(self, proc: Proc) -> bool:
        """Whether resident ``proc`` completes at this instant: its finish tag lies within the tie
        tolerance of its machine's virtual clock, as ``_complete`` reads ties; its completion
        event may still be pending behind another event of the same instant."""
        m = self.machines[proc.machine]
        now_v = m.vclock + (self.now - m.stamp) * m.rate
        return proc.finish_v <= now_v + _TIE * max(1.0, abs(now_v))

    def schedule(self, delay: float, callback: Callable[[], None]) -> Timer:
        return self.engine.schedule(delay, callback)

    def at(self, time: float, callback: Callable[[Any], None], arg: Any) -> Timer:
        """Call ``callback(arg)`` at exactly ``time`` (>= now)."""
        return self.engine.call_at(time, callback, arg)

    # --- what policies do ---------------------------------------------------------------

    def apply(self, migrations, cost: float) -> None:
        """Carry out ``(proc, target)`` moves, each taking ``cost`` seconds of no progress."""
        for proc, target in migrations or ():
            self.migrate(proc, target, cost)

    def migrate(self, proc: Proc, target: int, cost: float = 0.0) -> None:
        if proc.pinned or proc.machine < 0 or proc.machine == target:
            return
        self.detach(proc)
        self.migrations += 1
        proc.migrations += 1
        if cost > 0:
            self.engine.schedule(cost, lambda: self.place(proc, target))
        else:
            self.place(proc, target)

    # --- the run ----------------------------------------------------------------------------

    def arrive(self, specs) -> None:
        """Processes that arrive together: each placed where the policy assigns it, in turn, then
        the policy's migrations."""
        procs = [Proc(spec) for spec in specs]
        for proc in procs:
            self.place(proc, self.policy.assign(proc, self))
        self.apply(self.policy.on_arrival(procs, self), self.policy.migration_cost)

    def close(self) -> None:
        """At the end of the run (nothing to do here; see ``compiled_cluster``)."""

    # --- dynamics -----------------------------------------------------------------------

    def place(self, proc: Proc, index: int) -> None:
        """Put ``proc`` on machine ``index`` with its remaining demand."""
        m = self.machines[index]
        self._advance(m)
        self._tokens += 1
        proc.token, proc.machine, proc.placed_at = self._tokens, index, self.now
        proc.h_mem, proc.h_load = m.mem_used, m.load
        proc.finish_v = m.vclock + proc.remaining
        heappush(m.heap, (proc.finish_v, proc.token, proc))
        m.procs[proc.pid] = proc
        m.mem_used += proc.memory
        m.n_pinned += proc.pinned
        if m.load > self.max_load:
            self.max_load = m.load
        self._refresh(m)
        self.policy.on_change(index, self)

    def detach(self, proc: Proc) -> None:
        """Take ``proc`` off its machine, keeping its remaining demand."""
        m = self.machines[proc.machine]
        self._advance(m)
        proc.remaining = max(proc.finish_v - m.vclock, 0.0)
        self._drop(m, proc)
        self._refresh(m)
        self.policy.on_change(m.index, self)

    def _drop(self, m: Machine, proc: Proc) -> None:
        del m.procs[proc.pid]
        m.mem_used = m.mem_used - proc.memory if m.procs else 0.0
        m.n_pinned -= proc.pinned
        proc.token, proc.machine = -1, -1

    def _advance(self, m: Machine) -> None:
        now = self.engine.now
        if m.procs and now > m.stamp:
            dv = (now - m.stamp) * m.rate
            m.vclock += dv
            m.work += dv * len(m.procs)
            if m.mem_used > m.memory:
                m.thrashed += now - m.stamp
        m.stamp = now

    def _refresh(self, m: Machine) -> None:
        """Recompute the per-process rate and re-arm the next completion."""
        if m.timer is not None:
            m.timer.cancel()
            m.timer = None
        n = len(m.procs)
        if n == 0:
            m.rate = 0.0
            m.heap.clear()
            return
        m.rate = m.speed / (n * self.tau if m.mem_used > m.memory else n)
        heap = m.heap
        while heap[0][2].token != heap[0][1]:
            heappop(heap)
        delay = max(heap[0][0] - m.vclock, 0.0) / m.rate
        m.timer = self.engine.call(delay, self._complete, m)

    def _complete(self, m: Machine) -> None:
        """The smallest finish tag is reached: retire every process tied with it."""
        m.timer = None
        tag = m.heap[0][0]
        m.work += (tag - m.vclock) * len(m.procs)
        if m.mem_used > m.memory:
            m.thrashed += self.engine.now - m.stamp
        m.vclock, m.stamp = tag, self.engine.now
        limit = tag + _TIE * max(1.0, abs(tag))
        done = []
        heap = m.heap
        while heap and heap[0][0] <= limit:
            _, token, proc = heappop(heap)
            if proc.token == token:
                self._drop(m, proc)
                proc.ended_on = m.index
                done.append(proc)
        self._refresh(m)
        foreground = False
        for proc in done:
            proc.remaining = 0.0
            proc.completion = self.now
            if proc.pinned:
                proc.on_done()  # background process: start its idle period
            else:
                foreground = True
                self.unfinished -= 1
                self.on_finish(proc)
        if foreground and not self.unfinished:
            self.engine.stop()  # the last completion: what is still queued can change no result
        self.policy.on_change(m.index, self)
        if foreground:
            self.apply(self.policy.on_completion(m.index, self), self.policy.migration_cost)


class Background(Proc):
    """A pinned process alternating CPU bursts and idle periods, each U(0, max_period)."""

    __slots__ = ("cluster", "rng", "period", "_draws", "_next")

    def __init__(self, cluster: Cluster, spec: BackgroundSpec, pid: int):
        super().__init__(None, pinned=True)
        self.pid, self.job, self.arrival, self.demand, self.memory = pid, -1, 0.0, 0.0, 0.0
        self.home, self.measured = spec.machine, False
        self.cluster = cluster
        self.rng = np.random.Generator(np.random.PCG64(spec.seed))
        self.period = spec.max_period
        self._draws: list[float] = []
        self._next = 0

    def _draw(self) -> float:
        if self._next >= len(self._draws):
            self._draws = (self.rng.random(64) * self.period).tolist()
            self._next = 0
        self._next += 1
        return self._draws[self._next - 1]

    def start(self) -> None:
        """Begin with a CPU burst on the home machine."""
        self.remaining = self._draw()
        self.demand += self.remaining
        self.cluster.place(self, self.home)

    def on_done(self) -> None:
        if not self.cluster.finished:
            self.cluster.schedule(self._draw(), self._wake)

    def _wake(self) -> None:
        if not self.cluster.finished:
            self.start()
