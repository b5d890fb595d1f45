"""Vector-descriptor product against a flat sparse matrix-vector product on one scalable SAN.

Run: ``python bench/bench_san.py [--sizes 4,6,8,9,10,11] [--flat-max 9] [--solve N]``
(the numbers in the README: ``--flat-max 10 --solve 11``, then ``--sizes 4 --solve 10``), and
``python bench/bench_san.py --corr05 corr05-4x2`` for the full transient of corr05's model.

The model: N processors ``Cpu1..CpuN`` with states Idle, Run, Mem, Fail, and one process
automaton ``Phase`` (0..3). Local events: Idle->Run (lam), Run->Idle (mu), Run->Mem (alpha),
Fail->Idle (repair), and two functional rates: Mem->Run at ``beta / max(1, count(Cpu*, Mem))``
(shared memory bandwidth) and Phase k->k+1 at ``gamma * count(Cpu*, Idle)``; one synchronizing
event per processor: Run->Fail together with Phase 3->0 (delta). 4^(N+1) states, all but 3
reachable (every processor failed while Phase > 0 is not), so the product scatters and gathers.

For each N it prints the descriptor's build time (incl. the reachable-state search), the flat
matrix's build time, both memories (the descriptor's factors, function tensors, diagonal and
reachable index; the CSR arrays), and the time of one ``x @ Q`` by the descriptor and, where
N <= --flat-max, by ``Q^T @ x`` on a flat CSR matrix over the reachable states (built with
scipy.sparse.kron by the tests' independent builder). ``--solve N`` also solves that size: a
transient to t = 1 (eps 1e-8) and, for N <= 10, the steady state by GMRES.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from san_flat import flat_generator  # noqa: E402

from simcore.san import Descriptor, Rate, San, reward_vector, steady_state, transient  # noqa: E402


def model(n: int) -> San:
    """N processors and one process automaton (see the module docstring)."""
    san = San(params={"lam": 1.0, "mu": 1.5, "alpha": 0.8, "beta": 2.0, "repair": 0.2,
                      "gamma": 0.3, "delta": 0.05})
    for i in range(1, n + 1):
        san.automaton(f"Cpu{i}", ["Idle", "Run", "Mem", "Fail"])
    san.automaton("Phase", ["0", "1", "2", "3"])
    for i in range(1, n + 1):
        cpu = f"Cpu{i}"
        san.local(cpu, "Idle", "Run", Rate("lam")).local(cpu, "Run", "Idle", Rate("mu"))
        san.local(cpu, "Run", "Mem", Rate("alpha")).local(cpu, "Fail", "Idle", Rate("repair"))
        san.local(cpu, "Mem", "Run", Rate("beta / max(1, count(Cpu*, Mem))"))
        san.sync(f"crash{i}", Rate("delta"), {cpu: [("Run", "Fail")], "Phase": [("3", "0")]})
    for k in range(3):
        san.local("Phase", str(k), str(k + 1), Rate("gamma * count(Cpu*, Idle)"))
    return san


def timed(*fns, budget: float = 2.0) -> list[float]:
    """Best wall time of each of ``fns``, called in turn (so both see the same machine load)
    until about ``budget`` seconds have passed (at least 3 rounds)."""
    best, spent, rounds = [float("inf")] * len(fns), 0.0, 0
    while spent < budget or rounds < 3:
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            took = time.perf_counter() - start
            best[i], spent = min(best[i], took), spent + took
        rounds += 1
    return best


def mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.1f}"


def row(n: int, flat_max: int) -> dict:
    start = time.perf_counter()
    desc = Descriptor(model(n))
    build = time.perf_counter() - start
    x = np.random.default_rng(n).random(desc.space.size)
    out = {"N": n, "states": desc.space.size, "build": build, "desc_mb": mb(desc.nbytes())}
    if n > flat_max:
        out["desc_s"], = timed(lambda: desc.matvec(x))
        return out
    start = time.perf_counter()
    idx = desc.space.linear()
    qt = flat_generator(desc.san)[idx][:, idx].T.tocsr()
    out["flat_build"] = time.perf_counter() - start
    out["flat_mb"] = mb(qt.data.nbytes + qt.indices.nbytes + qt.indptr.nbytes)
    out["desc_s"], out["flat_s"] = timed(lambda: desc.matvec(x), lambda: qt @ x)
    out["err"] = float(np.abs(qt @ x - desc.matvec(x)).max())
    out["nnz"] = qt.nnz
    return out


def solve(n: int) -> None:
    """Transient to t = 1 (and the steady state for N <= 10) of the N-processor model."""
    start = time.perf_counter()
    desc = Descriptor(model(n))
    busy = reward_vector(desc, "count(Cpu*, Run)")
    sol = transient(desc, [0.5, 1.0], eps=1e-8, measures={"run": busy}, keep=False)
    took = time.perf_counter() - start
    print(f"N={n}: {desc.space.size:,} states, transient to t=1: {sol.products} products in {took:.1f} s, "
          f"E[running](1) = {sol.measures['run'][-1]:.6f}, mass {sol.mass[-1]:.12f}, bound {sol.bound[-1]:.1e}",
          flush=True)
    if n <= 10:
        start = time.perf_counter()
        ss = steady_state(desc, method="gmres", tol=1e-8, maxiter=3000)
        print(f"N={n}: steady state by GMRES: {ss.iterations} iterations in {time.perf_counter() - start:.1f} s, "
              f"residual {ss.residual:.1e}, E[running] = {busy @ ss.pi:.6f}")


def corr05(topology: str) -> None:
    """The full 0-30 s transient of corr05's Figure 8 model, both hierarchies (Krylov, tol 1e-8),
    with uniformization's product count for comparison (Λ t plus the Poisson window, not run)."""
    import resource

    from simcore.san.corr05 import build
    from simcore.san.solve import poisson_window, transient_krylov

    times = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 25, 30]
    for levels in ("2", "n"):
        start = time.perf_counter()
        desc = Descriptor(build(topology, levels))
        built = time.perf_counter() - start
        reward = {"finished": reward_vector(desc, "Proc == En")}
        sol = transient_krylov(desc, times, tol=1e-8, measures=reward)
        took = time.perf_counter() - start - built
        left, weights, _ = poisson_window(desc.rate_bound * 30, 1e-8)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
        print(f"corr05 {topology} levels {levels}: {desc.space.size:,} reachable of {desc.space.product:,} "
              f"states; build {built:.1f} s; transient 0-30 s: {sol.products} products in {took:.0f} s "
              f"(uniformization would need {left + len(weights) - 1:,}); P(finished by 30 s) = "
              f"{sol.measures['finished'][-1]:.5f}, error estimate {sol.bound[-1]:.1e}; peak {peak:,.0f} MB",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,6,8,9,10,11", help="numbers of processors N")
    parser.add_argument("--flat-max", type=int, default=9, help="largest N with a flat matrix")
    parser.add_argument("--solve", type=int, metavar="N", help="also solve the model with N processors")
    parser.add_argument("--corr05", metavar="TOPOLOGY", help="only the 0-30 s transient of corr05's SAN "
                        "(corr05-4x2: the Figure 8 machine; corr05-4x1: its small instance)")
    args = parser.parse_args()
    if args.corr05:
        return corr05(args.corr05)
    print(f"{'N':>3} {'states':>12} {'build s':>8} {'flat s':>7} {'desc MB':>9} {'flat MB':>9} {'nnz':>11} "
          f"{'desc ms':>9} {'flat ms':>9} {'desc/flat':>9} {'max |diff|':>10}")
    for n in (int(s) for s in args.sizes.split(",")):
        r = row(n, args.flat_max)
        if "flat_s" in r:
            flat = (f"{r['flat_build']:>7.2f} {r['desc_mb']:>9} {r['flat_mb']:>9} {r['nnz']:>11,} "
                    f"{r['desc_s'] * 1e3:>9.2f} {r['flat_s'] * 1e3:>9.2f} {r['desc_s'] / r['flat_s']:>9.2f} "
                    f"{r['err']:>10.1e}")
        else:
            flat = (f"{'-':>7} {r['desc_mb']:>9} {'-':>9} {'-':>11} {r['desc_s'] * 1e3:>9.2f} "
                    f"{'-':>9} {'-':>9} {'-':>10}")
        print(f"{r['N']:>3} {r['states']:>12,} {r['build']:>8.2f} {flat}", flush=True)
    if args.solve:
        solve(args.solve)


if __name__ == "__main__":
    main()
