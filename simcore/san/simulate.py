"""Monte Carlo simulation of a SAN on SimPy: the cross-check of the numerical solvers.

The simulator reads the same :class:`~simcore.san.model.San` the descriptor is built from, but
none of the descriptor's code: in the current global state it evaluates every event's rate
(the expression, or the constant), times the product over participants of the probability mass
of their moves out of their current state, draws the time of the next event from the total
rate, picks the event in proportion to its rate and each participant's destination in
proportion to its move probability. It records each measure's value at the observation times.
Replication ``r`` draws from ``SeedSequence(seed, spawn_key=(r,))``, so replications do not
depend on how many run together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import simpy

from simcore.san.model import Rate, San
from simcore.stats import mean_interval


@dataclass
class _Event:
    name: str
    const: float
    rate: object | None                    # compiled expression, or None for a constant rate
    moves: list[tuple[int, dict[int, list[tuple[int, float]]]]]   # (automaton, {src: [(dst, p)]})


def _compile(san: San) -> list[_Event]:
    out = []
    for event in san.events:
        rate = san.compile(event.rate.text, event.where) if isinstance(event.rate, Rate) else None
        moves = []
        for auto, arcs in event.moves.items():
            states = san.automata[auto]
            table: dict[int, list[tuple[int, float]]] = {}
            for src, dst, p in arcs:
                table.setdefault(states.index(src), []).append((states.index(dst), float(p)))
            moves.append((list(san.automata).index(auto), table))
        out.append(_Event(event.name, 0.0 if rate else float(event.rate), rate, moves))
    return out


class _Walker:
    """One trajectory of the SAN's Markov chain as a SimPy process."""

    def __init__(self, san: San, events: list[_Event], measures: dict, times: np.ndarray, rng):
        self.events, self.measures, self.times, self.rng = events, measures, times, rng
        self.state = list(san.initial_state())
        self.values = np.zeros((len(times), len(measures)))

    def _local(self, k: int) -> np.ndarray:
        return np.asarray(self.state[k])

    def _rate(self, event: _Event) -> float:
        rate = float(event.rate(self._local)) if event.rate is not None else event.const
        for k, table in event.moves:
            rate *= sum(p for _, p in table.get(self.state[k], ()))
        return rate

    def _record(self, upto: float, filled: int) -> int:
        """Write the current state's measures at every observation time before ``upto``."""
        while filled < len(self.times) and self.times[filled] < upto:
            self.values[filled] = [float(m(self._local)) for m in self.measures.values()]
            filled += 1
        return filled

    def run(self, env: simpy.Environment):
        filled = 0
        horizon = self.times[-1]
        while True:
            rates = np.array([self._rate(e) for e in self.events])
            total = rates.sum()
            if total <= 0:                               # absorbing: the state holds for ever
                self._record(np.inf, filled)
                return
            yield env.timeout(self.rng.exponential(1.0 / total))
            filled = self._record(env.now, filled)
            if env.now > horizon:
                return
            event = self.events[self.rng.choice(len(rates), p=rates / total)]
            for k, table in event.moves:
                arcs = table[self.state[k]]
                weights = np.array([p for _, p in arcs])
                self.state[k] = arcs[self.rng.choice(len(arcs), p=weights / weights.sum())][0]


def simulate(san: San, times, measures: dict[str, str], reps: int, seed: int = 0,
             confidence: float = 0.95) -> dict[str, list]:
    """Mean of each measure at each time over ``reps`` trajectories, with Student-t intervals:
    ``{"time": [...], m: [...], m + "_low": [...], m + "_high": [...]}``."""
    san.validate()
    events = _compile(san)
    compiled = {name: san.compile(text, f"measure '{name}'") for name, text in measures.items()}
    times = np.asarray(times, dtype=float)
    runs = []
    for r in range(reps):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(r,))))
        walker = _Walker(san, events, compiled, times, rng)
        env = simpy.Environment()
        env.process(walker.run(env))
        env.run()
        runs.append(walker.values)
    data = np.stack(runs)                                # reps x times x measures
    out: dict[str, list] = {"time": times.tolist()}
    for j, name in enumerate(measures):
        ivs = [mean_interval(data[:, i, j], confidence) for i in range(len(times))]
        out[name] = [iv.mean for iv in ivs]
        out[f"{name}_low"] = [iv.low for iv in ivs]
        out[f"{name}_high"] = [iv.high for iv in ivs]
    return out
