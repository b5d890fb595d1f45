"""Memory a run will need, estimated from its inputs before anything is built, and the limit it
must stay under (the machine's memory, or ``SIMCORE_MEMORY_LIMIT``).

A SAN solution's vectors span the product space of its automata; a simulation's state grows with
its tasks, processes or jobs. Both are known from the inputs alone, so a run that could not fit
is refused with one sentence (exit 2) instead of growing until the machine swaps or kills it.
The estimates are upper bounds of the large arrays, not of Python's small objects.
"""

from __future__ import annotations

import math
import os

from simcore.errors import InputError

ENV = "SIMCORE_MEMORY_LIMIT"
SHARE = 0.75          # of the machine's physical memory a single run may plan to use
UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def physical_memory() -> int:
    """The machine's physical memory in bytes (0 where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0


def parse_size(text: str, where: str = ENV) -> int:
    """'8G', '512M', '1.5T' or a number of bytes, as bytes; anything else raises one sentence."""
    raw = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = raw[-1:] if raw[-1:] in UNITS and raw[-1:] else ""
    try:
        value = float(raw[: len(raw) - len(unit)]) * UNITS[unit]
    except ValueError:
        raise InputError(f"{where}: '{text}' is not a size (a number of bytes, or with K, M, G or T).") from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: '{text}' must be a positive size.")
    return int(value)


def memory_limit() -> int:
    """Bytes one run may plan to use: ``SIMCORE_MEMORY_LIMIT`` if set, else 3/4 of the machine's
    physical memory (16 GiB where the platform does not say)."""
    if os.environ.get(ENV):
        return parse_size(os.environ[ENV])
    return int(SHARE * (physical_memory() or 16 * UNITS["G"]))


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} TiB"


def check_memory(estimate: int, what: str) -> None:
    """Refuse (``InputError``) a run whose estimate exceeds :func:`memory_limit`."""
    limit = memory_limit()
    if estimate > limit:
        raise InputError(f"{what} would need about {human(estimate)} of memory, more than the {human(limit)} "
                         f"allowed ({ENV} raises the limit; 3/4 of the machine's memory by default).")


# -- SAN solutions ------------------------------------------------------------------------------

#: bytes per product-space state of building a descriptor: the reachability search's flag and its
#: frontier's index (int64, all states in the worst case), the diagonal and its corrector (floats),
#: each over the whole product of the automata's states
SAN_BUILD_BYTES = 1 + 8 + 8 + 8


def san_build_bytes(shape: tuple[int, ...]) -> int:
    """Bytes of building the descriptor of automata of ``shape``, before any solution: the
    arrays over the product space (:data:`SAN_BUILD_BYTES` per state). The solution's vectors
    span the reachable states only, known once the descriptor is built."""
    return math.prod(shape) * SAN_BUILD_BYTES


#: CPU seconds per product-space state of building a descriptor: `bench/bench_resources.py` on
#: 2^21 and 2^23 states of independent two-state automata, 2026-11-29, the slower machine (1.9
#: and 2.5 µs a state). A solution's time depends on the rates (how many products) and on the
#: reachable states, known only once the descriptor is built; the progress line then gives it.
SAN_BUILD_SECONDS = 2.5e-6


def check_san(san) -> str | None:
    """Refuse a SAN model (loaded, not built) whose descriptor would not fit in memory, or whose
    building would take longer than the time limit; the sentence to print before building it
    when that will take more than 10 minutes (else None)."""
    shape = tuple(len(states) for states in san.automata.values())
    states = math.prod(shape)
    what = f"{san.source}: the descriptor over {states:.3g} product-space states"
    check_memory(san_build_bytes(shape), what)
    return check_time(states * SAN_BUILD_SECONDS, f"{what} (building it, at most)", "or give the model fewer states")


#: vectors over the reachable states a solver holds at once: uniformization's and the power
#: method's few (the distribution, the power term, the sum, a product's input and output); the
#: Krylov transient's basis of ``krylov_dim`` + 2; GMRES's of its restart (40) + 2
SAN_VECTORS = {"uniformization": 6, "power": 6, "krylov": None, "gmres": 42}


def san_solution_bytes(reachable: int, methods, krylov_dim: int) -> int:
    """Bytes of the vectors a solution by ``methods`` (the transient and steady-state methods
    that run) keeps over ``reachable`` states (:data:`SAN_VECTORS`)."""
    sizes = [SAN_VECTORS.get(m, 6) for m in methods]     # an unknown method is refused by its solver
    vectors = max((krylov_dim + 2 if size is None else size) for size in sizes) if sizes else 0
    return 8 * reachable * vectors


def check_san_solution(desc, methods, krylov_dim: int, where: str) -> None:
    """Refuse, once the descriptor is built and before any product, a solution whose vectors and
    descriptor would not fit in memory."""
    need = desc.nbytes() + san_solution_bytes(desc.space.size, methods, krylov_dim)
    check_memory(need, f"{where}: the {' and '.join(methods)} solution over {desc.space.size:,} reachable states")


# -- simulations --------------------------------------------------------------------------------

#: per model, the parameter its memory grows with and the bytes per unit of it: the growth of the
#: peak resident memory of one replication between two sizes ten times apart (numa 2,000 and
#: 20,000 tasks on corr05-4x2: 5.6 kB a task; cluster 1,000 and 10,000 batch processes: 0.92 kB;
#: pools 2,000 and 20,000 jobs: 0.83 kB; `bench/bench_resources.py`, 2026-11-29), doubled for headroom
MODEL_MEMORY = {"numa": ("n_tasks", 2 * 5_650), "cluster": ("n_procs", 2 * 920), "pools": ("jobs", 2 * 830)}


def model_size(model: str, params: dict) -> int:
    """The value of the parameter ``model``'s state and time grow with (:data:`MODEL_MEMORY`),
    0 for a model without one or a value that is not an integer."""
    value = params.get(MODEL_MEMORY[model][0]) if model in MODEL_MEMORY else None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def run_bytes(model: str, params: dict) -> int:
    """Bytes one replication of ``model`` with ``params`` needs beyond the interpreter (0 for a
    model whose state does not grow with a parameter)."""
    return MODEL_MEMORY[model][1] * model_size(model, params) if model in MODEL_MEMORY else 0


def check_run(model: str, params: dict, what: str) -> None:
    """Refuse a replication whose :func:`run_bytes` exceeds the memory limit."""
    if model in MODEL_MEMORY:
        key = MODEL_MEMORY[model][0]
        check_memory(run_bytes(model, params), f"{what} ({key} = {params.get(key):,})")


# -- time ---------------------------------------------------------------------------------------

TIME_ENV = "SIMCORE_TIME_LIMIT"
TIME_LIMIT = 24 * 3600.0     # CPU seconds one `simcore run` may plan to take: split a longer one
ANNOUNCE = 600.0             # an estimate above this is printed before the run starts
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

#: per model, a replication of one policy measured at one size of the parameter of MODEL_MEMORY:
#: (size, CPU seconds, growth exponent from that size and one ten times smaller, at least 1).
#: `bench/bench_resources.py`, 2026-11-29, on a machine running bare SimPy at 0.57 M events/s
#: (about 2.5 times slower than the build machine): numa on corr05-4x2 3.55 s at 20,000 tasks
#: (exponent 0.95); cluster batch processes of U(0, 600) s 11.4 s at 20,000 (1.43: a balancing
#: round scans every process); pools 2.61 s at 20,000 jobs (0.84)
MODEL_TIME = {"numa": (20_000, 3.55, 1.0), "cluster": (20_000, 11.4, 1.43), "pools": (20_000, 2.61, 1.0)}


def parse_duration(text: str, where: str = TIME_ENV) -> float:
    """'90m', '24h', '2d', '30s' or a number of seconds, as seconds; anything else one sentence."""
    raw = str(text).strip().lower()
    unit = raw[-1:] if raw[-1:] in DURATION_UNITS else ""
    try:
        value = float(raw[: len(raw) - len(unit)]) * DURATION_UNITS.get(unit, 1)
    except ValueError:
        raise InputError(f"{where}: '{text}' is not a duration (seconds, or a number with s, m, h or d).") from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: '{text}' must be a positive duration.")
    return value


def time_limit() -> float:
    """CPU seconds one run may plan to take: ``SIMCORE_TIME_LIMIT`` if set, else 24 hours."""
    return parse_duration(os.environ[TIME_ENV]) if os.environ.get(TIME_ENV) else TIME_LIMIT


def replication_seconds(model: str, params: dict) -> float:
    """CPU seconds one replication of one policy of ``model`` takes, extrapolated from
    :data:`MODEL_TIME` (0 for a model without an entry or a size it does not grow with)."""
    if model not in MODEL_TIME:
        return 0.0
    size, seconds, exponent = MODEL_TIME[model]
    return seconds * (model_size(model, params) / size) ** exponent


def duration(seconds: float) -> str:
    """'45 s', '12 min', '3.2 h' or '5.7 days'."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 2 * 86400 else f"{seconds / 86400:.1f} days"


def check_time(estimate: float, what: str, advice: str = "or run fewer cells or replications per call") -> str | None:
    """Refuse (``InputError``) a run whose estimated CPU time exceeds :func:`time_limit`; the
    sentence to print before it starts if the estimate passes :data:`ANNOUNCE`, else None."""
    limit = time_limit()
    said = f"{what} would take about {duration(estimate)} of CPU (extrapolated from bench/bench_resources.py)"
    if estimate > limit:
        raise InputError(f"{said}, more than the {duration(limit)} allowed ({TIME_ENV} raises the limit; {advice}).")
    return f"{said}." if estimate > ANNOUNCE else None
