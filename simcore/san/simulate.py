"""Monte Carlo simulation of a SAN on SimPy: the cross-check of the numerical solvers.

The simulator reads the same :class:`~simcore.san.model.San` the descriptor is built from, but
none of the descriptor's code. An event's rate in a global state is its rate (the constant, or
the expression compiled by :meth:`San.compile`) times the product over participants of the
probability mass of their moves out of their current state, so it depends only on the automata
the expression reads and on the participants. A trajectory keeps every event's current rate;
after an event fires it refreshes only the events that depend on one of the event's
participants, each looked up in a table memoised per event by the local states of those
automata (shared by all trajectories of a call). The time to the next event is exponential with
the total rate (a SimPy timeout); the event is the first whose cumulative rate exceeds a uniform
times the total, and each participant with several moves picks its destination the same way.

A state of total rate 0 holds for ever. Once every automaton the measures read is in a state no
event (not constantly zero) can move it out of, the measures cannot change and the trajectory
stops early (``stop_early``); either way each measure is recorded at the observation times.
Replication ``r`` draws only uniforms, in blocks, from ``SeedSequence(seed, spawn_key=(r,))``,
in a fixed order per step (the time, the event, then each participant with several moves), so a
replication's values depend neither on the batch (``first``) nor on the early stop.

:class:`_Walker` is the reference; :func:`trajectories` walks with its numba transcription
(:mod:`simcore.san.compiled_walk`, bit for bit the same values, steps and clock) unless
:data:`COMPILED` is False.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter

import numpy as np
import simpy

from simcore.san.expr import Compiled
from simcore.san.model import Rate, San, SanError
from simcore.stats import mean_interval

BLOCK = 1024                            # uniforms drawn per call to the generator
COMPILED = True                         # walk in numba (simcore.san.compiled_walk); False: in Python

Move = tuple[float, list[int], list[float]]   # (mass, destinations, cumulative probabilities)


@dataclass
class _Event:
    """One event, compiled for walking."""

    name: str
    where: str
    const: float
    rate: Compiled | None                # compiled expression, or None for a constant rate
    moves: list[tuple[int, dict[int, Move]]]   # (automaton, {source: move})
    depends: tuple[int, ...]             # automata the rate reads, and the participants

    def zero(self) -> bool:
        """Whether the rate is constantly zero."""
        if self.rate is None:
            return self.const == 0
        return not self.rate.depends and float(self.rate(lambda k: None)) == 0


def _compile_event(san: San, index: dict[str, int], event) -> _Event:
    rate = san.compile(event.rate.text, event.where) if isinstance(event.rate, Rate) else None
    moves, depends = [], set(rate.depends if rate else ())
    for auto, arcs in event.moves.items():
        states = san.automata[auto]
        table: dict[int, list[tuple[int, float]]] = {}
        for src, dst, p in arcs:
            table.setdefault(states.index(src), []).append((states.index(dst), float(p)))
        moves.append((index[auto], {s: (sum(p for _, p in a), [d for d, _ in a],
                                        list(accumulate(p for _, p in a))) for s, a in table.items()}))
        depends.add(index[auto])
    const = 0.0 if rate else float(event.rate)
    return _Event(event.name, event.where, const, rate, moves, tuple(sorted(depends)))


class _Model:
    """The SAN compiled for walking: live events, who refreshes whom, memoised rates, frozen states."""

    def __init__(self, san: San, measures: dict[str, str]):
        index = {name: k for k, name in enumerate(san.automata)}
        events = [_compile_event(san, index, e) for e in san.events]
        self.events = [e for e in events if not e.zero()]
        self.initial = list(san.initial_state())
        self.keys = [itemgetter(*e.depends) for e in self.events]
        self.memo: list[dict] = [{} for _ in self.events]
        self.refresh = [self._dependents(e) for e in self.events]
        self.measures = [san.compile(text, f"measure '{name}'") for name, text in measures.items()]
        self.watched = sorted(set().union(*(m.depends for m in self.measures)))
        self.stuck = self._stuck([len(s) for s in san.automata.values()])

    def _dependents(self, fired: _Event) -> list[tuple[int, itemgetter, dict]]:
        """(index, key, memo) of the events whose rate may change when ``fired`` fires."""
        moved = {k for k, _ in fired.moves}
        return [(j, self.keys[j], self.memo[j]) for j, e in enumerate(self.events) if moved.intersection(e.depends)]

    def _stuck(self, sizes: list[int]) -> list[list[bool]]:
        """Per automaton and local state: whether no live event moves it out of that state."""
        stuck = [[True] * n for n in sizes]
        for e in self.events:
            for k, table in e.moves:
                for src, (_, dsts, _) in table.items():
                    stuck[k][src] = stuck[k][src] and all(d == src for d in dsts)
        return stuck

    def rate(self, i: int, state: list[int]) -> float:
        """Rate of live event ``i`` in ``state``, memoised by the states of the automata it depends on."""
        key = self.keys[i](state)
        value = self.memo[i].get(key)
        if value is None:
            value = self.memo[i][key] = self._evaluate(self.events[i], state)
        return value

    def _evaluate(self, event: _Event, state: list[int]) -> float:
        masses = [table[state[k]][0] if state[k] in table else 0.0 for k, table in event.moves]
        if 0.0 in masses:
            return 0.0
        value = float(event.rate(lambda k: np.asarray(state[k]))) if event.rate is not None else event.const
        if not math.isfinite(value) or value < 0:
            raise SanError(f"{event.where}: rate '{event.rate.text}' is {value:g} in a reachable state "
                           "where the event is enabled; it must be non-negative and finite.")
        for mass in masses:
            value *= mass
        return value

    def frozen(self, state: list[int]) -> bool:
        """Whether no automaton a measure reads can leave its current state."""
        return all(self.stuck[k][state[k]] for k in self.watched)

    def values(self, state: list[int]) -> list[float]:
        """Each measure in ``state``."""
        return [float(m(lambda k: np.asarray(state[k]))) for m in self.measures]


def _uniforms(rng: np.random.Generator):
    """Uniforms on [0, 1) from ``rng``, drawn ``BLOCK`` at a time (the same values as one by one)."""
    while True:
        yield from rng.random(BLOCK).tolist()


class _Walker:
    """One trajectory of the SAN's Markov chain as a SimPy process."""

    def __init__(self, model: _Model, times: np.ndarray, rng: np.random.Generator, stop_early: bool):
        self.model, self.times, self.stop_early = model, times, stop_early
        self.state = list(model.initial)
        self.values = np.zeros((len(times), len(model.measures)))
        self.filled, self.next = 0, times[0] if len(times) else math.inf
        self.steps = 0                                   # events fired
        self.uniform = _uniforms(rng).__next__

    def _record(self, upto: float) -> None:
        """Write the current state's measures at every observation time before ``upto``."""
        row, times = self.model.values(self.state), self.times
        while self.filled < len(times) and times[self.filled] < upto:
            self.values[self.filled] = row
            self.filled += 1
        self.next = times[self.filled] if self.filled < len(times) else math.inf

    def _fire(self, event: _Event) -> None:
        """Move each participant, drawing a destination where it has several."""
        for k, table in event.moves:
            mass, dsts, cum = table[self.state[k]]
            self.state[k] = dsts[bisect_right(cum, self.uniform() * mass)] if len(dsts) > 1 else dsts[0]

    def run(self, env: simpy.Environment):
        model, state, uniform = self.model, self.state, self.uniform
        rates = [model.rate(i, state) for i in range(len(model.events))]
        horizon = self.times[-1] if len(self.times) else -math.inf
        while rates and not (self.stop_early and model.frozen(state)):
            cum = list(accumulate(rates))
            if cum[-1] <= 0:                             # absorbing: the state holds for ever
                break
            yield env.timeout(-math.log1p(-uniform()) / cum[-1])
            if env.now > self.next:
                self._record(env.now)
            if env.now > horizon:
                return
            i = bisect_right(cum, uniform() * cum[-1])
            self._fire(model.events[i])
            self.steps += 1
            for j, key, memo in model.refresh[i]:               # model.rate(j, state), inlined
                value = memo.get(key(state))
                rates[j] = model.rate(j, state) if value is None else value
        self._record(math.inf)


def _walkers(model: _Model, sizes: list[int], stop_early: bool):
    """A maker of one trajectory's walker: compiled (:mod:`simcore.san.compiled_walk`) where
    :data:`COMPILED` and the model's tables fit, else the Python walker, the reference."""
    if COMPILED:
        from simcore.san.compiled_walk import CompiledWalker, Tables

        if Tables.fits(model, sizes):
            tables = Tables(model, sizes)
            return lambda times, rng: CompiledWalker(tables, times, rng, stop_early, BLOCK)
    return lambda times, rng: _Walker(model, times, rng, stop_early)


def trajectories(san: San, times, measures: dict[str, str], reps: int, seed: int = 0, first: int = 0,
                 stop_early: bool = True, progress=None) -> np.ndarray:
    """Each measure at each time on replications ``first .. first + reps - 1``: (reps, times, measures).

    ``progress`` (see :mod:`simcore.progress`) hears of each trajectory done."""
    san.validate()
    model = _Model(san, measures)
    times = np.asarray(times, dtype=float)
    runs = np.zeros((reps, len(times), len(measures)))
    walker_for = _walkers(model, [len(s) for s in san.automata.values()], stop_early)
    for r in range(reps):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(first + r,))))
        walker = walker_for(times, rng)
        env = simpy.Environment()
        env.process(walker.run(env))
        env.run()
        runs[r] = walker.values
        if progress:
            progress(r + 1, reps, "trajectories")
    return runs


def simulate(san: San, times, measures: dict[str, str], reps: int, seed: int = 0,
             confidence: float = 0.95, first: int = 0, progress=None) -> dict[str, list]:
    """Mean of each measure at each time over replications ``first .. first + reps - 1``, with
    Student-t intervals: ``{"time": [...], m: [...], m + "_low": [...], m + "_high": [...]}``."""
    data = trajectories(san, times, measures, reps, seed, first, progress=progress)
    out: dict[str, list] = {"time": np.asarray(times, dtype=float).tolist()}
    for j, name in enumerate(measures):
        ivs = [mean_interval(data[:, i, j], confidence) for i in range(data.shape[1])]
        out[name] = [iv.mean for iv in ivs]
        out[f"{name}_low"] = [iv.low for iv in ivs]
        out[f"{name}_high"] = [iv.high for iv in ivs]
    return out
