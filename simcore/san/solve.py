"""Transient (uniformization) and steady-state (power iteration, GMRES) solutions of a SAN.

Every solver works on vectors over the reachable states and touches the generator only through
:meth:`Descriptor.matvec` (``x @ Q``).

Transient error bound. With ``Λ`` the largest outflow rate and ``P = I + Q/Λ``, one step of
length ``Δ`` is ``π e^{QΔ} = Σ_n Pois(n; ΛΔ) π P^n``. We keep the terms ``L..R`` whose omitted
Poisson mass (both tails, computed directly with ``pdtr``/``pdtrc``) is at most
``ε / steps``. All kept terms are non-negative, so the computed vector is below the exact one
entry by entry and its 1-norm error equals its mass deficit; the reported ``bound`` at each time
adds the omitted masses of all steps so far (``≤ ε`` at the last time, floating-point
rounding aside). A measure with values in ``[a, b]`` is off by at most ``max(|a|, |b|) · bound``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.special import pdtr, pdtrc
from threadpoolctl import threadpool_limits

from simcore.san.descriptor import Descriptor
from simcore.san.model import SanError


def one_blas_thread(solver):
    """Run ``solver`` with BLAS on one thread: OpenBLAS shares a matrix product among its
    threads in ways that change the last bits, and a solution must depend on the model only
    (the full corr05 Figure 8 solution differed in its 10th digit between 1 and 2 threads)."""
    @functools.wraps(solver)
    def run(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return solver(*args, **kwargs)
    return run


# -- Poisson weights ---------------------------------------------------------------------------
def poisson_window(lam: float, eps: float) -> tuple[int, np.ndarray, float]:
    """``(left, weights, omitted)``: Poisson(lam) probabilities of ``left..right`` with the omitted
    tail mass ``P(N < left) + P(N > right) ≤ eps`` (tails from ``pdtr``/``pdtrc``).

    As in Fox–Glynn, the weight of the mode is computed first, here in log space with the
    deviance form (Loader's ``bd0``/``stirlerr``, free of the cancellation in
    ``n log λ - λ - log n!``), and the others by the ratios ``λ/(n+1)`` and ``n/λ`` outward.
    """
    if lam == 0:
        return 0, np.ones(1), 0.0
    right = _search(lambda k: pdtrc(k, lam) <= eps / 2, math.floor(lam))
    left = _search(lambda k: pdtr(k, lam) > eps / 2, 0) if lam > 25 else 0
    mode = min(max(math.floor(lam), left), right)
    up = np.cumprod(lam / np.arange(mode + 1, right + 1))
    down = np.cumprod(np.arange(mode, left, -1) / lam)
    weights = _pmf(mode, lam) * np.concatenate([down[::-1], [1.0], up])
    omitted = float(pdtrc(right, lam) + (pdtr(left - 1, lam) if left > 0 else 0.0))
    return left, weights, omitted


def _pmf(n: int, lam: float) -> float:
    """Poisson(lam) probability of ``n``, accurate to a few ulps also for large ``lam``."""
    if n == 0:
        return math.exp(-lam)
    if n <= 15:
        return math.exp(n * math.log(lam) - lam - math.lgamma(n + 1))
    return math.exp(-_stirlerr(n) - _bd0(n, lam)) / math.sqrt(2 * math.pi * n)


def _stirlerr(n: int) -> float:
    """``log n! - log(sqrt(2πn) (n/e)^n)`` for n > 15 (Stirling series)."""
    nn = 1.0 / (n * n)
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - nn / 1188) * nn) * nn) * nn) / n


def _bd0(x: float, m: float) -> float:
    """``x log(x/m) + m - x`` without cancellation when x is near m."""
    if abs(x - m) >= 0.1 * (x + m):
        return x * math.log(x / m) + m - x
    v = (x - m) / (x + m)
    total, term = (x - m) * v, 2 * x * v
    for j in range(1, 1000):
        term *= v * v
        new = total + term / (2 * j + 1)
        if new == total:
            break
        total = new
    return total


def _search(ok: Callable[[int], bool], lo: int) -> int:
    """Smallest integer ``k >= lo`` with ``ok(k)`` (``ok`` monotone)."""
    if ok(lo):
        return lo
    step = 1
    while not ok(lo + step):
        step *= 2
    a, b = lo + step // 2, lo + step  # ok(b), not ok(a) (or a == lo)
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (a, mid) if ok(mid) else (mid, b)
    return b


# -- transient ---------------------------------------------------------------------------------
MAX_PRODUCTS = 1e7  # uniformization needs about (outflow bound x horizon) products: beyond this, hours or never
@dataclass
class Transient:
    """Transient solution: per time, the measures, the mass and the 1-norm error bound."""

    times: np.ndarray
    mass: np.ndarray
    bound: np.ndarray
    measures: dict[str, np.ndarray] = field(default_factory=dict)
    probabilities: np.ndarray | None = None  # (times, reachable states) when kept
    products: int = 0


@one_blas_thread
def transient(desc: Descriptor, times, eps: float = 1e-10, measures: dict[str, np.ndarray] | None = None,
              initial: np.ndarray | None = None, keep: bool = True, progress=None) -> Transient:
    """π(t) at each of the non-decreasing ``times`` (≥ 0) by uniformization, stepping from one time to the next.

    ``measures`` maps names to reward vectors over the reachable states (see
    :func:`simcore.san.measures.reward_vector`); ``keep`` stores every π(t); ``progress`` (see
    :mod:`simcore.progress`) hears of the model time reached at each time.
    """
    times = _check_times(times)
    if not 0 < eps < 1:
        raise SanError(f"eps: must be in (0, 1), not {eps}.")
    pi = _initial(desc, initial)
    rate = desc.rate_bound
    if rate * times[-1] > MAX_PRODUCTS:
        raise SanError(f"{desc.san.source}: uniformization would need about {rate * times[-1]:.3g} products "
                       f"(outflow bound {rate:.3g} up to time {times[-1]:g}, more than {MAX_PRODUCTS:.0e}); "
                       "solve it with krylov (--transient krylov) or give it slower rates.")
    previous = np.concatenate([[0.0], times[:-1]])
    steps = int(np.count_nonzero(times - previous)) or 1
    result = Transient(times, np.zeros(len(times)), np.zeros(len(times)),
                       {k: np.zeros(len(times)) for k in measures or {}},
                       np.zeros((len(times), len(pi))) if keep else None)
    omitted = 0.0
    for i, (t0, t1) in enumerate(zip(previous, times)):
        if t1 > t0 and rate > 0:
            pi, lost, count = _step(desc, pi, rate, rate * (t1 - t0), eps / steps)
            omitted += lost
            result.products += count
        _record(result, i, pi, omitted, measures, keep)
        if progress:
            progress(float(t1), float(times[-1]), "model time")
    return result


def _step(desc: Descriptor, pi: np.ndarray, rate: float, lam: float, eps: float):
    """``π e^{QΔ}`` with ``ΛΔ = lam``; returns it, the omitted Poisson mass, and the products made."""
    left, weights, omitted = poisson_window(lam, eps)
    out = pi * weights[0] if left == 0 else np.zeros_like(pi)
    v = pi
    for n in range(1, left + len(weights)):
        v = v + desc.matvec(v) / rate
        if n >= left:
            out += weights[n - left] * v
    return out, omitted, left + len(weights) - 1


# -- Krylov ------------------------------------------------------------------------------------
@one_blas_thread
def transient_krylov(desc: Descriptor, times, tol: float = 1e-8, measures: dict[str, np.ndarray] | None = None,
                     initial: np.ndarray | None = None, keep: bool = False, m: int = 30, progress=None) -> Transient:
    """π(t) by a Krylov (Arnoldi) exponential integrator with adaptive steps, after Expokit's ``expv``.

    For stiff models (a few fast automata make the outflow bound ``Λ`` large, so uniformization
    needs ``Λ t`` products) the cost follows the solution's smoothness instead. Each step builds
    an ``m``-dimensional Krylov basis of ``Q^T`` at the current vector and takes the largest step
    ``τ`` whose a-posteriori error estimate (Saad's, from the (m+1)-th term) is below ``τ · tol``;
    every requested time inside the step is read off the same basis. ``bound`` holds the sum of
    the accepted local error estimates: an estimate, not the guaranteed bound of uniformization.
    ``progress`` (see :mod:`simcore.progress`) hears of the model time reached at each step.
    """
    times = _check_times(times)
    pi = _initial(desc, initial)
    result = Transient(times, np.zeros(len(times)), np.zeros(len(times)),
                       {k: np.zeros(len(times)) for k in measures or {}},
                       np.zeros((len(times), len(pi))) if keep else None)
    norm = 2 * desc.rate_bound or 1.0                  # ||Q^T||_1
    m = max(1, min(m, desc.space.size))             # a basis of the whole space breaks down happily
    now, step, err_sum, k = 0.0, None, 0.0, 0
    while k < len(times) and times[k] == 0:
        k = _record(result, k, pi, 0.0, measures, keep)
    work = _Workspace(m, desc.space.size)
    while k < len(times):
        beta = float(np.linalg.norm(pi))
        np.divide(pi, beta, out=work.basis[0])
        basis, hess, mx, happy, result.products = _arnoldi(desc, work, m, norm, result.products)
        if step is None:
            step = _first_step(m, norm, tol, beta)
        remaining = times[-1] - now
        used = mx if happy else mx + 1               # basis vectors in the approximation
        while True:
            tau = remaining if happy else min(step, remaining)
            col = _expm_col(hess, tau, mx, happy)
            err = 0.0 if happy else _local_error(col, beta, mx)
            if err <= 1.2 * tau * tol or tau < 1e-12 * max(1.0, times[-1]):
                break
            step = 0.9 * tau * (tau * tol / err) ** (1 / mx)
        while k < len(times) and times[k] <= now + tau * (1 + 1e-14):
            inner = _expm_col(hess, times[k] - now, mx, happy)
            k = _record(result, k, beta * (inner[:used] @ basis[:used]), err_sum + err, measures, keep)
        pi = beta * (col[:used] @ basis[:used])
        now, err_sum = now + tau, err_sum + err
        if progress:
            progress(float(min(now, times[-1])), float(times[-1]), "model time")
        if not happy:
            step = 0.9 * tau * (tau * tol / max(err, 1e-300)) ** (1 / mx)
    _check_mass(desc, result, max(1e-6, 10 * tol * times[-1]))
    return result


def _check_mass(desc: Descriptor, result: Transient, limit: float) -> None:
    """A solution whose probability mass strays from 1 by more than ``limit`` is refused: its
    rates are too far apart (too stiff) for the method in double precision."""
    lost = np.abs(result.mass - 1)
    if not lost.max() <= limit:
        k = int(np.nanargmax(lost)) if np.isfinite(lost).any() else 0
        raise SanError(f"{desc.san.source}: the Krylov solution holds probability {result.mass[k]:.3g}, not 1, at "
                       f"time {result.times[k]:g}: its rates (outflow bound {desc.rate_bound:.3g}) are too stiff "
                       "to solve in double precision.")


def _check_times(times) -> np.ndarray:
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or not len(times) or (times < 0).any() or (np.diff(times) < 0).any():
        raise SanError("times: must be a non-empty, non-decreasing list of non-negative numbers.")
    return times


def _initial(desc: Descriptor, initial) -> np.ndarray:
    pi = desc.initial_vector() if initial is None else np.asarray(initial, dtype=float)
    if pi.shape != (desc.space.size,) or (pi < 0).any() or abs(pi.sum() - 1) > 1e-12:
        raise SanError(f"initial: must be a distribution over the {desc.space.size} reachable states.")
    return pi


def _record(result: Transient, k: int, pi: np.ndarray, err: float, measures, keep: bool) -> int:
    """Store π (mass, error, measures) as the solution at ``result.times[k]``; returns ``k + 1``."""
    result.mass[k], result.bound[k] = pi.sum(), err
    for name, reward in (measures or {}).items():
        result.measures[name][k] = reward @ pi
    if keep:
        result.probabilities[k] = pi
    return k + 1


class _Workspace:
    """The Krylov basis (``m`` + 1 rows) and two vectors, allocated once for a solution: a fresh
    basis per step costs its page faults every time (a few hundred MB at full scale)."""

    def __init__(self, m: int, n: int):
        self.basis, self.w, self.tmp = np.empty((m + 1, n)), np.empty(n), np.empty(n)


def _arnoldi(desc: Descriptor, work: _Workspace, m: int, norm: float, products: int):
    """Basis (m+1 rows, the first given in ``work.basis[0]``), the (m+2)-square augmented
    Hessenberg matrix, its used size, happy breakdown."""
    basis, w = work.basis, work.w
    hess = np.zeros((m + 2, m + 2))
    for j in range(m):
        desc.matvec(basis[j], out=w)
        products += 1
        hess[:j + 1, j] = orthogonalize(w, basis[:j + 1], work.tmp)
        h_next = float(np.linalg.norm(w))
        if h_next <= 1e-12 * norm:                       # the basis spans an invariant subspace
            return basis, hess, j + 1, True, products
        hess[j + 1, j] = h_next
        np.divide(w, h_next, out=basis[j + 1])
    # Expokit puts 1 here and scales the estimate's second term by ||Q^T v_{m+1}||; that entry
    # enters the first column of exp(τH) linearly, so the norm is put in directly
    hess[m + 1, m] = float(np.linalg.norm(desc.matvec(basis[m], out=w)))
    products += 1
    return basis, hess, m, False, products


def _expm_col(hess: np.ndarray, tau: float, mx: int, happy: bool) -> np.ndarray:
    """First column of exp(τ H) for the (mx+2)-square augmented matrix (or mx for a breakdown)."""
    from scipy.linalg import expm
    size = mx if happy else mx + 2
    return expm(tau * hess[:size, :size])[:, 0]


def _local_error(col: np.ndarray, beta: float, mx: int) -> float:
    """Expokit's estimate from the last two entries of the augmented exponential's first column."""
    p1 = abs(col[mx]) * beta
    p2 = abs(col[mx + 1]) * beta
    if p1 > 10 * p2:
        return p2
    if p1 > p2:
        return p1 * p2 / (p1 - p2)
    return p1


def _first_step(m: int, norm: float, tol: float, beta: float) -> float:
    fact = ((m + 1) / math.e) ** (m + 1) * math.sqrt(2 * math.pi * (m + 1))
    return (1 / norm) * ((fact * tol) / (4 * beta * norm)) ** (1 / m)


def solve_transient(desc: Descriptor, times, measures: dict[str, np.ndarray], method: str = "uniformization",
                    tol: float = 1e-10, krylov_dim: int = 30, progress=None) -> Transient:
    """The transient solution by ``method`` (``uniformization``: ``tol`` bounds the error;
    ``krylov``: ``tol`` is the local error per unit time), measures only."""
    if method == "krylov":
        return transient_krylov(desc, times, tol=tol, measures=measures, m=krylov_dim, progress=progress)
    if method == "uniformization":
        return transient(desc, times, eps=tol, measures=measures, keep=False, progress=progress)
    raise SanError(f"method: '{method}' is not a transient method ({', '.join(TRANSIENT)}).")


TRANSIENT = ("uniformization", "krylov")


# -- steady state ------------------------------------------------------------------------------
@dataclass
class Steady:
    """Steady-state vector over the reachable states, with its residual ``||π Q||_1``."""

    pi: np.ndarray
    residual: float
    iterations: int
    method: str
    converged: bool


def residual(desc: Descriptor, pi: np.ndarray) -> float:
    """``||π Q||_1``: zero exactly at a stationary distribution."""
    return float(np.abs(desc.matvec(pi)).sum())


@one_blas_thread
def steady_state(desc: Descriptor, method: str = "gmres", tol: float = 1e-10, maxiter: int = 100_000,
                 progress=None) -> Steady:
    """Stationary distribution over the reachable states; stops once ``||π Q||_1 ≤ tol``.

    ``power``: power iteration on ``P = I + Q/(1.01 Λ)`` from the initial state (aperiodic by
    the margin), the limit from that state also when the chain is reducible. ``gmres``: restarted
    GMRES (:func:`gmres`) on ``Q^T`` with one equation replaced by ``Σ π = 1`` and a diagonal
    (Jacobi) preconditioner; needs the reachable chain to be irreducible (checked). The residual
    bounds the error only up to the chain's conditioning (``||π - π*||_1 ≤ ||πQ||_1 ||Q^#||``,
    with ``Q^#`` the group inverse), which is not computed. ``progress`` (see
    :mod:`simcore.progress`) hears of the iterations every 100 (power) or per restart (GMRES).
    """
    if method == "power":
        return _power(desc, tol, maxiter, progress)
    if method == "gmres":
        return _gmres(desc, tol, maxiter, progress=progress)
    raise SanError(f"method: '{method}' is not a steady-state method (power, gmres).")


def _power(desc: Descriptor, tol: float, maxiter: int, progress=None) -> Steady:
    rate = 1.01 * desc.rate_bound
    pi = desc.initial_vector()
    if rate == 0:
        return Steady(pi, 0.0, 0, "power", True)
    res = math.inf
    for it in range(1, maxiter + 1):
        flow = desc.matvec(pi)
        res = float(np.abs(flow).sum())
        if progress and (res <= tol or it % 100 == 0):
            progress(it - 1, None, "power iterations", f"residual {res:.1e}")
        if res <= tol:
            return Steady(pi, res, it - 1, "power", True)
        pi = pi + flow / rate
        pi /= pi.sum()
    return Steady(pi, residual(desc, pi), maxiter, "power", False)


def _gmres(desc: Descriptor, tol: float, maxiter: int, restart: int = 40, progress=None) -> Steady:
    n = desc.space.size
    if n == 1:
        return Steady(np.ones(1), 0.0, 0, "gmres", True)
    if not desc.irreducible():
        raise SanError(f"{desc.san.source}: the reachable chain is not irreducible; "
                       "use the power method for the limit from the initial state.")

    def op(v):  # Q^T v with its first equation replaced by the normalization sum(v)
        y = desc.matvec(v)
        y[0] = v.sum()
        return y

    scale = -desc.diag_reach.copy()
    scale[0] = 1.0
    b = np.zeros(n)
    b[0] = 1.0
    x, count, target = np.full(n, 1.0 / n), 0, tol / math.sqrt(n)
    while True:  # GMRES works in the 2-norm; tighten it until the 1-norm residual is small
        x, count = gmres(op, b, x, lambda v: v / scale, target, maxiter - count, restart, count, progress)
        pi = np.clip(x, 0, None)
        pi /= pi.sum()
        res = residual(desc, pi)
        if progress:
            progress(count, None, "GMRES iterations", f"residual {res:.1e}")
        if res <= tol or count >= maxiter or target < 1e-15:
            return Steady(pi, res, count, "gmres", res <= tol)
        target *= tol / res / 4


def orthogonalize(w: np.ndarray, basis: np.ndarray, tmp: np.ndarray | None = None) -> np.ndarray:
    """Make ``w`` orthogonal to the orthonormal rows of ``basis`` in place (classical Gram-Schmidt,
    twice: two BLAS products per pass; ``tmp``: a work vector like ``w``); returns the projection
    coefficients."""
    coef = np.zeros(len(basis))
    tmp = np.empty_like(w) if tmp is None else tmp
    for _ in range(2):
        h = basis @ w
        w -= np.matmul(h, basis, out=tmp)
        coef += h
    return coef


def gmres(op, b: np.ndarray, x: np.ndarray, precond, tol: float, maxiter: int, restart: int,
          count: int = 0, progress=None) -> tuple[np.ndarray, int]:
    """Restarted GMRES for ``op(x) = b`` with right preconditioner ``precond`` (≈ op⁻¹) until
    ``||b - op(x)||_2 ≤ tol``; returns x and ``count`` plus the iterations made (``progress``
    hears of them at each restart).

    Arnoldi with classical Gram–Schmidt applied twice (two matrix-vector products with the
    basis per step, which BLAS does fast; scipy's modified Gram–Schmidt loops in Python).
    """
    n, done = len(b), 0
    while done < maxiter:
        r = b - op(x)
        beta = float(np.linalg.norm(r))
        if beta <= tol:
            break
        if progress:
            progress(count + done, None, "GMRES iterations")
        m = min(restart, maxiter - done, n)
        basis, hess = np.empty((m + 1, n)), np.zeros((m + 1, m))
        basis[0] = r / beta
        for j in range(m):
            w = op(precond(basis[j]))
            hess[:j + 1, j] = orthogonalize(w, basis[:j + 1])
            hess[j + 1, j] = np.linalg.norm(w)
            done += 1
            rhs = np.zeros(j + 2)
            rhs[0] = beta
            y = np.linalg.lstsq(hess[:j + 2, :j + 1], rhs, rcond=None)[0]
            estimate = np.linalg.norm(rhs - hess[:j + 2, :j + 1] @ y)
            if estimate <= tol or hess[j + 1, j] <= 1e-14 * beta:
                break
            basis[j + 1] = w / hess[j + 1, j]
        x = x + precond(y @ basis[:j + 1])
    return x, count + done
