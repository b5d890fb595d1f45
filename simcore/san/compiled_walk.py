"""The SAN walker with its steps in numba (:mod:`simcore.san.walk_kernel`), bit for bit the
Python walker of :mod:`simcore.san.simulate`.

:class:`Tables` lays a compiled :class:`~simcore.san.simulate._Model` out as flat arrays: per
event the automata its rate depends on and a dense table of its rates over their local states
(NaN until a trajectory first needs one, then :meth:`_Model._evaluate`'s value, so a rate is
computed, and checked, only in states the walk reaches), its participants' moves, the events it
refreshes; per local state of the measured automata, the measures. The tables are shared by the
trajectories of a call, as the Python walker's memos are. A trajectory is one SimPy process,
which runs the kernel and then holds for the time the walk took, so the clock ends where the
Python walker's does. Models whose dense tables would be too large stay on the Python walker.

tests/test_san_compiled.py holds the two walkers to the same values, steps and clocks.
"""

from __future__ import annotations

import math

import numpy as np
import simpy

from simcore.san import slots_kernels as SL
from simcore.san import walk_kernel as K

LIMIT = 1 << 22          # entries of one dense table beyond which the model stays in Python


def _strides(sizes: list[int]) -> list[int]:
    """Mixed-radix strides of automata of ``sizes`` (the first the most significant)."""
    out, step = [], 1
    for n in reversed(sizes):
        out.append(step)
        step *= n
    return out[::-1]


class Tables:
    """A model's events, moves, refreshes and measures as arrays for :func:`walk_kernel.walk`."""

    def __init__(self, model, sizes: list[int]):
        self.model, self.sizes = model, sizes
        self._rates(model.events)
        self._moves(model.events)
        self._refresh(model)
        self._measures(model)
        width = max(sizes) if sizes else 1
        self.stuck = np.zeros((len(sizes), width), dtype=np.bool_)
        for k, row in enumerate(model.stuck):
            self.stuck[k, :len(row)] = row
        self.watched = np.asarray(model.watched, dtype=np.int64)

    @staticmethod
    def fits(model, sizes: list[int]) -> bool:
        """Whether every dense table of the model stays under :data:`LIMIT` entries."""
        need = [math.prod(sizes[k] for k in e.depends) for e in model.events]
        need.append(math.prod(sizes[k] for k in model.watched))
        return max(need) <= LIMIT

    def _rates(self, events) -> None:
        off, autos, strides, base, size = [0], [], [], [], 0
        for e in events:
            autos += e.depends
            strides += _strides([self.sizes[k] for k in e.depends])
            off.append(len(autos))
            base.append(size)
            size += math.prod(self.sizes[k] for k in e.depends)
        self.d_off, self.d_auto = np.asarray(off, np.int64), np.asarray(autos, np.int64)
        self.d_stride, self.r_base = np.asarray(strides, np.int64), np.asarray(base, np.int64)
        self.r_table = np.full(size, np.nan)

    def _moves(self, events) -> None:
        p_off, p_auto, p_src, mass, off, cnt, dst, cum = [0], [], [], [], [], [], [], []
        for e in events:
            for k, table in e.moves:
                p_auto.append(k)
                p_src.append(len(mass))
                for s in range(self.sizes[k]):
                    m, dsts, cums = table.get(s, (0.0, [], []))
                    mass.append(m), off.append(len(dst)), cnt.append(len(dsts))
                    dst.extend(dsts), cum.extend(cums)
            p_off.append(len(p_auto))
        self.p_off, self.p_auto, self.p_src = (np.asarray(a, np.int64) for a in (p_off, p_auto, p_src))
        self.mv_mass, self.mv_cum = np.asarray(mass, float), np.asarray(cum, float)
        self.mv_off, self.mv_cnt, self.mv_dst = (np.asarray(a, np.int64) for a in (off, cnt, dst))

    def _refresh(self, model) -> None:
        off, idx = [0], []
        for fired in model.refresh:
            idx += [j for j, _, _ in fired]
            off.append(len(idx))
        self.f_off, self.f_idx = np.asarray(off, np.int64), np.asarray(idx, np.int64)

    def _measures(self, model) -> None:
        sizes = [self.sizes[k] for k in model.watched]
        self.m_auto = np.asarray(model.watched, np.int64)
        self.m_stride = np.asarray(_strides(sizes), np.int64)
        self.m_known = np.zeros(math.prod(sizes), dtype=np.bool_)
        self.m_table = np.zeros((math.prod(sizes), len(model.measures)))

    def rate(self, j: int, state: np.ndarray) -> float:
        """Event ``j``'s rate in ``state``, computed (and kept) when not yet known."""
        lo, hi = self.d_off[j], self.d_off[j + 1]
        at = self.r_base[j] + int(np.dot(state[self.d_auto[lo:hi]], self.d_stride[lo:hi]))
        if math.isnan(self.r_table[at]):
            self.r_table[at] = self.model._evaluate(self.model.events[j], state.tolist())
        return self.r_table[at]

    def measure(self, state: np.ndarray) -> None:
        """Know the measures in ``state``."""
        at = int(np.dot(state[self.m_auto], self.m_stride))
        if not self.m_known[at]:
            self.m_table[at] = self.model.values(state.tolist())
            self.m_known[at] = True

    def arrays(self) -> tuple:
        """The kernel's model arguments, in its order."""
        return (self.d_off, self.d_auto, self.d_stride, self.r_base, self.r_table, self.p_off, self.p_auto,
                self.p_src, self.mv_mass, self.mv_off, self.mv_cnt, self.mv_dst, self.mv_cum, self.f_off,
                self.f_idx, self.watched, self.stuck, self.m_auto, self.m_stride, self.m_known, self.m_table)


class CompiledWalker:
    """One trajectory: the Python walker's interface (``values``, ``steps``, ``run``) on the kernel."""

    def __init__(self, tables: Tables, times: np.ndarray, rng: np.random.Generator, stop_early: bool, block: int):
        self.tables, self.times, self.rng, self.block = tables, np.asarray(times, float), rng, block
        self.state = np.asarray(tables.model.initial, np.int64)
        self.values = np.zeros((len(self.times), len(tables.model.measures)))
        self.W = np.zeros(SL.W_SIZE, np.int64)
        self.W[SL.W_STOPEARLY] = int(stop_early)
        self.W[SL.W_DRAWS] = 2 + max((len(e.moves) for e in tables.model.events), default=0)
        self.F = np.zeros(SL.WF_SIZE)
        self.F[SL.WF_NEXT] = self.times[0] if len(self.times) else math.inf
        self.F[SL.WF_HORIZON] = self.times[-1] if len(self.times) else -math.inf
        self.U = np.zeros(0)
        n = len(tables.model.events)
        self.rates = np.asarray([tables.rate(i, self.state) for i in range(n)], float)
        self.cum = np.zeros(n)

    @property
    def steps(self) -> int:
        return int(self.W[SL.W_STEPS])

    def _more_uniforms(self) -> None:
        """Keep the uniforms not yet used and draw the next block (the Python walker's order)."""
        self.U = np.concatenate([self.U[self.W[SL.W_PTR]:], self.rng.random(self.block)])
        self.W[SL.W_PTR] = 0

    def walk(self) -> float:
        """Run the kernel to the trajectory's end; the clock then."""
        args = (self.W, self.F, self.state, self.rates, self.cum)
        while True:
            code = K.walk(*args, self.U, self.times, self.values, *self.tables.arrays())
            if code == K.DONE:
                return float(self.F[SL.WF_NOW])
            if code == K.NEED_RATE:
                self.tables.rate(int(self.W[SL.W_MISS]), self.state)
            elif code == K.NEED_MEASURE:
                self.tables.measure(self.state)
            else:
                self._more_uniforms()

    def run(self, env: simpy.Environment):
        end = self.walk()
        if end > env.now:
            yield env.timeout(end - env.now)
