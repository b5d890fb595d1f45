"""Zhou and Brecht's fork-join job stream: Poisson arrivals, bounded-geometric parallelism.

A job has a desired parallelism d drawn from a geometric distribution on 1, 2, ... whose draws
above P are redrawn (so d <= P); the geometric's parameter is chosen so that this truncated
distribution has the wanted true mean D. The arrival rate follows from the load level L, the
processors' average utilisation without overheads: rate = P L / (mean CPU demand of a job).

Every random quantity of a job is drawn when it arrives, from streams of its own, so every policy
sees the same jobs (common random numbers) whatever it decides: the inter-arrival time, d, and d
numbers u in [-1, 1) that spread the PARA work over whatever number of threads a <= d a policy
creates (thread i gets base + spread * u_i, see ``thread_demands``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from simcore.errors import InputError

BLOCK = 256   # draws taken from numpy at a time (the sequence does not depend on it being fixed)


def truncated_mean(q: float, bound: int) -> float:
    """Mean of a geometric on 1, 2, ... with success probability ``q``, conditioned on <= ``bound``."""
    if q >= 1.0:
        return 1.0
    k = np.arange(1, bound + 1)
    w = (1.0 - q) ** (k - 1)
    return float((k * w).sum() / w.sum())


def largest_mean(bound: int) -> float:
    """The supremum of the truncated mean (q -> 0: uniform on 1..bound)."""
    return (bound + 1) / 2


def geometric_q(mean: float, bound: int) -> float:
    """The success probability whose geometric, truncated at ``bound``, has true mean ``mean``."""
    if mean == 1.0:
        return 1.0
    if not 1.0 < mean < largest_mean(bound):
        raise InputError(f"a bounded-geometric parallelism with bound P = {bound} has a mean of 1 or in "
                         f"(1, {largest_mean(bound):g}); mean_parallelism = {mean:g} is outside it.")
    from scipy.optimize import brentq  # here: scipy.optimize takes half a second to import

    return brentq(lambda q: truncated_mean(q, bound) - mean, 1e-12, 1.0, xtol=1e-15, rtol=1e-14)


def parallelism_pmf(mean: float, bound: int) -> np.ndarray:
    """P(d = k) for k = 1..bound (index k - 1)."""
    q = geometric_q(mean, bound)
    if q >= 1.0:
        pmf = np.zeros(bound)
        pmf[0] = 1.0
        return pmf
    w = (1.0 - q) ** np.arange(bound)
    return w / w.sum()


def job_demand(params: dict) -> float:
    """Mean CPU demand of a job without overheads: INIT + PARA (thread_demand x D) + FINAL."""
    return params["init_demand"] + params["thread_demand"] * params["mean_parallelism"] + params["final_demand"]


def arrival_rate(params: dict) -> float:
    """Jobs per time unit at load level L: P L / mean job demand (the paper's 0.0178 at its defaults)."""
    return params["processors"] * params["load"] / job_demand(params)


def thread_demands(params: dict, d: int, a: int, u: np.ndarray) -> list[float]:
    """Base CPU demands of the a threads of a job of desired parallelism d: the PARA work
    thread_demand x d split evenly, each U(thread_demand d/a - spread, + spread) by its u_i."""
    base = params["thread_demand"] * d / a
    spread = params["thread_spread"]
    return [base + spread * float(x) for x in u[:a]]


class Job(NamedTuple):
    """What is known of a job when it arrives."""

    index: int
    arrival: float
    d: int
    u: np.ndarray   # d numbers in [-1, 1): the spreads of up to d threads


class JobStream:
    """The jobs of one replication, drawn lazily in order (``next()``); every policy's run builds
    its own stream from the same seed and so sees the same jobs."""

    def __init__(self, params: dict, streams):
        self.bound = int(params["processors"])
        self.q = geometric_q(float(params["mean_parallelism"]), self.bound)
        self.mean_gap = 1.0 / arrival_rate(params)
        self._arrivals = streams.fresh("arrivals")
        self._parallelism = streams.fresh("parallelism")
        self._spreads = streams.fresh("spreads")
        self._gaps = self._ds = self._us = np.empty(0)
        self._i_gap = self._i_d = self._i_u = 0
        self.index = 0
        self.clock = 0.0

    def next(self) -> Job:
        """The next job: its arrival is the previous one's plus an exponential gap."""
        self.clock += self._gap()
        d = self._d()
        job = Job(self.index, self.clock, d, self._u(d))
        self.index += 1
        return job

    def _gap(self) -> float:
        if self._i_gap == len(self._gaps):
            self._gaps, self._i_gap = self._arrivals.exponential(self.mean_gap, BLOCK), 0
        self._i_gap += 1
        return float(self._gaps[self._i_gap - 1])

    def _d(self) -> int:
        """A geometric draw, redrawn while above the bound (as the paper generates d)."""
        while True:
            if self._i_d == len(self._ds):
                self._ds = (self._parallelism.geometric(self.q, BLOCK) if self.q < 1.0
                            else np.ones(BLOCK, dtype=np.int64))
                self._i_d = 0
            d = int(self._ds[self._i_d])
            self._i_d += 1
            if d <= self.bound:
                return d

    def _u(self, d: int) -> np.ndarray:
        if self._i_u + d > len(self._us):
            rest = self._us[self._i_u:]
            self._us = np.concatenate([rest, self._spreads.uniform(-1.0, 1.0, max(BLOCK, d))])
            self._i_u = 0
        self._i_u += d
        return self._us[self._i_u - d:self._i_u]


def expected_minimum_response(params: dict) -> float:
    """Mean response time of a job alone on an idle machine without overheads, every job
    creating d threads: INIT + E[max of d threads] + FINAL, with the max of d uniforms on
    [base - s, base + s] having mean base - s + 2 s d / (d + 1) (the paper's 'about 127')."""
    pmf = parallelism_pmf(float(params["mean_parallelism"]), int(params["processors"]))
    d = np.arange(1, len(pmf) + 1)
    base, s = params["thread_demand"], params["thread_spread"]
    emax = base - s + 2.0 * s * d / (d + 1)
    return params["init_demand"] + float((pmf * emax).sum()) + params["final_demand"]


def round_half_up(x: float) -> int:
    """The paper's round(): halves go up (Python's round() goes to even)."""
    return int(math.floor(x + 0.5))
