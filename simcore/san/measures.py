"""Measures over the reachable states: probabilities of a set of states and expected rewards.

A measure is an expression of :mod:`simcore.san.expr` (``"Cpu1 == Busy and Q > 0"``,
``"count(Cpu*, Busy)"``), evaluated vectorised over the reachable states, or a Python callable
called once per reachable state with a dict ``{automaton: state name}`` (simple, but slow for
millions of states). A probability is the expectation of a predicate (non-zero counts as true).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from simcore.san.descriptor import Descriptor
from simcore.san.model import SanError

Measure = str | Callable[[dict[str, str]], float]


def reward_vector(desc: Descriptor, measure: Measure, where: str = "measure") -> np.ndarray:
    """The value of ``measure`` in every reachable state."""
    space = desc.space
    if callable(measure):
        names = [(a, desc.san.automata[a], space.local(k)) for k, a in enumerate(desc.names)]
        values = np.array([float(measure({a: states[loc[i]] for a, states, loc in names}))
                           for i in range(space.size)])
    else:
        compiled = desc.model.compile(measure, where)
        values = np.broadcast_to(compiled(space.local), (space.size,)).astype(float)
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise SanError(f"{where}: is {values[i]:g} in reachable state ({desc.label(space.linear()[i])}).")
    return values


def indicator(desc: Descriptor, predicate: Measure, where: str = "predicate") -> np.ndarray:
    """1.0 in the reachable states where ``predicate`` holds, else 0.0."""
    return (reward_vector(desc, predicate, where) != 0).astype(float)


def expectation(desc: Descriptor, pi: np.ndarray, reward: Measure) -> float:
    """Expected reward under the distribution ``pi`` over the reachable states."""
    return float(reward_vector(desc, reward) @ pi)


def probability(desc: Descriptor, pi: np.ndarray, predicate: Measure) -> float:
    """Probability under ``pi`` of the states where ``predicate`` holds."""
    return float(indicator(desc, predicate) @ pi)
