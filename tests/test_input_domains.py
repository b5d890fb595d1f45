"""Every bad number refused (issue 10, section 3): each parameter's domain, and the examples of bad
input that once ran, crashed or printed a usage block. Each ends in exit code 2, one sentence on
stderr naming the file (or --set) and the key, and no file written."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
import yaml

from simcore.cli import main
from simcore.core.rng import Streams, replication_seed
from simcore.errors import InputError
from simcore.models import MODELS, Constraint, Metric, Parameter, get_model, select, with_defaults
from simcore.vocabulary.domains import (
    BOOLEAN,
    COUNT,
    NONNEGATIVE,
    POSITIVE,
    PROBABILITY,
    TEXT,
    AnyOf,
    Choice,
    Domain,
    Integer,
    Real,
    Structured,
    records,
    show,
)

BINARY = bytes([0xFF, 0xFE, 0x00, 0x81]) + bytes(range(256))


@pytest.fixture
def cli(capsys, monkeypatch, root):
    """Run ``simcore ARGS`` in-process from the repository: (exit code, stdout, stderr)."""
    monkeypatch.chdir(root)

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def refused(cli, tmp_path):
    """Assert that ``simcore ARGS`` exits 2 with one line naming ``message`` and writes nothing."""

    def check(message: str, *args) -> str:
        before = sorted(tmp_path.rglob("*"))
        code, out, err = cli(*args)
        assert code == 2, (code, err)
        assert err.count("\n") == 1 and err.startswith("simcore") and message in err, err
        assert "Traceback" not in err and "usage:" not in err
        assert sorted(tmp_path.rglob("*")) == before  # no output file, not even a partial one
        return err

    return check


def copy_spec(root, tmp_path, name: str, **changes) -> str:
    """config/experiments/NAME.yaml (and every preset and calibration) copied under tmp_path, with
    top-level sections updated by ``changes`` (e.g. fixed={...}); the copy's path."""
    (tmp_path / "experiments").mkdir(exist_ok=True)
    shutil.copytree(root / "config/presets", tmp_path / "presets", dirs_exist_ok=True)
    shutil.copytree(root / "config/calibration", tmp_path / "calibration", dirs_exist_ok=True)
    data = yaml.safe_load((root / f"config/experiments/{name}.yaml").read_text())
    for key, value in changes.items():
        data[key] = {**(data.get(key) or {}), **value} if isinstance(value, dict) else value
    path = tmp_path / "experiments" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def run_args(spec, tmp_path, *extra):
    return ("run", spec, "--cell", 0, "--reps", "0:1", "--scale", "smoke", "--out", tmp_path / "raw.parquet", *extra)


# -- the examples -----------------------------------------------------------------------

def test_negative_demand_value_in_a_barak96_spec(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "barak96-fig2", fixed={"demand_value": -300})
    refused(f"{spec}: fixed.demand_value = -300 is not a positive real.", *run_args(spec, tmp_path))


def test_negative_single_cpu_scale_in_the_amir_preset_names_the_preset(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "amir-table2")
    preset = tmp_path / "presets/amir.yaml"
    data = yaml.safe_load(preset.read_text())
    data["fixed"]["single_cpu_scale"] = -2
    preset.write_text(yaml.safe_dump(data))
    refused(f"{preset}: fixed.single_cpu_scale = -2 is not a positive real.", *run_args(spec, tmp_path))
    refused(f"{preset}: fixed.single_cpu_scale = -2", "validate", spec)


def test_negative_mean_demand_in_a_numa_spec(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "corr05-fig9", fixed={"mean_demand": -500})
    refused(f"{spec}: fixed.mean_demand = -500 is not a positive real.", *run_args(spec, tmp_path))


def test_nan_in_a_fixed_value_and_in_set(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "corr05-fig9", fixed={"n_nice0": math.nan})
    refused(f"{spec}: fixed.n_nice0 = nan is not a non-negative integer.", *run_args(spec, tmp_path))
    refused(
        "--set n_tasks = nan is not a positive integer.", *run_args("corr05-fig9", tmp_path, "--set", "n_tasks=.nan")
    )
    refused("--set creation_rate = nan is not a positive real.",
            *run_args("corr05-fig9", tmp_path, "--set", "creation_rate=.nan"))
    refused(
        "--set mean_demand = inf is not a positive real.",
        *run_args("corr05-fig9", tmp_path, "--set", "mean_demand=.inf"),
    )


def test_negative_thrashing_factor_in_set(tmp_path, refused):
    refused("--set thrashing_factor = -10 is not a real >= 1.",
            *run_args("amir-table2", tmp_path, "--set", "thrashing_factor=-10"))


def test_zero_creation_rate_in_set(tmp_path, refused):
    refused(
        "--set creation_rate = 0 is not a positive real.",
        *run_args("corr05-fig9", tmp_path, "--set", "creation_rate=0"),
    )


def test_binary_files_are_refused_as_topology_san_model_spec_and_config(tmp_path, refused):
    blob = tmp_path / "blob.yaml"
    blob.write_bytes(BINARY)
    sentence = f"{blob}: is not UTF-8 text"
    refused(sentence, "topology", blob)
    refused(sentence, "san", blob, "--times", "0:1:0.5", "--out", tmp_path / "out.csv")
    refused(sentence, *run_args(blob, tmp_path))
    refused(sentence, "--config", blob, *run_args("corr05-fig9", tmp_path))
    refused(sentence, *run_args("corr05-fig9", tmp_path, "--set", f"topology={blob}", "--set", "n_tasks=10"))
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(blob, specs / "bad-spec.yaml")
    refused(f"{specs / 'bad-spec.yaml'}: is not UTF-8 text", "--specs", specs, "list")


def test_data_from_naming_itself_or_a_cycle(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "amir-fig1", data_from="amir-fig1")
    refused(f"{spec}: key 'data_from': 'amir-fig1' names this experiment itself.", "validate", spec)
    a = copy_spec(root, tmp_path, "amir-fig1", data_from="amir-fig2")
    copy_spec(root, tmp_path, "amir-fig2", data_from="amir-fig1")
    refused(f"{a}: key 'data_from': 'amir-fig2' itself reads another experiment's data.", "validate", a)


def test_data_from_is_an_experiment_id_not_a_path(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "amir-fig1", data_from="../experiments/amir-table2")
    refused(f"{spec}: key 'data_from': '../experiments/amir-table2' is not an experiment id", "validate", spec)
    missing = copy_spec(root, tmp_path, "amir-fig2", data_from="amir-table9")
    refused(f"{missing}: key 'data_from': no experiment 'amir-table9'", "validate", missing)


def test_unknown_cluster_policy_through_the_python_api_names_the_known_ones():
    from simcore.models.cluster import run_replication

    with pytest.raises(InputError) as err:
        run_replication({}, ["pvm", "mosx"], Streams(replication_seed(1, "x", 0, 0)))
    assert not isinstance(err.value, KeyError)
    assert "unknown policy 'mosx' (known: enhanced-mosix, enhanced-pvm, mosix, optimal, pvm, pvm-on-mosix)" in str(
        err.value
    )


def test_an_unknown_choice_of_an_argument_is_one_sentence(tmp_path, refused):
    err = refused("argument --scale: invalid choice: 'huge'", *run_args("amir-table2", tmp_path, "--scale", "huge"))
    assert err.startswith("simcore run: error:")
    refused("the following arguments are required: --out", "run", "amir-table2", "--cell", 0, "--reps", "0:1")
    refused("argument --cell: 'x' is not an integer", "run", "amir-table2", "--cell", "x", "--reps", "0:1",
            "--out", tmp_path / "o.parquet")
    refused("invalid choice: 'frobnicate'", "frobnicate")


# -- more of the same rule --------------------------------------------------------------------

def test_bool_and_float_are_not_integers_and_strings_not_numbers(tmp_path, refused):
    refused(
        "--set n_tasks = True is not a positive integer.", *run_args("corr05-fig9", tmp_path, "--set", "n_tasks=true")
    )
    refused(
        "--set n_tasks = 2.0 is not a positive integer.", *run_args("corr05-fig9", tmp_path, "--set", "n_tasks=2.0")
    )
    refused(
        "--set mean_demand = 'lots' is not a positive real.",
        *run_args("corr05-fig9", tmp_path, "--set", "mean_demand=lots"),
    )
    refused(
        "--set active_balance = 1 is not true or false.",
        *run_args("corr05-fig9", tmp_path, "--set", "active_balance=1"),
    )


def test_bad_values_in_grid_and_assumptions_name_their_key(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "corr05-fig9", grid={"n_tasks": [50, 0]})
    refused(f"{spec}: grid.n_tasks[1] = 0 is not a positive integer.", "validate", spec)
    spec = copy_spec(root, tmp_path, "barak96-fig2", assumptions={"migration_cost": {"value": -1, "why": "x"}})
    refused(f"{spec}: assumptions.migration_cost.value = -1 is not a non-negative real.", "validate", spec)
    spec = copy_spec(root, tmp_path, "barak96-fig2",
                     assumptions={"machines": {"value": [{"count": 2, "speed": 0, "memory_mb": 64}], "why": "x"}})
    refused(
        "assumptions.machines.value = [{'count': 2, 'speed': 0, 'memory_mb': 64}] is not a list of machine groups "
        "{name, count >= 1, speed > 0, memory_mb > 0} (item 0: speed = 0 is not a positive real).",
        "validate",
        spec,
    )


def test_relations_between_parameters_are_checked(root, tmp_path, refused):
    """nice_min > nice_max once made NumPy raise (exit 1); demand_min > demand_max drew from a reversed range."""
    refused("nice_min <= nice_max does not hold (nice_min = 15, nice_max = 3).",
            *run_args("corr05-fig9", tmp_path, "--set", "nice_min=15", "--set", "nice_max=3"))
    spec = copy_spec(root, tmp_path, "corr05-fig9", fixed={"demand_min": 500, "demand_max": 50})
    refused(f"{spec}: demand_min <= demand_max does not hold", "validate", spec)
    refused("a positive mean burst", *run_args("corr05-fig9", tmp_path, "--set", "nice_min=-20", "--set",
                                               "burst_nice_ms=50"))
    refused(
        "node_min_interval <= node_max_interval", *run_args("corr05-fig9", tmp_path, "--set", "node_min_interval=400")
    )


def test_python_api_checks_domains_and_relations_before_running():
    from simcore.models.numa import full_params

    with pytest.raises(InputError, match=r"^model 'numa': parameter creation_rate = 0 is not a positive real\.$"):
        full_params({"creation_rate": 0})
    with pytest.raises(InputError, match=r"model 'numa': nice_min <= nice_max does not hold"):
        full_params({"nice_min": 5, "nice_max": 4})
    assert full_params({"n_tasks": np.int64(5), "mean_demand": np.float64(2.5)})["n_tasks"] == 5  # NumPy scalars


def test_params_shows_type_and_domain(cli):
    code, out, _ = cli("params", "cluster")
    assert code == 0
    assert "thrashing_factor = 10.0  (real >= 1)" in out
    assert "min_residency = 1.0  (non-negative real; policies mosix, pvm-on-mosix, enhanced-mosix)" in out
    code, out, _ = cli("params", "numa")
    assert "n_tasks = 200  (positive integer)" in out and "io_task_fraction = 1.0  (real in [0, 1])" in out
    assert "cpu_busy_factor = None  (null or a positive integer)" in out
    assert "creation_cpu = 'random'  ('random', 'round-robin' or a non-negative integer)" in out


def test_corr05_san_accepts_a_preempt_probability_of_zero():
    """preempt = 0 (P's wake-up never preempts) is in [0, 1]; it once made a move of probability 0."""
    from simcore.san.corr05 import build

    san = build("corr05-4x1", "2", {"preempt": 0})
    wake = next(e for e in san.events if e.name == "wakeup0")
    assert wake.moves["Cpu0"][0] == ("EN", "EN", 1.0)


# -- the vocabulary -----------------------------------------------------------------------------

@pytest.mark.parametrize("domain, inside, outside", [
    (POSITIVE, [1e-300, 3, 2.5, np.float64(1.0), np.int32(4)], [0, -1, math.nan, math.inf, True, "1", None, [1]]),
    (NONNEGATIVE, [0, 0.0, 7], [-1e-9, -math.inf, math.nan, False]),
    (PROBABILITY, [0, 0.5, 1], [-0.1, 1.01, math.nan]),
    (Real(gt=0, le=1), [1e-9, 1], [0, 1.5]),
    (Real(), [-1e300, 0, 1e300], [math.inf, math.nan, "0"]),
    (COUNT, [1, 200, np.int64(3)], [0, -1, 1.0, 2.5, True, math.nan, "3"]),
    (Integer(ge=-20, le=19), [-20, 0, 19], [-21, 20, 0.0]),
    (BOOLEAN, [True, False], [0, 1, "true", None]),
    (Choice("a", "b"), ["a", "b"], ["c", "A", None, 0, ["a"]]),
    (Choice(None), [None], [0, "", "null"]),
    (AnyOf(Choice("n"), Real(gt=1)), ["n", 1.5, 2], ["m", 1, 0.5, math.nan]),
])
def test_domains_admit_inside_and_refuse_outside(domain, inside, outside):
    assert all(domain.problem(v) is None for v in inside), [v for v in inside if domain.problem(v)]
    assert all(domain.problem(v).startswith("is not ") for v in outside), [v for v in outside if not domain.problem(v)]


def test_domains_describe_themselves():
    assert [d.describe() for d in (POSITIVE, NONNEGATIVE, PROBABILITY, Real(gt=0, le=1), Real(), Real(ge=1), COUNT,
                                   Integer(ge=0), Integer(ge=-20, le=19), BOOLEAN, Choice("a", "b", "c"))] == [
        "positive real", "non-negative real", "real in [0, 1]", "real in (0, 1]", "finite real", "real >= 1",
        "positive integer", "non-negative integer", "integer in [-20, 19]", "true or false", "'a', 'b' or 'c'"]
    assert AnyOf(Choice(None), COUNT).describe() == "null or a positive integer"


def test_records_check_each_item():
    check = records({"speed": (POSITIVE, True), "count": (COUNT, False)})
    domain = Structured("list of groups", check)
    assert domain.problem([{"speed": 1}, {"speed": 2, "count": 3}]) is None
    assert domain.problem([]) == "is not a list of groups (not a non-empty list)"
    assert domain.problem([{"count": 1}]) == "is not a list of groups (item 0 has no key 'speed')"
    assert (
        domain.problem([{"speed": 1, "sped": 2}])
        == "is not a list of groups (item 0 has unknown key 'sped' (known: speed, count))"
    )
    assert (
        domain.problem([{"speed": 1, "count": True}])
        == "is not a list of groups (item 0: count = True is not a positive integer)"
    )
    assert domain.admits([{"speed": 1}]) and not domain.admits([{"speed": 1}, "x"])


@pytest.mark.parametrize("value, problem", [
    ([{"speed": 1, 2: "x", "b": 0}], "item 0 has unknown key 2 (known: count, speed)"),  # keys of mixed types
    ([{"speed": 0}], "item 0: speed = 0 is not a positive real"),  # checked after the absent optional count
    ([{}], "item 0 has no key 'speed'"),
    ([{"speed": 1}, ["speed", 1]], "item 1 is not a mapping"),
    ("speed", "not a non-empty list"),
])
def test_records_report_the_first_problem_of_any_item(value, problem):
    assert records({"count": (COUNT, False), "speed": (POSITIVE, True)})(value) == problem


@pytest.mark.parametrize("value, text", [
    ("x" * 58, "'" + "x" * 58 + "'"),  # a repr of 60 characters is shown whole
    ("x" * 59, "'" + "x" * 56 + "..."),  # one of 61 is cut to 60, the ellipsis included
    (None, "None"),
])
def test_show_cuts_a_long_repr_to_sixty_characters(value, text):
    assert show(value) == text


def test_show_takes_a_width():
    assert show(list(range(10)), width=10) == "[0, 1, ..."


def test_listed_domains_are_equal_when_of_one_kind_with_equal_items():
    """Two declarations of one parameter (a model's and a policy's) are compared by value."""
    assert Choice("a", "b") == Choice("a", "b") and hash(Choice("a", "b")) == hash(Choice("a", "b"))
    assert AnyOf(Choice(None), COUNT) == AnyOf(Choice(None), Integer(ge=1))
    assert Parameter(1, "d", Choice("a")) == Parameter(1, "d", Choice("a"))
    assert Choice("a", "b") != Choice("b", "a")
    assert Choice("a") != AnyOf("a") and Choice("a") != ("a",)
    assert len({Choice("a"), Choice("a"), AnyOf("a")}) == 2


@pytest.mark.parametrize("metric, text", [
    (Metric("Mean slowdown.", "positive"), "positive"),
    (Metric("Failed attempts.", "nonnegative", part_of="lb_attempts"), "nonnegative, part of lb_attempts"),
])
def test_a_metric_describes_its_range_and_what_it_is_part_of(metric, text):
    assert metric.describe() == text


def test_a_metric_with_an_unknown_range_is_refused():
    with pytest.raises(ValueError, match=r"^metric range 'percent' is not one of real, nonnegative, positive, share$"):
        Metric("d", "percent")


def _groups(value):
    return None if isinstance(value, list) and value else "empty"


@pytest.mark.parametrize("domain, description, phrase", [
    (POSITIVE, "positive real", "a positive real"),
    (Real(gt=0.0), "positive real", "a positive real"),
    (NONNEGATIVE, "non-negative real", "a non-negative real"),
    (PROBABILITY, "real in [0, 1]", "a real in [0, 1]"),
    (Real(gt=0, lt=1), "real in (0, 1)", "a real in (0, 1)"),
    (Real(ge=0.5, lt=2.5), "real in [0.5, 2.5)", "a real in [0.5, 2.5)"),
    (Real(gt=1), "real > 1", "a real > 1"),
    (Real(ge=1.0), "real >= 1", "a real >= 1"),
    (Real(gt=0.25), "real > 0.25", "a real > 0.25"),
    (Real(lt=0), "real < 0", "a real < 0"),
    (Real(le=1), "real <= 1", "a real <= 1"),
    (Real(le=-0.5), "real <= -0.5", "a real <= -0.5"),
    (Real(), "finite real", "a finite real"),
    (COUNT, "positive integer", "a positive integer"),
    (Integer(gt=0), "positive integer", "a positive integer"),
    (Integer(ge=0), "non-negative integer", "a non-negative integer"),
    (Integer(ge=2), "integer >= 2", "an integer >= 2"),
    (Integer(lt=10), "integer < 10", "an integer < 10"),
    (Integer(ge=-20, le=19), "integer in [-20, 19]", "an integer in [-20, 19]"),
    (Integer(), "integer", "an integer"),
    (TEXT, "non-empty string", "a non-empty string"),
    (BOOLEAN, "true or false", "true or false"),
    (Choice("home"), "'home'", "'home'"),
    (Choice("home", "random", "round-robin"), "'home', 'random' or 'round-robin'", "'home', 'random' or 'round-robin'"),
    (Choice(None, "auto"), "null or 'auto'", "null or 'auto'"),
    (AnyOf(Choice(None), COUNT), "null or a positive integer", "null or a positive integer"),
    (AnyOf(Choice("random", "round-robin"), Integer(ge=0)), "'random', 'round-robin' or a non-negative integer",
     "'random', 'round-robin' or a non-negative integer"),
    (AnyOf(Real(gt=1), Integer(le=-1)), "a real > 1 or an integer <= -1", "a real > 1 or an integer <= -1"),
    (Structured("list of groups", _groups), "list of groups", "a list of groups"),
    (Structured("ordered list", _groups), "ordered list", "an ordered list"),
])
def test_domains_describe_themselves_and_phrase_what_a_value_is_not(domain, description, phrase):
    """describe() is what `simcore params` shows; phrase() ends 'is not ...' in an error message."""
    assert domain.describe() == description
    assert domain.phrase() == phrase


@pytest.mark.parametrize("domain, value, problem", [
    (TEXT, "  ", "is not a non-empty string"),
    (Integer(), 2.0, "is not an integer"),
    (Real(lt=0), 0, "is not a real < 0"),
    (Choice("a", "b"), "c", "is not 'a' or 'b'"),
    (AnyOf(Choice("n"), Real(gt=1)), 1, "is not 'n' or a real > 1"),
    (Structured("list of groups", _groups), [], "is not a list of groups (empty)"),
])
def test_a_problem_says_what_the_value_is_not(domain, value, problem):
    assert domain.problem(value) == problem


GROUPS = [{"speed": 1.0}]
TOY = {"n": Parameter(1, "n", COUNT), "groups": Parameter(GROUPS, "groups", Structured("list of groups", _groups))}
ORDERED = Constraint(("n", "top"), "n <= top", lambda p: p["n"] <= p["top"])


def test_with_defaults_fills_in_copies_of_the_defaults():
    """A run that changes its parameters in place cannot change a declared default."""
    full = with_defaults("toy", TOY, {"n": 3})
    assert full == {"n": 3, "groups": GROUPS}
    assert full["groups"] is not GROUPS and full["groups"][0] is not GROUPS[0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: with_defaults("toy", TOY, {"b": 1, 2: 0, "n": 1}), "unknown parameter(s) of model 'toy': 2, b"),
        (lambda: with_defaults("toy", TOY, {"n": 0}), "model 'toy': parameter n = 0 is not a positive integer."),
        (
            lambda: with_defaults("toy", {**TOY, "top": Parameter(2, "top", COUNT)}, {"n": 5}, (ORDERED,)),
            "model 'toy': n <= top does not hold (n = 5, top = 2).",
        ),
        (
            lambda: select("toy policy 'p'", TOY, {"n": True}),
            "toy policy 'p': parameter n = True is not a positive integer.",
        ),
        (
            lambda: Parameter("x" * 70, "t", COUNT).check("x" * 70, "here"),
            "here = '" + "x" * 56 + "... is not a positive integer.",
        ),
    ],
)
def test_bad_parameters_are_one_sentence_naming_where(call, message):
    with pytest.raises(InputError) as err:
        call()
    assert str(err.value) == message


def test_select_reads_only_the_declared_parameters_with_their_defaults():
    assert select("toy policy 'p'", TOY, {"n": 2, "other": object()}) == {"n": 2, "groups": GROUPS}


def _declared():
    """(where, name, Parameter) of every model parameter and policy hyperparameter, and of the corr05 SAN."""
    from simcore.models.registry import _POLICIES
    from simcore.san import corr05

    for model in MODELS:
        for name, p in get_model(model).PARAMETERS.items():
            yield model, name, p
    for (model, policy), cls in list(_POLICIES.items()):
        for name, p in getattr(cls, "HYPERPARAMETERS", {}).items():
            yield f"{model}:{policy}", name, p
    for name, p in corr05.PARAMETERS.items():
        yield "corr05-san", name, p
    for name, p in corr05.ARGUMENTS.items():
        yield "corr05-san generator", name, p


def test_every_parameter_declares_a_domain_holding_its_default():
    declared = list(_declared())
    assert len(declared) > 100
    for where, name, p in declared:
        assert isinstance(p, Parameter) and isinstance(p.domain, Domain) and p.doc, (where, name)
        if not (where == "corr05-san generator" and p.default is None):  # required arguments have no default
            assert p.domain.problem(p.default) is None, (where, name, p.default)


def test_every_model_parameter_of_a_policy_is_that_policys_declaration():
    """A model lists its policies' hyperparameters with the very declaration the policy checks."""
    from simcore.models.registry import _POLICIES

    for (model, _), cls in list(_POLICIES.items()):
        if model in MODELS:
            for name, p in cls.HYPERPARAMETERS.items():
                assert get_model(model).PARAMETERS[name] is p


@pytest.mark.parametrize("method", ["uniformization", "krylov"])
def test_a_san_too_stiff_to_solve_is_refused_not_crashed(tmp_path, refused, method):
    """Found by tests/test_input_fuzz.py: a demand of 3.8e-306 s is positive, but its rate 2.6e305
    made uniformization ask NumPy for an impossible array (exit 1) and Krylov lose the mass (1e-50)."""
    (tmp_path / "two.yaml").write_text("name: two\ndescription: d\nsource: s\ncpus_per_node: 1\n"
                                       "distances: [[10, 20], [20, 10]]\n")
    model = tmp_path / "m.yaml"
    model.write_text(f"generator: {{model: corr05, topology: {tmp_path / 'two.yaml'}, levels: '2'}}\n"
                     "parameters: {demand: 3.778588256270211e-306}\n")
    refused(f"{model}: ", "san", model, "--times", "0:1:0.5", "--transient", method, "--out", tmp_path / "out.csv")


def test_a_raw_batch_that_is_no_parquet_file_is_refused(tmp_path, refused):
    bad = tmp_path / "raw.parquet"
    bad.write_bytes(BINARY)
    refused(f"{bad}: is not a raw batch file", "aggregate", "amir-table2", "--raw", bad, "--outdir", tmp_path / "out",
            "--scale", "smoke")


def test_topology_files_declare_the_domains_of_their_keys(root):
    """Every catalog machine lies in the declared domains; a matrix outside them says why."""
    from simcore.topology.loader import FIELDS

    for path in sorted((root / "config/topologies").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        assert set(data) == set(FIELDS)
        assert all(FIELDS[k].domain.problem(v) is None for k, v in data.items()), path
    problem = FIELDS["distances"].domain.problem([[10, 20], [30, 10]])
    assert problem.startswith("is not a square symmetric matrix") and "not symmetric" in problem
    assert FIELDS["cpus_per_node"].domain.problem([2, 0]) == "is not a positive integer or a list of positive integers"


def test_negative_seeds_indices_and_counts_on_the_command_line(tmp_path, refused):
    """Once: --seed -5 and --rep -1 were internal errors (exit 1), --tasks -2 printed all but two tasks."""
    refused("argument --seed: -5 is below 0", *run_args("amir-table2", tmp_path, "--seed", "-5"))
    refused("argument --rep: -1 is below 0", "trace", "corr05-fig9", "--rep", "-1")
    refused("argument --tasks: -2 is below 1", "trace", "corr05-fig9", "--tasks", "-2")
    refused("argument --cell: 'x' is not an integer", "trace", "corr05-fig9", "--cell", "x")


def test_nan_elsewhere_in_a_spec_and_a_boolean_seed(root, tmp_path, refused):
    spec = copy_spec(root, tmp_path, "amir-table2", confidence=math.nan)
    refused(f"{spec}: confidence = nan is not a finite number.", "validate", spec)
    spec = copy_spec(root, tmp_path, "amir-table2", claims=[{"id": "c", "text": "t", "kind": "ratio-above",
                                                              "metric": "mean_slowdown", "policy": "pvm",
                                                              "threshold": math.inf}])
    refused(f"{spec}: claims.0.threshold = inf is not a finite number.", "validate", spec)
    config = tmp_path / "config.yaml"
    config.write_text("seed: true\n")
    refused(f"{config}: key 'seed' must be a non-negative integer.", "--config", config, "validate", "amir-table2")


# -- numa model: parameter checks and domain builders, called directly ------------------------
# (CONSTRAINTS and PARAMETERS are built once at import; these tests call their builders.)

def _numa_defaults(**over):
    from simcore.models.numa.model import PARAMETERS

    return {**{k: p.default for k, p in PARAMETERS.items()}, **over}


def test_numa_interval_order_compares_each_level_with_its_kernel_default():
    """{level}_min_interval <= {level}_max_interval, None standing for the SD_*_INIT value: SD_CPU_INIT
    has 1..4 ms whatever domain_init, SD_NODE_INIT 80..320 (ia64-2.6.12) or 8..32 (x86_64-2.6.12).
    Equal bounds hold (<=): cpu 3..3, node 320 (set) .. 320 (ia64 default), node 8 (x86_64) .. 8."""
    from simcore.models.numa.model import CONSTRAINTS, _interval_order

    cpu, node = _interval_order("cpu"), _interval_order("node")
    assert cpu.names == ("cpu_min_interval", "cpu_max_interval", "domain_init")
    assert node.names == ("node_min_interval", "node_max_interval", "domain_init")
    assert cpu.text == "cpu_min_interval <= cpu_max_interval (None: the domain_init value)"
    assert node.text == "node_min_interval <= node_max_interval (None: the domain_init value)"
    assert [(c.names, c.text) for c in CONSTRAINTS[-2:]] == [(cpu.names, cpu.text), (node.names, node.text)]

    def holds(c, **over):
        return c.holds(_numa_defaults(**over))

    assert holds(cpu) and holds(node)  # 1 <= 4, 80 <= 320 (both None)
    assert holds(cpu, cpu_max_interval=2)  # 1 <= 2 (an ia64 node minimum, 80, would not hold)
    assert holds(cpu, cpu_max_interval=2, domain_init="x86_64-2.6.12")  # CPU level ignores domain_init
    assert not holds(cpu, cpu_min_interval=5)  # 5 > 4
    assert not holds(cpu, cpu_max_interval=0.5)  # 1 > 0.5
    assert holds(cpu, cpu_min_interval=3, cpu_max_interval=3)  # equal
    assert not holds(cpu, cpu_min_interval=3, cpu_max_interval=2.5)
    assert not holds(node, node_max_interval=50)  # 80 > 50 (SD_CPU_INIT's 1 would hold)
    assert holds(node, node_min_interval=50)  # 50 <= 320
    assert not holds(node, node_min_interval=50, domain_init="x86_64-2.6.12")  # 50 > 32
    assert holds(node, node_min_interval=320)  # equal to the ia64 maximum
    assert not holds(node, node_min_interval=400)
    assert holds(node, node_max_interval=8, domain_init="x86_64-2.6.12")  # equal to the x86_64 minimum
    assert not holds(node, node_max_interval=7.5, domain_init="x86_64-2.6.12")
    with pytest.raises(InputError) as err:
        node.check(_numa_defaults(node_min_interval=400), "model 'numa'")
    assert str(err.value) == ("model 'numa': node_min_interval <= node_max_interval (None: the domain_init value) "
                              "does not hold (node_min_interval = 400, node_max_interval = None, "
                              "domain_init = 'ia64-2.6.12').")


def test_numa_optional_domain_is_null_or_the_domain():
    """_optional(COUNT) admits None and positive integers, and says 'null or a positive integer'."""
    from simcore.models.numa.model import _optional

    domain = _optional(COUNT)
    assert domain == AnyOf(Choice(None), COUNT)
    assert domain.problem(None) is None and domain.problem(3) is None
    assert domain.problem(0) == "is not null or a positive integer"
    assert domain.describe() == "null or a positive integer"


def test_numa_topology_parameter_is_a_name_or_a_machine():
    """A non-empty string (catalog name or file, loaded before the run) or an object with SLIT
    distances (a Machine, from Python) is admitted; anything else is not a non-empty string."""
    from types import SimpleNamespace

    from simcore.models.numa import full_params
    from simcore.models.numa.model import _topology
    from simcore.topology import load_topology

    machine = load_topology("corr05-4x1")
    assert _topology("corr05-4x1") is None and _topology("no-such-machine") is None
    assert _topology(machine) is None and _topology(SimpleNamespace(distances=[[10]])) is None
    assert _topology(3) == "not a non-empty string" and _topology("") == "not a non-empty string"
    assert _topology(SimpleNamespace(cpus=4)) == "not a non-empty string"
    assert full_params({"topology": machine})["topology"] is machine
    for value, text in ((3, "3"), ("", "''"), (None, "None")):
        with pytest.raises(InputError) as err:
            full_params({"topology": value})
        assert str(err.value) == (f"model 'numa': parameter topology = {text} is not a topology catalog name or file "
                                  "(not a non-empty string).")


def test_numa_mean_burst_must_be_positive_at_the_boundary():
    """The mean burst at nice n is timeslice(n) + burst_nice_ms * n; at nice -1 the timeslice is
    4 x 100 x (20 + 1) / 20 = 420 ms, so burst_nice_ms = 419.5 leaves 0.5 ms (accepted: positive,
    though below 1) and 420 leaves exactly 0 (refused). The smallest burst is at nice_min, so
    nice_min = nice_max = -1 is refused alone; likewise 800 - 20 x 40 = 0 at nice -20."""
    from simcore.models.numa import full_params

    assert full_params({"nice_min": -1, "burst_nice_ms": 419.5})["burst_nice_ms"] == 419.5
    assert full_params({"nice_min": -1, "nice_max": -1, "burst_nice_ms": 419.5})["nice_max"] == -1
    assert full_params({"nice_min": -20, "nice_max": -20, "burst_nice_ms": 39.5})["nice_min"] == -20  # 10 ms
    for over in ({"nice_min": -1, "burst_nice_ms": 420}, {"nice_min": -1, "nice_max": -1, "burst_nice_ms": 420},
                 {"nice_min": -20, "nice_max": -20, "burst_nice_ms": 40}, {"nice_min": -20, "burst_nice_ms": 40}):
        with pytest.raises(InputError) as err:
            full_params(over)
        values = ", ".join(f"{k} = {v}" for k, v in {"nice_min": None, "nice_max": 19, "burst_nice_ms": None,
                                                     **over}.items())
        assert str(err.value) == ("model 'numa': a positive mean burst (timeslice + burst_nice_ms * nice) at every "
                                  f"nice does not hold ({values}).")


def _two_by_two():
    from simcore.topology.machine import make_machine

    return make_machine("two", "two", 2, [[10, 20], [20, 10]], "2 nodes x 2 CPUs", "test")


def test_numa_default_domains_of_a_two_node_machine():
    """2 nodes x 2 CPUs, SLIT [[10, 20], [20, 10]], linux-2level with domain_init left at its
    default (ia64-2.6.12): CPU 0 has the CPU level {0, 1} in groups {0}, {1} (SD_CPU_INIT: 1..4 ms,
    busy factor 64) and the node level {0..3} in groups {0, 1}, {2, 3} (ia64 SD_NODE_INIT: 80..320 ms,
    busy factor 320); CPU 2 the same from node 1 (groups {2, 3}, {0, 1}). x86_64-2.6.12: 8..32 ms, 32."""
    from simcore.models.numa.model import default_domains_for

    machine = _two_by_two()

    def summary(doms):
        return [(d.name, sorted(d.span), [sorted(g) for g in d.groups], d.min_interval, d.max_interval, d.busy_factor)
                for d in doms]

    domains = default_domains_for(machine, "linux-2level")
    assert len(domains) == 4
    assert summary(domains[0]) == summary(domains[1]) == [
        ("cpu", [0, 1], [[0], [1]], 1, 4, 64), ("node", [0, 1, 2, 3], [[0, 1], [2, 3]], 80, 320, 320)]
    assert summary(domains[2]) == [("cpu", [2, 3], [[2], [3]], 1, 4, 64),
                                   ("node", [0, 1, 2, 3], [[2, 3], [0, 1]], 80, 320, 320)]
    x86 = default_domains_for(machine, "multilevel", "x86_64-2.6.12")
    assert summary(x86[3]) == [("cpu", [2, 3], [[2], [3]], 1, 4, 64),
                               ("node", [0, 1, 2, 3], [[2, 3], [0, 1]], 8, 32, 32)]


def test_numa_default_domains_name_an_unknown_builder_or_init():
    from simcore.models.numa.model import default_domains_for

    machine = _two_by_two()
    with pytest.raises(InputError) as err:
        default_domains_for(machine, "flat")
    assert str(err.value) == "numa model: unknown sched-domain builder 'flat' (known: linux-2level, multilevel)"
    with pytest.raises(InputError) as err:
        default_domains_for(machine, "multilevel", "sparc")
    assert str(err.value) == ("numa model: parameter 'domain_init' must be one of ia64-2.6.12, x86_64-2.6.12, "
                              "not 'sparc'")


def test_numa_tuned_domains_stay_shared_by_the_cpus_of_a_node():
    """Domains are per node (shared by its CPUs); tuning makes one copy of each, so 4 nodes x 2
    levels of corr05-4x2 under linux-2level give 8 distinct tuned domains for its 8 CPUs."""
    from simcore.models.numa import full_params
    from simcore.models.numa.model import default_domains_for, tune_domains
    from simcore.topology import load_topology

    domains = default_domains_for(load_topology("corr05-4x2"), "linux-2level")
    tuned = tune_domains(domains, full_params({"node_busy_factor": 4}))
    assert all(tuned[c][k] is tuned[c + 1][k] for c in (0, 2, 4, 6) for k in (0, 1))
    assert len({id(d) for doms in tuned for d in doms}) == 8
    assert [d.busy_factor for d in tuned[5]] == [64, 4]


def test_numa_policy_gets_its_own_fresh_stream():
    """make_policy gives the policy the generator streams.fresh('policy:NAME'): its draws are those
    of a new Streams of the same seed, even after the stream was drawn from."""
    from simcore.models.numa import full_params
    from simcore.models.numa.model import make_policy

    seed = replication_seed(1, "x", 0, 0)
    streams = Streams(seed)
    streams["policy:multilevel"].random(5)
    policy = make_policy("multilevel", full_params({}), streams)
    assert list(policy.rng.random(3)) == list(Streams(seed)["policy:multilevel"].random(3))


def test_numa_load_machine_turns_loader_failures_into_input_errors(monkeypatch):
    """Without simcore.topology, or when its loader raises KeyError, FileNotFoundError or ValueError,
    load_machine raises one InputError naming the topology and the cause."""
    import sys

    import simcore.topology
    from simcore.models.numa.model import load_machine
    from simcore.topology.machine import TopologyError

    for exc in (KeyError("k"), FileNotFoundError("f"), ValueError("v")):
        def fail(name, exc=exc):
            raise exc
        monkeypatch.setattr(simcore.topology, "load_topology", fail)
        with pytest.raises(InputError) as err:
            load_machine("m")
        assert str(err.value) == f"numa model: parameter 'topology': unknown or bad topology 'm' ({exc})"
    bad = TopologyError("m.yaml: no such topology file.")
    monkeypatch.setattr(simcore.topology, "load_topology", lambda name: (_ for _ in ()).throw(bad))
    with pytest.raises(InputError) as err:
        load_machine("m.yaml")
    assert err.value is bad
    monkeypatch.setitem(sys.modules, "simcore.topology", None)
    with pytest.raises(InputError) as err:
        load_machine("m")
    assert str(err.value).startswith("numa model: cannot load topology 'm': simcore.topology unavailable (")


# -- sched-domain flags and the balancer's construction errors ------------------------------------
# The 2.6.12 flag bits, copied from docs/linux26-scheduler.md ("Domain flags", column "2.6.12 and
# before"): each case below gives a domain's ``flags`` and the bit mask they denote by that table,
# and the domain must hold exactly the flags whose bit is in the mask. Names are case-insensitive,
# may carry the kernel's SD_ prefix, and the balancing flags have the aliases LB, NEWIDLE/NI and
# EXEC/EX; strings are split at '|', ',' and white space; no flags at all (None) means every flag.
DOC_FLAG_BITS = {"LOAD_BALANCE": 1, "BALANCE_NEWIDLE": 2, "BALANCE_EXEC": 4, "WAKE_IDLE": 8, "WAKE_AFFINE": 16,
                 "WAKE_BALANCE": 32, "SHARE_CPUPOWER": 64}


@pytest.mark.parametrize("flags, mask", [
    (None, 127),                                   # no flags given: every flag
    (0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (48, 48), (127, 127),  # int masks: the bits themselves
    ("SD_LOAD_BALANCE|SD_BALANCE_NEWIDLE", 1 | 2),
    ("LOAD_BALANCE,BALANCE_EXEC", 1 | 4),
    ("lb, ni", 1 | 2),
    ("LB|NI|EX", 1 | 2 | 4),
    ("NEWIDLE,EXEC", 2 | 4),
    ("sd_balance_newidle  exec", 2 | 4),
    ("SD_WAKE_AFFINE|SD_WAKE_BALANCE", 16 | 32),  # names without aliases: known by their own name
    ("wake_idle", 8),
    ("SD_SHARE_CPUPOWER", 64),
    ("LOAD_BALANCE_SD", 0),                       # SD_ is a prefix, not a suffix
    ("", 0),
    ({"SD_LOAD_BALANCE", "ni"}, 1 | 2),           # a set (unhashable) ...
    (["ex", "Wake_Affine"], 4 | 16),              # ... a list ...
    (frozenset({"LB"}), 1),                       # ... a frozenset ...
    (("BALANCE_NEWIDLE",), 2),                    # ... a tuple: items are names ...
    (["LB|NI"], 0),                               # ... not split
])
def test_a_domain_holds_the_flags_its_mask_sets_by_the_kernel_table(flags, mask):
    from types import SimpleNamespace

    from simcore.models.numa.balancer import has_flag

    domain = SimpleNamespace(flags=flags)
    held = {name for name in DOC_FLAG_BITS if has_flag(domain, name)}
    assert held == {name for name, bit in DOC_FLAG_BITS.items() if mask & bit}


def test_a_domain_without_a_flags_attribute_holds_every_flag():
    from simcore.models.numa.balancer import has_flag

    assert all(has_flag(object(), name) is True for name in DOC_FLAG_BITS)


def test_a_float_is_no_flag_mask_even_after_the_equal_int_was_read():
    """Answers are kept per (type, flags, name): the int 1 holds LOAD_BALANCE, and the float 1.0,
    equal to it but no bit mask, is still refused (it is no collection of names either)."""
    from types import SimpleNamespace

    from simcore.models.numa.balancer import has_flag

    assert has_flag(SimpleNamespace(flags=1), "LOAD_BALANCE") is True
    with pytest.raises(TypeError):
        has_flag(SimpleNamespace(flags=1.0), "LOAD_BALANCE")


def test_the_balancer_refuses_a_domain_list_per_cpu_of_the_wrong_length():
    """simulate's caller-supplied domains: three lists for a machine of two CPUs."""
    from simcore.models.numa import full_params, simulate
    from simcore.models.numa.task import TaskSpec
    from simcore.topology.machine import make_machine

    params = full_params({"topology": "scripted", "n_tasks": 1, "placement": "parent"})
    with pytest.raises(ValueError, match=r"^numa model: 3 domain lists for 2 CPUs$"):
        simulate(params, [TaskSpec(0, 0.0, 0, 10.0, 0, False, 0)], "linux-2level",
                 Streams(replication_seed(1, "x", 0, 0)), machine=make_machine("test", "flat-2", [2], [[10]]),
                 domains_for=lambda machine, builder: [[], [], []])


def test_an_unnamed_domain_leaving_out_its_cpu_is_refused_as_level_k():
    """A domain object without a ``name`` is called ``level<k>`` in the refusal; CPU 0 is in
    neither group of this level-1 domain."""
    from types import SimpleNamespace

    from simcore.models.numa.balancer import Dom

    d = SimpleNamespace(span={0, 1, 2, 3}, groups=[{2, 1}, {3}])
    with pytest.raises(InputError, match=r"^sched domain 'level1' \(level 1\) of CPU 0: the CPU is in none of its "
                                         r"groups \[\[1, 2\], \[3\]\]\.$"):
        Dom(d, 1, 0, policy=None)
