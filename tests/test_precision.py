"""Precision mode (simcore/experiments/precision.py): which cells get more replications, how many,
at which level the claims are then judged, and that added batches change no row."""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simcore.cli import main
from simcore.experiments.aggregate import aggregate
from simcore.experiments.precision import batches, plan_round, targets
from simcore.experiments.runner import run_batch, write_batch
from simcore.experiments.spec import load_config, load_spec
from simcore.models import Metric

SPECS = Path("config/experiments")
BASE = np.full(5, 10.0)
UNDECIDED = np.array([-1.0, 1.0, -3.0, 0.0, -2.0])   # mean -1, sd sqrt(2.5), n = 5
CLEAR = np.array([-1.0, -1.1, -0.9, -1.0, -1.0])       # mean -1, sd 0.07: 'less' beyond doubt
CENTRED = np.array([-1.0, 1.0, -2.0, 2.0, 0.0])        # mean exactly 0: no count can be estimated
CLAIM = {"id": "c", "text": "new is faster", "kind": "less", "metric": "t", "policy": "new"}


class Toy(SimpleNamespace):
    """The parts of a Spec the precision rounds read, with the spec's own level rule."""

    def precision(self, scale):
        return self.prec

    def batch_size(self, scale):
        return self.job

    def claim_level(self, scale):
        return 1 - (1 - self.confidence) / (self.prec["rounds"] + 1)

    def at_level(self, level):
        return Toy(**{**vars(self), "confidence": level})


def toy(claims, cap=40, batch=10, rounds=1, job=5):
    return Toy(id="toy", path=Path("toy.yaml"), model=SimpleNamespace(METRICS={"t": Metric("t", "real")}),
               metrics=[{"name": "t"}], baseline="base", confidence=0.95, grid={"k": [1, 2]},
               data={"claims": claims}, prec={"max_replications": cap, "batch": batch, "rounds": rounds}, job=job)


def raw(*diffs):
    """One cell per array of differences new - base (base 10 in every replication)."""
    rows = []
    for cell, d in enumerate(diffs):
        for policy, values in (("new", BASE + d), ("base", BASE)):
            rows += [
                {"cell": cell, "k": cell + 1, "policy": policy, "rep": r, "t": float(v)} for r, v in enumerate(values)
            ]
    return pd.DataFrame(rows)


def test_the_undecided_cell_gets_the_replications_its_interval_asks_for():
    """Cell 0 (k = 1) as in test_claims' direct computation, cell 1 'less' beyond doubt. With one
    round the claims are judged at 1 - 0.05/2 = 97.5%: h = t_{0.9875,4} sqrt(2.5/5) = 2.471 around
    the centre 1 (towards 'less'), so 5 x 2.471^2 = 30.5 -> 31 replications; cell 1 is decided and
    gets none. Batches of 10 from replication 5: 5-15, 15-25, 25-31. With a cap of 20: 5-15, 15-20."""
    data = raw(UNDECIDED, CLEAR)
    h = float(stats.t.ppf(1 - 0.025 / 2, 4)) * math.sqrt(2.5 / 5)
    assert math.ceil(5 * h**2) == 31
    assert targets([toy([CLAIM])], data, "full") == {0: 31}
    plan = plan_round([toy([CLAIM])], data, "full", 1)
    assert plan["batches"] == ["c000/r00005-00015", "c000/r00015-00025", "c000/r00025-00031"]
    assert plan["level"] == 0.975 and plan["replications"] == {"0": 5, "1": 5}
    capped = plan_round([toy([CLAIM], cap=20)], data, "full", 1)
    assert capped["batches"] == ["c000/r00005-00015", "c000/r00015-00020"]


def test_the_jobs_of_a_round_hold_the_scales_batch_where_that_is_larger():
    """The precision batch (10) is the least a cell gets; the scale's batch (20) cuts the jobs:
    the same 31 replications in two jobs, 5-25 and 25-31; a scale batch below the precision batch
    leaves the jobs at 10."""
    data = raw(UNDECIDED, CLEAR)
    assert targets([toy([CLAIM], job=20)], data, "full") == targets([toy([CLAIM])], data, "full") == {0: 31}
    assert plan_round([toy([CLAIM], job=20)], data, "full", 1)["batches"] == ["c000/r00005-00025", "c000/r00025-00031"]
    assert plan_round([toy([CLAIM], job=3)], data, "full", 1)["batches"][0] == "c000/r00005-00015"


def test_at_the_spec_level_the_same_cell_would_ask_for_fewer():
    """Without the looks' correction (95%) the same cell asks for 20 (test_claims): the level of
    the rounds is what makes it 31."""
    plain = toy([CLAIM], rounds=1)
    plain.claim_level = lambda scale: 0.95
    assert targets([plain], raw(UNDECIDED, CLEAR), "full") == {0: 20}


def test_a_decided_claim_adds_nothing_and_an_unestimable_cell_goes_to_the_cap():
    """Both cells clear: nothing to add, and the plan says why. A cell whose mean difference is
    exactly 0 has no count that would decide it (NaN): it goes to the cap."""
    decided = plan_round([toy([CLAIM])], raw(CLEAR, CLEAR), "full", 1)
    assert decided["batches"] == [] and decided["reason"].startswith("every claim decided")
    assert targets([toy([CLAIM], cap=25)], raw(CENTRED, CLEAR), "full") == {0: 25}


def test_every_reader_of_the_data_counts_and_the_largest_need_wins():
    """The experiment's claim is about k = 1 (cell 0: 31, as above); a reader's claim about
    k = 2 finds cell 1's mean difference exactly 0 (no count: the cap, 40). The plan covers both."""
    first = toy([{**CLAIM, "where": {"k": 1}}])
    reader = toy([{**CLAIM, "id": "r", "where": {"k": 2}}])
    assert targets([first, reader], raw(UNDECIDED, CENTRED), "full") == {0: 31, 1: 40}


def test_a_need_below_one_batch_still_adds_a_batch_and_rounds_end():
    """A cell that needs fewer replications than it has plus one batch gets one batch (progress
    every round): differences of mean -2.2 (sd sqrt(2.5), n = 5) leave 0 inside the 97.5%
    interval (h = 2.471) and need 5 x (2.471/2.2)^2 = 6.3 -> 7 < 5 + 10: 15. After the last
    round nothing is added."""
    assert batches({0: 5, 1: 8}, {0: 9, 1: 30}, 10) == [(0, 5, 9), (1, 8, 18), (1, 18, 28), (1, 28, 30)]
    data = raw(np.array([-1.0, 1.0, -3.0, 0.0, -2.0]) - 1.2, CLEAR)  # mean -2.2: close to decided
    need = targets([toy([CLAIM], batch=10)], data, "full")
    assert need == {0: 15}
    late = plan_round([toy([CLAIM])], raw(UNDECIDED, CLEAR), "full", 2)
    assert late["batches"] == [] and late["reason"] == "last round done"


def test_claim_level_is_bonferroni_over_the_looks():
    spec = load_spec(SPECS / "amir-table2.yaml")
    assert spec.precision("smoke") == {"max_replications": 12, "batch": 4, "rounds": 1}
    assert spec.claim_level("smoke") == pytest.approx(1 - 0.05 / 2)
    assert spec.precision("quick") is None and spec.claim_level("quick") == spec.confidence
    reader = load_spec(SPECS / "amir-fig1.yaml")            # reads amir-table2's data and scales
    assert reader.claim_level("smoke") == pytest.approx(0.975)


def test_a_cell_extended_by_a_round_equals_one_batch_of_the_same_replications(tmp_path):
    """amir-table2 at smoke: 8 replications in batches 0-4 and 4-8; its own claims are decided
    there, the claim of amir-fig1, which reads its executions, is not, so round 1 adds 8-12 (the
    cap). Aggregated, the three batches give the same bytes as replications 0-12 run in one batch,
    and the claims are judged at 97.5% over 12 replications."""
    spec = load_spec(SPECS / "amir-table2.yaml")
    reader = load_spec(SPECS / "amir-fig1.yaml")
    seed = load_config("config/config.yaml")["seed"]

    def batch(a, b, name):
        path = tmp_path / name / f"r{a}-{b}.parquet"
        write_batch(path, run_batch(spec, 0, range(a, b), seed), spec, seed)
        return path

    split = [batch(0, 4, "split"), batch(4, 8, "split")]
    raw = pd.concat([pd.read_parquet(p) for p in split])
    assert plan_round([spec], raw, "smoke", 1)["batches"] == []
    plan = plan_round([spec, reader], raw, "smoke", 1)
    assert plan["batches"] == ["c000/r00008-00012"]
    split.append(batch(8, 12, "split"))
    one = [batch(0, 12, "one")]
    for name, paths in (("split", split), ("one", one)):
        aggregate(spec, paths, tmp_path / f"out-{name}", "smoke", seed, Path("config/config.yaml"))
    for table in ("summary.csv", "claims.csv", "replications.csv"):
        assert (tmp_path / "out-split" / table).read_bytes() == (tmp_path / "out-one" / table).read_bytes()
    claims = pd.read_csv(tmp_path / "out-one" / "claims.csv")
    assert set(claims["level"]) == {0.975} and set(claims["n"]) == {12}


@pytest.mark.parametrize("args, key", [
    (["amir-fig1", "--scale", "smoke"], "data_from"),
    (["amir-table2", "--scale", "quick"], "scales.quick.precision"),
])
def test_precision_refuses_what_has_no_rounds(tmp_path, capsys, args, key):
    out = tmp_path / "plan.json"
    code = main(["precision", *args, "--round", "1", "--raw", str(tmp_path / "none.parquet"), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"key '{key}'" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_plan_in_the_provenance(tmp_path):
    """The aggregate keeps each round's plan in provenance.json; a file that is not a plan is refused."""
    spec = load_spec(SPECS / "amir-table2.yaml")
    seed = load_config("config/config.yaml")["seed"]
    path = tmp_path / "r.parquet"
    write_batch(path, run_batch(spec, 0, range(0, 3), seed), spec, seed)
    plan = tmp_path / "round1.json"
    plan.write_text(
        json.dumps({"round": 1, "level": 0.975, "precision": {}, "targets": {}, "reason": "x", "batches": []})
    )
    aggregate(spec, [path], tmp_path / "out", "smoke", seed, Path("config/config.yaml"), [plan])
    assert json.loads((tmp_path / "out" / "provenance.json").read_text())["precision"][0]["round"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["aggregate", "amir-table2", "--scale", "smoke", "--raw", str(path), "--outdir", str(tmp_path / "o2"),
                 "--plans", str(bad)]) == 2
    assert not (tmp_path / "o2").exists()
