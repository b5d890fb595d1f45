"""Deleting the warm-up of a steady-state run: a fixed share of the start, or the MSER-5 rule.

The default deletes a share of the run fixed before it starts (``fixed_truncation``). MSER-5
looks at each replication's own values, and on the response times of a loaded queue that is a
selection: a replication whose start happens to hold a long busy period loses it, one whose
start is quiet keeps it, so the truncated mean falls below the steady-state mean (on an M/M/1
queue started in equilibrium, where nothing needs deleting, by several standard errors:
tests/test_warmup.py). It is kept as a reading; a cut that does not depend on the values has
no such bias.

MSER-5 (White 1997; White, Cobb and Spratt 2000) groups the output sequence in batches of 5,
with batch means Z_1..Z_m, and deletes the first d batches for the d in 0..m/2 that minimises

    MSER(d) = sum_{j>d} (Z_j - mean(Z_{d+1..m}))^2 / (m - d)^2,

the squared standard error of the truncated mean, up to a constant. Deleting more data costs
precision and keeping the biased start costs accuracy; the minimum balances the two. A minimum
at the end of the search range (d = m/2) says that the run is too short to leave its transient.
"""

from __future__ import annotations

import numpy as np

BATCH = 5


def fixed_truncation(n: int, fraction: float) -> int:
    """How many of ``n`` leading observations a deletion fixed in advance removes: the first
    ``fraction`` of them, rounded down."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"warm-up fraction {fraction!r} is outside [0, 1).")
    return int(n * fraction)


def mser_truncation(values, batch: int = BATCH) -> int:
    """How many leading observations MSER-``batch`` deletes (a multiple of ``batch``)."""
    x = np.asarray(values, dtype=float)
    m = len(x) // batch
    if m < 2:
        return 0
    z = x[:m * batch].reshape(m, batch).mean(axis=1)
    # suffix sums give every truncation's mean and sum of squares in one pass
    n = np.arange(m, 0, -1, dtype=float)            # m - d for d = 0..m-1
    s1 = np.cumsum(z[::-1])[::-1]
    s2 = np.cumsum((z * z)[::-1])[::-1]
    sse = np.maximum(s2 - s1 * s1 / n, 0.0)
    stat = sse / (n * n)
    last = m // 2
    return int(np.argmin(stat[:last + 1])) * batch
