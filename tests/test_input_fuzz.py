"""Random and hostile input, property-based (Hypothesis): experiment specs, topology files, SAN
model files, ``--set`` values and outputs that cannot be written. Whatever they hold, ``simcore`` either succeeds or
exits 2 with exactly one line on stderr and writes no file; never a traceback, never exit code 1.

Derandomized with bounded examples, so the suite is deterministic and quick; values that are
valid but would make a run long (a million tasks) are kept out of the runs that really simulate.
``SIMCORE_FUZZ_DEEP=N`` runs N random (not derandomized) examples per property instead, and
reports any example slower than 30 s.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from simcore.cli import main
from simcore.models import get_model
from simcore.vocabulary.domains import Choice

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS, PRESETS, CONFIG = ROOT / "config/experiments", ROOT / "config/presets", ROOT / "config/config.yaml"
DEEP = int(os.environ.get("SIMCORE_FUZZ_DEEP", "0"))
FUZZ = settings(max_examples=DEEP or 40, deadline=30_000 if DEEP else None, derandomize=not DEEP, database=None,
                suppress_health_check=[HealthCheck.too_slow])

SCALARS = st.one_of(
    st.integers(0, 60), st.floats(0.01, 1000), st.sampled_from([0, 0.0, -1, -0.5, 1e-300, 1e308, 10**20]),
    st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=10), st.sampled_from(["n", "exec", "home", "batch", "uniform", "2", "corr05-4x1", "../x", "-1"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
MOSTLY_SCALARS = st.one_of(SCALARS, SCALARS, SCALARS, VALUES)
GARBAGE = st.one_of(st.binary(max_size=64), st.text(max_size=64).map(str.encode))


@contextmanager
def workdir():
    with tempfile.TemporaryDirectory(prefix="simcore-fuzz-") as tmp:
        yield Path(tmp)


def outcome(work: Path, *args) -> tuple[int, str]:
    """Run ``simcore ARGS`` in-process; check the contract; (exit code, stderr)."""
    before = sorted(work.rglob("*"))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--specs", str(EXPERIMENTS), "--config", str(CONFIG), *map(str, args)])
    text = err.getvalue()
    event(f"exit {code}")
    assert "Traceback" not in text and code in (0, 2), (code, text)
    if code == 2:
        assert text.count("\n") == 1 and text.startswith("simcore"), text
        assert sorted(work.rglob("*")) == before, "a refused input left a file behind"
    return code, text


def dump(data) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


# -- experiment specs ---------------------------------------------------------------------------
SPECS = ["barak96-fig2", "amir-table2", "amir-fig1", "corr05-fig9", "mehta-table2"]


def parameter_names(spec: str) -> list[str]:
    model = yaml.safe_load((EXPERIMENTS / f"{spec}.yaml").read_text())["model"]
    return sorted(get_model(model).PARAMETERS)


def parameter_name(spec: str) -> st.SearchStrategy:
    """Mostly a parameter of the spec's model, sometimes any text."""
    return st.one_of(*[st.sampled_from(parameter_names(spec))] * 4, st.text(max_size=8))


@st.composite
def mutated_spec(draw):
    """(spec id, file bytes): a real spec with one section, key or the whole text made hostile."""
    name = draw(st.sampled_from(SPECS))
    data = yaml.safe_load((EXPERIMENTS / f"{name}.yaml").read_text())
    key = draw(parameter_name(name))
    value = draw(MOSTLY_SCALARS)
    how = draw(st.sampled_from(["fixed", "assumption", "assumption-raw", "grid", "grid-list", "top", "garbage"]))
    if how == "garbage":
        return name, draw(GARBAGE)
    if how == "top":
        data[draw(st.sampled_from(["data_from", "preset", "scales", "policies", "id", "model", "grid", "fixed"]))] = (
            value
        )
    else:
        section = {"fixed": "fixed", "grid": "grid", "grid-list": "grid"}.get(how, "assumptions")
        entry = {"assumption": {"value": value, "why": "fuzz"}, "grid-list": [value]}.get(how, value)
        data[section] = {**(data.get(section) or {}), key: entry}
    return name, dump(data).encode()


@FUZZ
@given(mutated_spec())
def test_a_hostile_spec_validates_or_is_refused_in_one_line(case):
    name, content = case
    with workdir() as work:
        shutil.copytree(PRESETS, work / "presets")
        (work / "experiments").mkdir()
        shutil.copy(EXPERIMENTS / "amir-table2.yaml", work / "experiments")  # the data_from source
        path = work / "experiments" / f"{name}.yaml"
        path.write_bytes(content)
        outcome(work, "validate", path)


# -- --set ----------------------------------------------------------------------------------------
SET_TEXT = st.one_of(
    MOSTLY_SCALARS.map(lambda v: yaml.safe_dump(v, default_flow_style=True).strip().removesuffix("...").strip()),
    st.text(max_size=16),
)


@FUZZ
@given(spec=st.sampled_from(["barak96-table1", "corr05-fig9"]), data=st.data())
def test_a_hostile_set_value_runs_or_is_refused_in_one_line(spec, data):
    """Any text for any parameter. A value that passes is run with its model's replication
    replaced by the parameter check alone, since a valid value may ask for a long run (the
    runs with real simulations are below)."""
    key = data.draw(parameter_name(spec))
    text = data.draw(SET_TEXT)
    model = get_model(yaml.safe_load((EXPERIMENTS / f"{spec}.yaml").read_text())["model"])
    real = model.run_replication

    def checked_only(params, policies, streams):
        model.full_params(params)
        return {p: {m: 1.0 for m in model.METRICS} for p in policies}

    model.run_replication = checked_only
    try:
        with workdir() as work:
            out = work / "raw.parquet"
            code, _ = outcome(work, "run", spec, "--cell", 0, "--reps", "0:1", "--out", out, "--set", f"{key}={text}")
            assert (code == 0) == out.exists()
    finally:
        model.run_replication = real


def moderate(param) -> st.SearchStrategy:
    """Values around a parameter's domain that keep a tiny run tiny."""
    domain = param.domain
    choices = [v for d in getattr(domain, "options", (domain,)) if isinstance(d, Choice) for v in d.values]
    return st.one_of(st.sampled_from(choices or [None]), st.integers(-3, 12), st.booleans(),
                     st.sampled_from([0.0, -1.5, 0.05, 0.5, 1.0, 1.5, 7.25, 300.0, float("nan"), float("inf")]))


TINY_RUN = {"barak96-table1": ["--cell", 0], "corr05-fig9": ["--cell", 0, "--set", "n_tasks=15"]}


@settings(FUZZ, max_examples=DEEP or 25)
@given(spec=st.sampled_from(sorted(TINY_RUN)), data=st.data())
def test_a_moderate_set_value_really_runs_or_is_refused_in_one_line(spec, data):
    model = get_model(yaml.safe_load((EXPERIMENTS / f"{spec}.yaml").read_text())["model"])
    key = data.draw(st.sampled_from([k for k in parameter_names(spec)
                                     if k not in ("n_tasks", "n_procs", "check_invariants", "topology", "machines")]))
    value = data.draw(moderate(model.PARAMETERS[key]))
    with workdir() as work:
        out = work / "raw.parquet"
        code, _ = outcome(
            work,
            "run",
            spec,
            *TINY_RUN[spec],
            "--reps",
            "0:1",
            "--scale",
            "smoke",
            "--out",
            out,
            "--set",
            f"{key}={yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}",
        )
        assert (code == 0) == out.exists()


# -- topology files -------------------------------------------------------------------------------
ODD_ENTRIES = st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e300, 255, 256, 10.0, 2**70])
MATRIX = st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(st.integers(-2, 40) | ODD_ENTRIES | VALUES,
                                                               min_size=n, max_size=n),
                                                     min_size=n, max_size=n))
SYMMETRIC = st.integers(1, 4).flatmap(lambda n: st.lists(st.integers(11, 40), min_size=n * n, max_size=n * n).map(
    lambda xs: [[10 if i == j else xs[min(i, j) * n + max(i, j)] for j in range(n)] for i in range(n)]))


@st.composite
def topology_file(draw) -> bytes:
    if draw(st.booleans()) and draw(st.booleans()):
        return draw(GARBAGE)
    data = {"name": draw(st.text(max_size=8) | VALUES), "description": "d", "source": "s",
            "cpus_per_node": draw(st.integers(-1, 3) | st.lists(st.integers(-1, 3), max_size=4) | VALUES),
            "distances": draw(SYMMETRIC | MATRIX | VALUES)}
    for key in draw(st.lists(st.sampled_from(sorted(data)), max_size=1)):
        del data[key]
    if draw(st.booleans()):
        data[draw(st.text(max_size=5))] = draw(VALUES)
    return dump(data).encode()


@FUZZ
@given(topology_file())
def test_a_hostile_topology_is_shown_or_refused_in_one_line(content):
    with workdir() as work:
        path = work / "machine.yaml"
        path.write_bytes(content)
        outcome(work, "topology", path, "--catalog", work)


# -- SAN model files ------------------------------------------------------------------------------
EXPR = st.one_of(st.text(max_size=12), st.sampled_from(
    ["a", "a * (A == s1)", "1 / (A == s0)", "min(a, 2) - 3", "count(A*, s1)", "B", "-a", "a / 0", "not A", "x + ",
     "max()", "1e400", "(A == s2) * b"]))
# numbers that keep a valid model quick to solve (a rate of 1e7 is valid, and slow), plus hostile ones
SAN_NUMBERS = st.one_of(st.floats(-1, 1000), st.integers(-5, 1000),
                        st.sampled_from([0, 1e-300, 1e308, float("nan"), float("inf"), float("-inf")]))
SAN_VALUES = st.one_of(SAN_NUMBERS, SAN_NUMBERS, st.booleans(), st.none(), st.text(max_size=6),
                       st.lists(SAN_NUMBERS, max_size=2))
RATES = st.one_of(EXPR, SAN_VALUES)


@st.composite
def san_file(draw) -> bytes:
    if draw(st.integers(0, 4)) == 0:
        return draw(GARBAGE)
    if draw(st.booleans()):  # a generated (corr05) model on a two-node machine
        gen = {"model": "corr05", "topology": "TOPOLOGY", "levels": draw(st.sampled_from(["2", "n"]) | VALUES)}
        for key in draw(st.lists(st.sampled_from(["home_cpu", "node_init", "cpus"]), max_size=2)):
            gen[key] = draw(st.integers(-1, 3) | st.sampled_from(["x86_64-2.6.12", "sparc"]) | SAN_VALUES)
        params = draw(st.dictionaries(st.sampled_from(["demand", "pick", "preempt", "movable_tasks", "failure", "zz"]),
                                      st.floats(-1, 3) | SAN_VALUES, max_size=2))
        return dump({"generator": gen, "parameters": params}).encode()
    automata = {"A": ["s0", "s1", "s2"], "B": ["u", "v"]}
    local = [
        {
            "automaton": draw(st.sampled_from(["A", "B", "C"])),
            "from": draw(st.sampled_from(["s0", "s1", "u", "q"])),
            "to": draw(st.sampled_from(["s1", "s2", "v"])),
            "rate": draw(RATES),
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    data = {"parameters": draw(st.dictionaries(st.sampled_from(["a", "b", "A", "9x"]), SAN_VALUES, max_size=2)),
            "automata": draw(st.just(automata) | VALUES), "local": local,
            "synchronizing": [{"name": "go", "rate": draw(RATES),
                               "transitions": {"A": [["s0", "s1", draw(st.floats(-0.5, 1.5) | SAN_VALUES)]],
                                               "B": [["u", "v"]]}}],
            "measures": {"m": draw(EXPR)}}
    return dump(data).encode()


@FUZZ
@given(san_file())
def test_a_hostile_san_model_is_solved_or_refused_in_one_line(content):
    with workdir() as work:
        (work / "two.yaml").write_text("name: two\ndescription: d\nsource: s\ncpus_per_node: 1\n"
                                       "distances: [[10, 20], [20, 10]]\n")
        path = work / "model.yaml"
        path.write_bytes(content.replace(b"TOPOLOGY", str(work / "two.yaml").encode()))
        out = work / "out.csv"
        code, _ = outcome(work, "san", path, "--times", "0:1:0.5", "--out", out)
        assert (code == 0) == out.exists()


# -- outputs simcore cannot write -----------------------------------------------------------------
REFERENCE = ROOT / "results/reference"
# a command per kind of output option, with inputs that would let it succeed: OUT is the output
WRITERS = [("san", ROOT / "config/san/example.yaml", "--times", "0:1:0.5", "--out", "OUT"),
           ("run", "amir-table2", "--cell", 0, "--reps", "0:1", "--scale", "smoke", "--out", "OUT"),
           ("table", "amir-table2", "--results", REFERENCE, "--out", "OUT"),
           ("report-macros", "--results", REFERENCE, "--reference", REFERENCE, "--out", "OUT"),
           ("report-from-results", "--results", REFERENCE, "--san", ROOT / "config/san", "--paper", "OUT"),
           ("run-profile", "--jobs", REFERENCE / "jobs-full.csv", "--tex", "WORK/profile.tex", "--figure", "OUT"),
           ("san-report", "--results", REFERENCE / "san", "--out", "OUT")]
NAME = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=8)


@FUZZ
@given(command=st.sampled_from(WRITERS), place=st.sampled_from(["under a file", "/proc", "/sys"]),
       names=st.lists(NAME.filter(lambda n: n not in (".", "..")), min_size=1, max_size=3))
def test_an_output_simcore_cannot_write_is_refused_in_one_line_naming_it(command, place, names):
    """Outputs under a regular file, or in /proc or /sys (where no file can be made, even by
    root): exit 2, one line naming the option and the path, nothing written. Once an internal
    error (exit 1: `PermissionError`, `FileExistsError`, `NotADirectoryError`)."""
    with workdir() as work:
        (work / "file").write_text("a regular file\n")
        base = work / "file" if place == "under a file" else Path(place)
        out = base.joinpath(*names)
        option = command[command.index("OUT") - 1]
        args = [{"OUT": out, "WORK/profile.tex": work / "profile.tex"}.get(a, a) for a in command]
        code, text = outcome(work, *args)
        assert code == 2 and f"simcore: error: {option}: cannot write " in text, text
