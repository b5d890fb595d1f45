"""numba's cache keyed per kernel file (simcore.core.jit): each kernel file is cached in a folder
named by the hash of its own sources and of the kernel files it imports, so an edit recompiles the
kernels that read the edited file and no others."""

import ast
import shutil
from pathlib import Path

import numba
import pytest
from numba.core import caching, config

from simcore.core import jit, layout
from simcore.core.jit import KernelCacheLocator, kernel_sources, simcore_imports, sources_digest

ROOT = jit.PACKAGE

# every kernel file and what it reads, by hand from their import lines
CAL, SEARCH, PCG = "core/calendar_kernels.py", "models/numa/search_kernels.py", "core/pcg64_kernels.py"
N = "models/numa/"
SLOTS = N + "slots_kernels.py"
TIMING = {N + "timing_kernels.py", SEARCH, SLOTS}
NUMA_LAYOUT = {N + "layout_kernels.py", CAL, SLOTS}
NUMA_TASK = {N + "task_kernels.py", SLOTS, PCG}
NUMA_RUN = {N + "run_kernels.py", *NUMA_TASK, *NUMA_LAYOUT}
NUMA_HOOK = {N + "hook_kernels.py", N + "runqueue_kernels.py", *NUMA_LAYOUT, *TIMING}
NUMA_MIGRATE = {N + "migrate_kernels.py", *NUMA_RUN, *NUMA_HOOK}
C = "models/cluster/"
CSLOTS = C + "slots_kernels.py"
PSLOTS = "models/pools/slots_kernels.py"
CLUSTER_LAYOUT = {C + "layout_kernels.py", CAL, CSLOTS}
SHARING = {C + "sharing_kernels.py", *CLUSTER_LAYOUT}
KNOWLEDGE = {C + "knowledge_kernels.py", *SHARING}
GROUPS = {
    CAL: {CAL},
    PCG: {PCG},
    SEARCH: {SEARCH},
    SLOTS: {SLOTS},
    N + "timing_kernels.py": TIMING,
    N + "layout_kernels.py": NUMA_LAYOUT,
    N + "task_kernels.py": NUMA_TASK,
    N + "runqueue_kernels.py": {N + "runqueue_kernels.py", *NUMA_LAYOUT, SEARCH},
    N + "hook_kernels.py": NUMA_HOOK,
    N + "run_kernels.py": NUMA_RUN,
    N + "migrate_kernels.py": NUMA_MIGRATE,
    N + "scheduler_kernels.py": {N + "scheduler_kernels.py", *NUMA_MIGRATE},
    N + "balance_kernels.py": {N + "balance_kernels.py", N + "scheduler_kernels.py", *NUMA_MIGRATE},
    N + "system_kernels.py": {N + "system_kernels.py", N + "balance_kernels.py", N + "scheduler_kernels.py",
                              *NUMA_MIGRATE},
    CSLOTS: {CSLOTS},
    C + "layout_kernels.py": CLUSTER_LAYOUT,
    C + "sharing_kernels.py": SHARING,
    C + "knowledge_kernels.py": KNOWLEDGE,
    C + "mosix_kernels.py": {C + "mosix_kernels.py", *SHARING},
    C + "opportunity_kernels.py": {C + "opportunity_kernels.py", *KNOWLEDGE},
    C + "run_kernels.py": {C + "run_kernels.py", C + "opportunity_kernels.py", C + "mosix_kernels.py", *KNOWLEDGE},
    PSLOTS: {PSLOTS},
    "models/pools/pool_kernels.py": {"models/pools/pool_kernels.py", CAL, PSLOTS},
    "san/walk_kernel.py": {"san/walk_kernel.py", "san/slots_kernels.py"},
}


def _takes_jit(path: Path) -> bool:
    """Whether ``path`` imports simcore.core.jit (``from simcore.core.jit import ...`` or
    ``from simcore.core import jit``)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module == "simcore.core.jit" or (
                node.module == "simcore.core" and any(a.name == "jit" for a in node.names))):
            return True
    return False


def _kernel_files(root: Path) -> set[str]:
    """The files under ``root`` that take their compiler from simcore.core.jit."""
    return {
        p.relative_to(root).as_posix() for p in root.rglob("*.py") if "__pycache__" not in p.parts and _takes_jit(p)
    }


def test_the_locator_relies_on_this_numba():
    """The locator subclasses numba's user-folder locator and is put first in the list numba
    tries: internals of numba 0.68.1, which this test pins."""
    assert numba.__version__ == "0.68.1"
    assert caching.CacheImpl._locator_classes[0] is KernelCacheLocator
    assert issubclass(KernelCacheLocator, caching.UserProvidedCacheLocator)
    for name in ("from_function", "get_cache_path", "get_source_stamp", "ensure_cache_path"):
        assert callable(getattr(caching.UserProvidedCacheLocator, name))


def test_every_kernel_file_reads_only_kernel_files():
    """No kernel imports outside the kernels and the generated slots modules (constants alone where
    a table has no blocks: the SAN walker's): what a kernel is compiled from is what its digest
    hashes. The groups are the hand-written ones above."""
    kernels = _kernel_files(ROOT)
    assert kernels == set(GROUPS)
    generated = {(t.parent / "slots_kernels.py").relative_to(ROOT).as_posix() for t in layout.tables()}
    assert "san/slots_kernels.py" in generated - kernels
    for name, group in GROUPS.items():
        assert {p.relative_to(ROOT).as_posix() for p in kernel_sources(ROOT / name)} == group
        assert {p.relative_to(ROOT).as_posix() for p in simcore_imports(ROOT / name)} <= kernels | generated


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "simcore"
    for name in {*GROUPS, *(f for group in GROUPS.values() for f in group), "core/jit.py"}:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    return root


@pytest.mark.parametrize(
    "edited", ["models/numa/search_kernels.py", "core/calendar_kernels.py", "models/pools/pool_kernels.py"]
)
def test_an_edit_moves_the_digests_of_the_files_that_read_it_and_no_others(tmp_path, edited):
    root = _copy(tmp_path)
    before = {name: sources_digest(root / name, root) for name in GROUPS}
    assert before == {name: sources_digest(root / name, root) for name in GROUPS}    # nothing edited
    (root / edited).write_text((root / edited).read_text() + "\n# an edit\n")
    after = {name: sources_digest(root / name, root) for name in GROUPS}
    moved = {name for name in GROUPS if after[name] != before[name]}
    assert moved == {name for name, group in GROUPS.items() if edited in group}


def _outside(x):
    return x


def test_the_locator_keys_kernels_of_simcore_only(tmp_path, monkeypatch):
    """A kernel of simcore is kept in <folder>_<file>-<digest> under NUMBA_CACHE_DIR and stamped
    with its digest; a function of any other file is left to numba's own locators."""
    from simcore.models.numa import search_kernels

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    path = ROOT / "models" / "numa" / "search_kernels.py"
    locator = KernelCacheLocator.from_function(search_kernels.busiest_group.py_func, str(path))
    digest = sources_digest(path)
    assert Path(locator.get_cache_path()) == tmp_path / f"numa_search_kernels-{digest[:16]}"
    assert locator.get_source_stamp() == digest
    assert KernelCacheLocator.from_function(_outside, __file__) is None


def test_the_pools_rules_run_as_python_with_the_compiler_off():
    """``NUMBA_DISABLE_JIT=1`` (a debugger; mutation runs, scripts/mutation.py) runs pool_kernels'
    plain functions as Python: hand-derived scenarios pass on them, in a fresh process."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    tests = ["switch_costs", "round_robin_of_two_jobs", "rounding_remainder", "finishing_together", "home_pool_of_each"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pools_model.py",
                           "-k", " or ".join(tests), "-c", "pyproject.toml", "--rootdir", str(ROOT.parent)],
                          cwd=ROOT.parent, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "8 passed" in done.stdout, done.stdout[-500:]
    probe = "import numba; from simcore.models.pools import pool_kernels as PK; print(type(PK.head).__name__)"
    kind = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    assert kind == "function"


def test_the_cluster_rules_run_as_python_with_the_compiler_off():
    """The cluster's kernels are plain functions too: hand-derived scenarios of every policy pass
    on them as Python, in a fresh process."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    tests = ["thrashing_divides", "mosix_moves_one_of_two", "enhanced_mosix_greedy_rule", "optimal_moves_the_process",
             "drop_resets_memory", "enhanced_pvm_counts_load"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_cluster_behaviour.py",
            "-k",
            " or ".join(tests),
            "-c",
            "pyproject.toml",
            "--rootdir",
            str(ROOT.parent),
        ],
        cwd=ROOT.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "6 passed" in done.stdout, done.stdout[-500:]


def test_the_numa_system_runs_as_python_with_the_compiler_off():
    """The NUMA system's kernels are plain functions (its balancer's searches and timing are still
    ``@njit``, which the switch turns into Python as well): a replication gives the same metrics,
    to the bit, with the compiler off, in a fresh process; the lowest set bit that numba takes
    from an intrinsic is counted in Python then."""
    import os
    import subprocess
    import sys

    run = ("import hashlib, json; from simcore.core.rng import Streams, replication_seed; "
           "from simcore.models.numa import run_replication; "
           "out = run_replication({'topology': 'corr05-4x2', 'n_tasks': 40}, ['linux-2level', 'conservative-hard'], "
           "Streams(replication_seed(2024, 'nojit', 0, 0))); "
           "from simcore.models.numa import layout_kernels as L; "
           "print(type(L.lowbit).__name__, L.lowbit(12), L.lowbit(1 << 40), "
           "hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest())")
    outs = [subprocess.run([sys.executable, "-c", run], env={**os.environ, "NUMBA_DISABLE_JIT": flag},
                           capture_output=True, text=True, check=True).stdout.split() for flag in ("0", "1")]
    assert outs[0][0] == "CPUDispatcher" and outs[1][0] == "function"
    assert outs[0][1:] == outs[1][1:] and outs[1][1:3] == ["2", "40"]


def test_a_job_compiles_into_and_loads_from_that_folder(tmp_path):
    """A fresh process (no NUMBA_CACHE_DIR) that imports simcore caches the kernels of a compiled
    run under XDG_CACHE_HOME/numa-lb-repro/numba, each kernel file in <folder>_<file>-<hash of its
    sources> (simcore.core.jit); where that folder cannot be made (XDG_CACHE_HOME is a file),
    under the temporary folder, with one warning."""
    import os
    import subprocess
    import sys

    import simcore
    from simcore.core.jit import sources_digest

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"XDG_CACHE_HOME": str(tmp_path)}
    code = (
        "import os, simcore\n"
        "from simcore.core.rng import Streams, replication_seed\n"
        "from simcore.models.numa import run_replication\n"
        "run_replication({'topology': 'corr05-4x2', 'n_tasks': 10}, ['linux-2level'], Streams(replication_seed(1, 'c', "
        "0, 0)))\n"
        "print(os.environ['NUMBA_CACHE_DIR'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    assert Path(out) == tmp_path / "numa-lb-repro" / "numba"
    timing = Path(simcore.__file__).parent / "models" / "numa" / "timing_kernels.py"
    folder = Path(out) / f"numa_timing_kernels-{sources_digest(timing)[:16]}"
    assert any(p.suffix == ".nbi" for p in folder.iterdir())
    (tmp_path / "file").write_text("")
    env["XDG_CACHE_HOME"], env["TMPDIR"] = str(tmp_path / "file"), str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    probe = "import os, simcore; print(os.environ.get('NUMBA_CACHE_DIR', 'unset'))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert Path(done.stdout.split()[-1]).is_relative_to(tmp_path / "tmp")
    assert done.stderr.count("\n") == 1 and "cannot be written; the compiled kernels are cached in" in done.stderr


def test_without_a_writable_folder_numba_keeps_its_default_and_a_warning_says_so(tmp_path, monkeypatch):
    """Both candidate folders are files (so not even root can make them): no NUMBA_CACHE_DIR is
    set, and one warning names them; the first writable one is taken, silently when it is first."""
    import os

    import simcore

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    numba = __import__("sys").modules.get("numba")
    if numba is not None:
        monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    for name in ("a", "b"):
        (tmp_path / name).write_text("")
    said = []
    assert simcore._use_numba_cache([tmp_path / "a", tmp_path / "b"], said.append) is None
    assert "NUMBA_CACHE_DIR" not in os.environ and len(said) == 1 and "none of" in said[0]
    said.clear()
    path = simcore._use_numba_cache([tmp_path / "c", tmp_path / "d"], said.append)
    assert path == tmp_path / "c" and os.environ["NUMBA_CACHE_DIR"] == str(path) and not said
