"""The generator of a SAN kept as a Kronecker descriptor, never as a flat matrix.

Every event ``e`` gives one term: a rate ``f_e`` (a constant, or a function of the global state)
times the tensor product of one small factor ``P_{e,k}`` per participating automaton (identity
elsewhere)::

    Q = sum_e diag(f_e) (P_{e,1} ⊗ … ⊗ P_{e,K})  -  diag( sum_e f_e ⊙ (r_{e,1} ⊗ … ⊗ r_{e,K}) )

with ``r_{e,k}`` the row sums of ``P_{e,k}`` (the diagonal-corrector factors; ones for identity
factors). Local events of one automaton with constant rates share one factor. The corrector is
a sum of tensor products of diagonals, so it is computed once as a vector over the product
space (outer products of small vectors), which keeps every row sum exactly zero. A move from a
state to itself (allowed in synchronizing events: "must be in s, stays in s") enters both parts
and cancels; ``diag`` (the generator's diagonal, for the uniformization rate and preconditioner)
adds those self-loops back to the corrector.

Functional rates. A SAN rate is evaluated in the global state before the event fires (the row),
so a functional term is ``diag(f) · ⊗P``: ``x @ term = (x ⊙ f) @ ⊗P``. ``f`` is evaluated once,
by broadcasting, over the product of only the automata it depends on and stored as a tensor with
singleton axes elsewhere; the product multiplies it into ``x`` before the factors. This is the
generalised tensor product for the case where one function scales a whole term; it holds
whichever automata ``f`` reads, including the ones the event changes. The restriction: a rate
that depends on the *destination* state of a participant has to be written as separate events.

Products. ``x @ Q`` views ``x`` as a tensor of shape (n_1, …, n_K) and applies every term
through :mod:`simcore.san.pieces`: a term whose factors have few entries (the usual case: a
synchronizing event moves each participant along one or two arcs) as slabs, ``y[…, j_k, …] +=
(Π a_k) (x ⊙ f)[…, i_k, …]``, which touches only the states where the event is enabled;
otherwise one non-identity factor at a time along its axis (the shuffle algorithm with a reshape
and one small dense matrix product each); identity factors cost nothing either way.

Reachable states. A breadth-first search from the initial state fires every term on the
frontier through its factors' sparsity patterns (and the function's value there; a zero rate
disables an event). Solvers work on vectors over the reachable set; :meth:`Descriptor.matvec`
scatters into the boxes of a :class:`~simcore.san.pieces.Layout`, applies the terms cut to
those boxes and gathers the reachable entries (neither step when the boxes hold exactly the
reachable states). The boxes are the whole product space, or, when the reachable states fill
less than half of it, one box per local state of the first automaton (the hull of the
reachable states with it): a model whose first automaton constrains the others (corr05's
process and its processors) then works on about the reachable states instead of the product
space, and rates that read only the first automaton are constants inside each box, so all
local events of an automaton become one matrix per box. We chose scatter/gather because the
tensor products need the box layout and the reachable set is closed under the generator: the
restricted operator is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.san.model import Rate, San, SanError, check_product
from simcore.san.pieces import Box, Factor, Layout, Plan


@dataclass
class Term:
    """``diag(func) · ⊗ factors`` (func None: the constant rate is folded into the factors)."""

    name: str
    where: str
    factors: list[Factor]
    func: np.ndarray | None


class StateSpace:
    """The global states reachable from the initial one, as sorted linear product-space indices."""

    def __init__(self, shape: tuple[int, ...], index: np.ndarray):
        self.shape = shape
        self.strides = tuple(math.prod(shape[k + 1:]) for k in range(len(shape)))
        self.product = math.prod(shape)
        self.full = len(index) == self.product
        self.index = None if self.full else index
        self.size = len(index)
        self._local: dict[int, np.ndarray] = {}

    def linear(self) -> np.ndarray:
        """Product-space index of every reachable state."""
        return np.arange(self.product, dtype=np.int64) if self.full else self.index

    def local(self, k: int) -> np.ndarray:
        """Local state index of automaton ``k`` in every reachable state (cached)."""
        if k not in self._local:
            self._local[k] = ((self.linear() // self.strides[k]) % self.shape[k]).astype(np.int32)
        return self._local[k]

    def position(self, linear: int) -> int:
        """Position in the reachable set of product-space index ``linear``."""
        return int(linear) if self.full else int(np.searchsorted(self.index, linear))

    def scatter(self, x: np.ndarray) -> np.ndarray:
        if self.full:
            return x
        out = np.zeros(self.product)
        out[self.index] = x
        return out

    def gather(self, x: np.ndarray) -> np.ndarray:
        return x if self.full else x[self.index]


class Descriptor:
    """Kronecker descriptor of a SAN's generator, its reachable state space and products."""

    def __init__(self, san: San):
        san.validate()
        self.model = san                # measures compile against it (pruning keeps state indices)
        self.san = san = san.pruned()
        self.names = list(san.automata)
        self.shape = tuple(len(s) for s in san.automata.values())
        self.strides = tuple(math.prod(self.shape[k + 1:]) for k in range(len(self.shape)))
        check_product(self.shape, f"{san.source}: key 'automata'")
        self._funcs: dict[str, np.ndarray] = {}
        self.terms = self._build_terms()
        self.initial = int(np.dot(san.initial_state(), self.strides))
        self.space = StateSpace(self.shape, self._reachable())
        for func in self._funcs.values():
            func[~np.isfinite(func)] = 0.0  # only where no reachable state enables the event
        self.corrector = self._diagonal(lambda f: f.rowsum)
        loops = [t for t in self.terms if all(np.diagonal(f.matrix).any() for f in t.factors)]
        self.diag = self.corrector - self._diagonal(lambda f: np.diagonal(f.matrix), loops) if loops else self.corrector
        self.diag_reach = self.space.gather(self.diag.reshape(-1))
        self.layout = Layout.choose(self.shape, self.space.linear())
        self._plans: dict[bool, Plan] = {}
        self._xy: tuple | None = None

    # -- building -----------------------------------------------------------------------------
    def _axis(self, k: int) -> np.ndarray:
        view = [1] * len(self.shape)
        view[k] = self.shape[k]
        return np.arange(self.shape[k]).reshape(view)

    def _rate(self, event) -> tuple[float, np.ndarray | None]:
        """(constant, None) or (1, function tensor) for an event's rate."""
        if not isinstance(event.rate, Rate):
            return event.rate, None
        compiled = self.san.compile(event.rate.text, event.where)
        if not compiled.depends:
            value = float(compiled(self._axis))
            if not math.isfinite(value) or value < 0:
                raise SanError(f"{event.where}: rate '{event.rate.text}' is {value:g}; "
                               "it must be non-negative and finite.")
            return value, None
        if event.rate.text not in self._funcs:
            self._funcs[event.rate.text] = np.array(np.broadcast_to(compiled(self._axis), self._func_shape(compiled)))
        return 1.0, self._funcs[event.rate.text]

    def _func_shape(self, compiled) -> tuple[int, ...]:
        return tuple(n if k in compiled.depends else 1 for k, n in enumerate(self.shape))

    def _matrix(self, auto: str, moves, scale: float) -> np.ndarray:
        states = self.san.automata[auto]
        m = np.zeros((len(states), len(states)))
        for src, dst, p in moves:
            m[states.index(src), states.index(dst)] += scale * p
        return m

    def _build_terms(self) -> list[Term]:
        groups: dict[tuple, Term] = {}
        terms = []
        for event in self.san.events:
            const, func = self._rate(event)
            if const == 0:
                continue
            if event.synchronizing:
                factors, first = [], True
                for auto, moves in event.moves.items():
                    k = self.names.index(auto)
                    factors.append(Factor(k, self._matrix(auto, moves, const if first else 1.0), self.shape))
                    first = False
                terms.append(Term(event.name, event.where, factors, func))
                continue
            (auto, moves), = event.moves.items()
            key = (auto, None if func is None else event.rate.text)
            k = self.names.index(auto)
            m = self._matrix(auto, moves, const)
            if key in groups:
                old = groups[key]
                old.factors = [Factor(k, old.factors[0].matrix + m, self.shape)]
                old.name += f", {event.name}"
            else:
                groups[key] = Term(event.name, event.where, [Factor(k, m, self.shape)], func)
                terms.append(groups[key])
        return terms

    def _diagonal(self, part, terms=None) -> np.ndarray:
        """``-Σ_t f_t ⊙ (⊗ part(factor))`` over the product space: with row sums, the corrector
        (minus each state's total event rate); with the factors' diagonals, the self-loops."""
        diag = np.zeros(self.shape)
        for term in self.terms if terms is None else terms:
            out = np.ones([1] * len(self.shape)) if term.func is None else term.func
            for f in term.factors:
                out = out * part(f).reshape([-1 if k == f.k else 1 for k in range(len(self.shape))])
            diag -= out
        return diag

    # -- reachability -------------------------------------------------------------------------
    def _locals(self, states: np.ndarray, k: int) -> np.ndarray:
        return (states // self.strides[k]) % self.shape[k]

    def _digits(self, states: np.ndarray) -> list[np.ndarray]:
        """Local state index of every automaton in each of ``states``."""
        digits, rest = [None] * len(self.shape), states
        for k in range(len(self.shape) - 1, -1, -1):
            rest, digits[k] = np.divmod(rest, self.shape[k])
        return digits

    def _func_at(self, func: np.ndarray, states: np.ndarray) -> np.ndarray:
        return func[tuple(self._locals(states, k) if n > 1 else 0 for k, n in enumerate(func.shape))]

    def label(self, linear: int) -> str:
        """``A=s, B=t`` for a product-space index."""
        return ", ".join(f"{a}={self.san.automata[a][int(self._locals(np.int64(linear), k))]}"
                         for k, a in enumerate(self.names))

    def _enabled(self, term: Term, states: np.ndarray, digits: list[np.ndarray]) -> np.ndarray:
        """Positions in ``states`` where ``term`` fires with a positive rate (checks the rate there)."""
        mask = np.ones(len(states), bool)
        for f in term.factors:
            mask &= f.rowsum[digits[f.k]] > 0
        where = np.flatnonzero(mask)
        if term.func is None:
            return where
        values = term.func[tuple(digits[k][where] if n > 1 else 0 for k, n in enumerate(term.func.shape))]
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            i = int(where[np.flatnonzero(bad)[0]])
            raise SanError(f"{term.where}: functional rate is {values[bad][0]:g} in reachable state "
                           f"({self.label(states[i])}); it must be non-negative and finite.")
        return where[values > 0]

    def _step(self, states: np.ndarray, loc: np.ndarray, f: Factor, matrix):
        """Every state reached from ``states`` (automaton ``f.k`` in ``loc``) through the CSR pattern
        ``matrix``, and for each the position of the state it came from."""
        starts, counts = matrix.indptr[loc], matrix.indptr[loc + 1] - matrix.indptr[loc]
        base = np.repeat(states - loc * self.strides[f.k], counts)
        offsets = np.arange(counts.sum()) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
        reached = base + matrix.indices[offsets].astype(np.int64) * self.strides[f.k]
        return reached, np.repeat(np.arange(len(states)), counts)

    def successors(self, states: np.ndarray):
        """Per term, the product-space indices of the states it leads to from ``states`` (with repeats)."""
        digits = self._digits(states)
        for term in self.terms:
            origin = self._enabled(term, states, digits)
            reached = states[origin]
            for f in term.factors:  # distinct axes: automaton f.k is still as in the origin state
                reached, came = self._step(reached, digits[f.k][origin], f, f.csr)
                origin = origin[came]
            yield reached

    def predecessors(self, states: np.ndarray):
        """Per term, the product-space indices of the states it leads from to ``states`` (with repeats)."""
        for term in self.terms:
            reached = states
            for f in term.factors:
                reached, _ = self._step(reached, self._locals(reached, f.k), f, f.csr.T.tocsr())
            if term.func is not None:
                reached = reached[self._func_at(term.func, reached) > 0]
            yield reached

    def _search(self, start: np.ndarray, step, allowed: np.ndarray | None = None) -> np.ndarray:
        """Breadth-first search from ``start`` through ``step`` (within ``allowed``); sorted indices."""
        seen = np.zeros(math.prod(self.shape), bool) if allowed is None else ~allowed
        seen[start] = True
        frontier = start
        while frontier.size:
            new = []
            for reached in step(frontier):
                reached = reached[~seen[reached]]
                seen[reached] = True
                new.append(reached)
            frontier = np.unique(np.concatenate(new)) if new else np.zeros(0, np.int64)
        return np.flatnonzero(seen if allowed is None else seen & allowed)

    def _reachable(self) -> np.ndarray:
        return self._search(np.array([self.initial], np.int64), self.successors)

    def irreducible(self) -> bool:
        """Whether every reachable state leads back to the initial state."""
        allowed = np.zeros(math.prod(self.shape), bool)
        allowed[self.space.linear()] = True
        back = self._search(np.array([self.initial], np.int64), self.predecessors, allowed)
        return len(back) == self.space.size

    # -- products -----------------------------------------------------------------------------
    def _plan(self, whole: bool) -> Plan:
        """The pieces for the whole product space (``product``) or for the layout (``matvec``)."""
        box = Box((0,) * len(self.shape), self.shape, 0)
        whole = whole or self.layout.boxes == [box]
        if whole not in self._plans:
            self._plans[whole] = Plan(self.terms, self.corrector, [box] if whole else self.layout.boxes)
        return self._plans[whole]

    def product(self, x: np.ndarray) -> np.ndarray:
        """``x @ Q`` for a vector ``x`` over the whole product space."""
        return self._plan(True).apply(np.asarray(x, dtype=float).reshape(-1))

    def matvec(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``x @ Q`` for a vector ``x`` over the reachable states (scatter into the layout's boxes,
        product, gather), with the storage vectors kept between products; into ``out`` if given
        (not ``x``)."""
        index = self.layout.index
        if self._xy is None:  # the entries outside the reachable states stay zero
            plan = self._plan(False)
            self._xy = (plan, None, None) if index is None else (plan, np.zeros(plan.size), np.empty(plan.size))
        plan, xs, ys = self._xy
        if index is None:
            return plan.apply(np.asarray(x, dtype=float), out=out)
        xs[index] = x
        return np.take(plan.apply(xs, out=ys), index, out=out)

    @property
    def rate_bound(self) -> float:
        """The largest ``-q_ii`` over the reachable states (the uniformization rate)."""
        return float(-self.diag_reach.min()) if self.space.size else 0.0

    def nbytes(self) -> int:
        """Bytes held by the descriptor: factors, function tensors, diagonal, reachable index."""
        factors = sum(f.matrix.nbytes + f.csr.data.nbytes + f.csr.indices.nbytes + f.csr.indptr.nbytes
                      for t in self.terms for f in t.factors)
        funcs = sum(f.nbytes for f in self._funcs.values())
        index = 0 if self.space.index is None else self.space.index.nbytes
        index += 0 if self.layout.index is None or self.layout.index is self.space.index else self.layout.index.nbytes
        diag = self.corrector.nbytes * (1 + (self.diag is not self.corrector))
        laid = self.layout.size * 8 if len(self.layout.boxes) > 1 else 0  # the corrector laid out in boxes
        return factors + funcs + diag + laid + self.diag_reach.nbytes * (not self.space.full) + index

    def initial_vector(self) -> np.ndarray:
        """The point mass on the initial state, over the reachable states."""
        x = np.zeros(self.space.size)
        x[self.space.position(self.initial)] = 1.0
        return x
