"""Products with a descriptor's terms on vectors stored box by box.

A vector is stored as a list of boxes (:class:`Box`), each a product of local-state ranges kept
contiguous in C order. The whole product space is one box. When the reachable states fill only a
small part of it, :meth:`Layout.choose` makes one box per local state ``p`` of the first
automaton: the hull (per automaton, lowest to highest local state) of the reachable states with
``p``. Boxes hold every reachable state; their other states hold zeros in ``x`` and whatever the
product writes in ``y``, which nobody reads: the reachable set is closed under the generator.

A :class:`Piece` is one term cut to a source and a destination box: its factors cut to the
boxes' ranges (a factor cut to one entry becomes a scalar, e.g. the first automaton's when the
boxes split on it), its identity axes to the ranges both boxes share, and its rate function to the
source box (a function constant there becomes a scalar). Pieces with the same two boxes, at most
one factor, on the same axis, and constant rates are summed into one: with boxes split on the
first automaton, all local events of an automaton whose rates read only the first automaton
become one small matrix per box (a generalized tensor product). A piece is applied as slabs or
one factor at a time (:meth:`Piece.prepare`).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

#: split the product space into boxes only when it has this many states (below, the pieces'
#: Python overhead outweighs the work saved; corr05-4x1, 10^4 states, is 1.7 times faster split) ...
SPLIT_MIN = 2**13
#: ... and the boxes hold at most this share of them
SPLIT_SHARE = 0.5


class Factor:
    """One non-identity factor: an n x n matrix acting on axis ``k`` of the state tensor."""

    def __init__(self, k: int, matrix: np.ndarray, shape: tuple[int, ...]):
        self.k, self.matrix, self.n = k, matrix, shape[k]
        self.left, self.right = math.prod(shape[:k]), math.prod(shape[k + 1:])
        self.csr = sp.csr_array(matrix)
        rows, cols = np.nonzero(matrix)
        self.nonzeros = [(i, j, float(matrix[i, j])) for i, j in zip(rows.tolist(), cols.tolist())]
        self.rowsum = matrix.sum(axis=1)
        # few trailing states: one GEMM with M ⊗ I_right beats a batch of tiny products
        small = 1 < self.right < 16 and self.n * self.right <= 128
        self.merged = np.kron(matrix, np.eye(self.right)) if small else None

    def apply(self, z: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``z @ (I ⊗ … ⊗ M ⊗ … ⊗ I)`` for a tensor ``z``, into the flat buffer ``out`` (not ``z``)."""
        if out.size != z.size:
            out = out[:z.size]
        if self.n > 64:  # a large automaton: its sparse matrix on the axis moved to the front
            z3 = np.moveaxis(z.reshape(self.left, self.n, self.right), 1, 0).reshape(self.n, -1)
            prod = np.moveaxis((self.csr.T @ z3).reshape(self.n, self.left, self.right), 0, 1)
            np.copyto(out.reshape(self.left, self.n, self.right), prod)
        elif self.right == 1:
            np.matmul(z.reshape(self.left, self.n), self.matrix, out=out.reshape(self.left, self.n))
        elif self.merged is not None:
            np.matmul(z.reshape(self.left, -1), self.merged, out=out.reshape(self.left, -1))
        else:
            np.matmul(self.matrix.T, z.reshape(self.left, self.n, self.right),
                      out=out.reshape(self.left, self.n, self.right))
        return out.reshape(z.shape)


@dataclass(frozen=True)
class Box:
    """The states with ``lo[k] <= s_k < hi[k]`` on every axis, stored in C order from ``offset``."""

    lo: tuple[int, ...]
    hi: tuple[int, ...]
    offset: int

    @cached_property
    def shape(self) -> tuple[int, ...]:
        return tuple(h - lo for lo, h in zip(self.lo, self.hi))

    @cached_property
    def size(self) -> int:
        return math.prod(self.shape)

    def view(self, vec: np.ndarray) -> np.ndarray:
        return vec[self.offset:self.offset + self.size].reshape(self.shape)


class Layout:
    """Boxes holding the reachable states and each reachable state's position in their storage
    (``index``; None when the storage is exactly the reachable states in order)."""

    def __init__(self, boxes: list[Box], index: np.ndarray | None):
        self.boxes, self.index = boxes, index
        self.size = sum(b.size for b in boxes)

    @classmethod
    def choose(cls, shape: tuple[int, ...], linear: np.ndarray) -> Layout:
        """One box per first-automaton state when that saves enough (see the module docstring), else one."""
        product = math.prod(shape)
        whole = cls([Box((0,) * len(shape), shape, 0)], None if len(linear) == product else linear)
        if product < SPLIT_MIN or len(linear) > SPLIT_SHARE * product:
            return whole
        starts = np.searchsorted(linear // math.prod(shape[1:]), np.arange(shape[0] + 1))
        present = np.flatnonzero(np.diff(starts))
        lo, hi = [present], [present + 1]
        for k in range(1, len(shape)):
            digit = (linear // math.prod(shape[k + 1:])) % shape[k]
            lo.append(np.minimum.reduceat(digit, starts[present]))
            hi.append(np.maximum.reduceat(digit, starts[present]) + 1)
        lo, hi = np.array(lo).T, np.array(hi).T
        sizes = np.prod(hi - lo, axis=1)
        if sizes.sum() > SPLIT_SHARE * product:
            return whole
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        boxes = [Box(tuple(a.tolist()), tuple(b.tolist()), int(o)) for a, b, o in zip(lo, hi, offsets)]
        return cls(boxes, _positions(shape, linear, starts[present], lo, hi, offsets))


def _positions(shape, linear, starts, lo, hi, offsets) -> np.ndarray | None:
    """Storage position of each reachable state (sorted ``linear``, boxes split on the first axis)."""
    box = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(linear))))
    pos, stride = offsets[box].copy(), np.ones(len(starts), np.int64)
    for k in range(len(shape) - 1, 0, -1):
        pos += ((linear // math.prod(shape[k + 1:])) % shape[k] - lo[box, k]) * stride[box]
        stride *= hi[:, k] - lo[:, k]
    return None if len(pos) == offsets[-1] + stride[-1] and (pos == np.arange(len(pos))).all() else pos


class Piece:
    """One term from a source box to a destination box: ``y[dst] += coef (x[src] ⊙ func) @ ⊗ M_k``."""

    def __init__(self, name, src: Box, dst: Box, at: tuple, factors: list, func, coef: float):
        self.name, self.src, self.dst, self.factors, self.func, self.coef = name, src, dst, factors, func, coef
        self.src_at, self.dst_at = at
        plain = _plain(self.src_at, src.shape) + _plain(self.dst_at, dst.shape)
        self.whole = plain == (slice(None),) * len(plain)  # both boxes entire: no slicing
        self.slabs: list | None = None
        self.dense: list | None = None
        self.boxes = (0, 0)  # positions of the source and destination in the plan's boxes

    @classmethod
    def cut(cls, term, src: Box, dst: Box) -> Piece | None:
        """``term`` from ``src`` to ``dst`` (None if it moves nothing between them)."""
        mats = {f.k: f.matrix for f in term.factors}
        coef, factors, src_at, dst_at = 1.0, [], [], []
        for k, (ls, hs, ld, hd) in enumerate(zip(src.lo, src.hi, dst.lo, dst.hi)):
            if k in mats:
                m = mats[k][ls:hs, ld:hd]
                if not m.any():
                    return None
                if m.size == 1:
                    coef *= float(m[0, 0])
                else:
                    factors.append((k, m))
                src_at.append(slice(0, hs - ls))
                dst_at.append(slice(0, hd - ld))
            else:
                lo, hi = max(ls, ld), min(hs, hd)
                if lo >= hi:
                    return None
                src_at.append(slice(lo - ls, hi - ls))
                dst_at.append(slice(lo - ld, hi - ld))
        func = None
        if term.func is not None:
            func = term.func[tuple(slice(a, b) if n > 1 else slice(None)
                                   for a, b, n in zip(src.lo, src.hi, term.func.shape))]
            if func.size < term.func.size and func.min() == func.max():  # constant in the box
                coef, func = coef * float(func.flat[0]), None
        return None if coef == 0 else cls(term.name, src, dst, (tuple(src_at), tuple(dst_at)), factors, func, coef)

    def absorb(self, other: Piece) -> None:
        """Add ``other`` (same boxes, constant rates, at most one factor, on the same axis)."""
        if self.factors:
            (k, m), (_, n) = self.factors[0], other.factors[0]
            self.factors, self.coef = [(k, self.coef * m + other.coef * n)], 1.0
        else:
            self.coef += other.coef
        self.name += f", {other.name}"

    def prepare(self, dense: bool | None = None) -> None:
        """Slabs (``slabs``) or one factor at a time (``dense``; ``dense`` forces the choice).

        Each combination of one entry per factor, ``(i_k -> j_k, a_k)``, moves the slab of ``x``
        where every factor's automaton k is in ``i_k`` (times ``func`` there) to the slab where it
        is in ``j_k``, scaled by ``coef Π a_k``: work proportional to the slab, not the box. When the
        axes after the last factor hold few states (< 8), the slab is split along them, so numpy's
        inner loops run along a long strided axis, not a short contiguous one. Factors with many
        entries are applied one at a time instead (a small matrix product each).
        """
        combos = math.prod(np.count_nonzero(m) for _, m in self.factors)
        rows = math.prod(m.shape[0] for _, m in self.factors)
        square = all(m.shape[0] == m.shape[1] for _, m in self.factors)
        n = self.factors[0][1].shape[0] if self.factors else 0
        single = len(self.factors) == 1 and self.func is None and square
        if dense is None:
            dense = combos > 2 * rows or (single and combos >= n and n <= 64)
        self.slabs = self.dense = None
        if self.factors and dense:
            shape = tuple(s.stop - s.start for s in self.src_at)
            if self.func is None:  # the scalar goes into the first factor
                (k, m), rest = self.factors[0], self.factors[1:]
                self.factors, self.coef = [(k, m * self.coef)] + rest, 1.0
            self.dense = [Factor(k, m, shape).apply if square else functools.partial(_rectangular, k, m)
                          for k, m in self.factors]
            return
        self.slabs = list(self._slabs())

    def _slabs(self):
        last = max((k for k, _ in self.factors), default=-1)
        trail = [s.stop - s.start for s in self.src_at[last + 1:]]
        tails = [(list(self.src_at[last + 1:]), list(self.dst_at[last + 1:]))]
        if self.factors and 1 < math.prod(trail) < 8:
            tails = [([slice(s.start + r, s.start + r + 1) for s, r in zip(self.src_at[last + 1:], rest)],
                      [slice(d.start + r, d.start + r + 1) for d, r in zip(self.dst_at[last + 1:], rest)])
                     for rest in np.ndindex(*trail)]
        for choice in itertools.product(*(_nonzeros(m) for _, m in self.factors)):
            src, dst, coef = list(self.src_at[:last + 1]), list(self.dst_at[:last + 1]), self.coef
            for (k, _), (i, j, a) in zip(self.factors, choice):
                src[k], dst[k], coef = slice(i, i + 1), slice(j, j + 1), coef * a
            for src_tail, dst_tail in tails:
                where = tuple(src + src_tail)
                fsrc = None if self.func is None else tuple(
                    a if n > 1 else slice(None) for a, n in zip(where, self.func.shape))
                yield _plain(where, self.src.shape), _plain(dst + dst_tail, self.dst.shape), fsrc, coef

    def apply_into(self, xs: np.ndarray, ys: np.ndarray, scratch) -> None:
        """``y += x @ piece`` for ``x`` in the source box (``xs``) and ``y`` in the destination box
        (``ys``); ``scratch(i)`` gives flat work buffers 0 and 1."""
        if self.dense is not None:
            if self.whole:
                ys += self._dense(xs, scratch)
            else:
                dst = ys[self.dst_at]
                dst += self._dense(xs[self.src_at], scratch)
            return
        buf = scratch(0)
        for src, dst, fsrc, coef in self.slabs:
            part = xs[src]
            tmp = buf[:part.size].reshape(part.shape)
            if fsrc is None and coef == 1.0:
                tmp = part
            elif fsrc is None:
                np.multiply(part, coef, out=tmp)
            else:
                np.multiply(part, self.func[fsrc], out=tmp)
                if coef != 1.0:
                    tmp *= coef
            dst = ys[dst]  # in place: no write-back of the view
            dst += tmp

    def _dense(self, part: np.ndarray, scratch) -> np.ndarray:
        w = part if part.flags.c_contiguous else scratch(1)[:part.size].reshape(part.shape)
        if self.func is None:
            if w is not part:
                np.copyto(w, part)
        else:
            w = scratch(1)[:part.size].reshape(part.shape)
            np.multiply(part, self.func[tuple(a if n > 1 else slice(None)
                                              for a, n in zip(self.src_at, self.func.shape))], out=w)
            if self.coef != 1.0:
                w *= self.coef
        for i, apply in enumerate(self.dense):
            w = apply(w, scratch(i % 2))
        return w


def _rectangular(k: int, m: np.ndarray, z: np.ndarray, _) -> np.ndarray:
    """``z`` times ``m`` along axis ``k``, for a factor cut to boxes of different ranges on that axis."""
    return np.moveaxis(np.tensordot(z, m, axes=([k], [0])), -1, k)


def _plain(where, shape) -> tuple:
    """``where`` with ``slice(None)`` for whole axes (numpy indexes those a little faster)."""
    return tuple(slice(None) if a.indices(n) == (0, n, 1) else a for a, n in zip(where, shape))


def _nonzeros(m: np.ndarray) -> list[tuple[int, int, float]]:
    rows, cols = np.nonzero(m)
    return [(i, j, float(m[i, j])) for i, j in zip(rows.tolist(), cols.tolist())]


class Plan:
    """A descriptor's terms cut into pieces for one list of boxes, with the diagonal corrector laid out."""

    def __init__(self, terms, corrector: np.ndarray, boxes: list[Box], merge: bool = True):
        self.boxes = boxes
        self.size = sum(b.size for b in boxes)
        if len(boxes) == 1 and boxes[0].shape == corrector.shape:
            self.corrector = corrector.reshape(-1)
        else:
            self.corrector = np.concatenate([corrector[tuple(map(slice, b.lo, b.hi))].ravel() for b in boxes])
        self.pieces = [p for t in terms for p in self._cut(t)]
        self.pieces = _merged(self.pieces) if merge else self.pieces
        number = {b.offset: n for n, b in enumerate(boxes)}
        for piece in self.pieces:
            piece.prepare()
            piece.boxes = number[piece.src.offset], number[piece.dst.offset]
        self._work: list[np.ndarray | None] = [None, None]

    def _cut(self, term):
        """The term's pieces: box to itself, or along the first automaton's entries when boxes split on it."""
        first = [f for f in term.factors if f.k == 0]
        if len(self.boxes) == 1 or not first:
            pairs = [(b, b) for b in self.boxes]
        else:
            box_of = {b.lo[0]: b for b in self.boxes}
            pairs = [(box_of[i], box_of[j]) for i, j, _ in first[0].nonzeros if i in box_of and j in box_of]
        return [p for p in (Piece.cut(term, s, d) for s, d in pairs) if p is not None]

    def _scratch(self, i: int) -> np.ndarray:
        """Work buffer ``i`` over the storage, kept between products (fresh large temporaries cost
        page faults every time)."""
        if self._work[i] is None:
            self._work[i] = np.zeros(self.size)
        return self._work[i]

    def apply(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``x @ Q`` for a storage vector ``x`` (into ``out`` if given)."""
        y = np.multiply(x, self.corrector, out=out)
        if len(self.boxes) == 1:
            xv, yv = x.reshape(self.boxes[0].shape), y.reshape(self.boxes[0].shape)
            for piece in self.pieces:
                piece.apply_into(xv, yv, self._scratch)
            return y
        xv, yv = [b.view(x) for b in self.boxes], [b.view(y) for b in self.boxes]
        for piece in self.pieces:
            i, j = piece.boxes
            piece.apply_into(xv[i], yv[j], self._scratch)
        return y


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Sum the pieces with the same boxes, at most one factor, on the same axis, and constant rates."""
    out, groups = [], {}
    for p in pieces:
        if p.func is not None or len(p.factors) > 1:
            out.append(p)
            continue
        key = (p.src.offset, p.dst.offset, p.factors[0][0] if p.factors else None)
        if key in groups:
            groups[key].absorb(p)
        else:
            groups[key] = p
            out.append(p)
    return out
