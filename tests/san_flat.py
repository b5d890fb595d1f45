"""Reference flat generator of a SAN, built independently of the descriptor (tests and benchmarks only).

Straight from the model description: every event is ``diag(rate over all product states) ·
kron(P_1, …, P_K)`` with ``scipy.sparse.kron`` and identities for non-participants; then
``Q = R - diag(R 1)``. Functional rates are evaluated per product state from ``np.indices``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from simcore.san import Rate, San


def flat_generator(san: San) -> sp.csr_array:
    """The whole product-space generator as a CSR matrix (product-space order, first automaton slowest)."""
    names = list(san.automata)
    shape = [len(s) for s in san.automata.values()]
    size = int(np.prod(shape))
    grid = np.indices(shape).reshape(len(shape), -1)
    rows, cols, vals = [], [], []
    for event in san.events:
        mats = []
        for k, auto in enumerate(names):
            states = san.automata[auto]
            if auto not in event.moves:
                mats.append(sp.identity(shape[k], format="csr"))
                continue
            m = sp.lil_array((shape[k], shape[k]))
            for src, dst, p in event.moves[auto]:
                m[states.index(src), states.index(dst)] += p
            mats.append(m.tocsr())
        kron = mats[0]
        for m in mats[1:]:
            kron = sp.kron(kron, m, format="csr")
        kron = kron.tocoo()
        if isinstance(event.rate, Rate):
            rate = np.broadcast_to(san.compile(event.rate.text, "test")(lambda k: grid[k]), (size,))
            rate = np.where(np.isfinite(rate), rate, 0.0)
        else:
            rate = np.full(size, event.rate)
        rows.append(kron.row)
        cols.append(kron.col)
        vals.append(kron.data * rate[kron.row])
    total = sp.coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(size, size)).tocsr()
    total.sum_duplicates()
    total.eliminate_zeros()
    return sp.csr_array(total - sp.diags_array(np.asarray(total.sum(axis=1)).ravel()))
