"""scripts/mutation.py: how the mutation score counts (the run itself is `make mutation`)."""

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mutation", ROOT / "scripts/mutation.py")
mutation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation)


def test_mutants_map_to_their_files():
    assert mutation.module_of("simcore.stats.intervals.x_mean__mutmut_3") == "simcore/stats/intervals.py"
    assert mutation.module_of("simcore.models.x_with_defaults__mutmut_1") == "simcore/models/__init__.py"
    assert mutation.module_of("simcore.models.numa.balancer.xǁBalancerǁtick__mutmut_2") == \
        "simcore/models/numa/balancer.py"


def test_untested_mutants_count_against_the_score_and_equivalents_leave_it():
    """4 mutants: killed, survived, no tests, survived-but-equivalent -> 1 killed of 3 counted;
    an equivalent entry that is now killed is stale."""
    status = {"simcore.stats.summary.x_a__mutmut_1": "killed", "simcore.stats.summary.x_a__mutmut_2": "survived",
              "simcore.stats.summary.x_a__mutmut_3": "no tests", "simcore.stats.summary.x_a__mutmut_4": "survived"}
    equivalent = {"simcore.stats.summary.x_a__mutmut_4": "same value", "simcore.stats.summary.x_a__mutmut_1": "x"}
    per_file, survivors, stale = mutation.score(status, equivalent)
    assert per_file == {"simcore/stats/summary.py": [1, 3]}
    assert [s.split(":")[0] for s in survivors] == ["simcore.stats.summary.x_a__mutmut_2",
                                                     "simcore.stats.summary.x_a__mutmut_3"]
    assert stale == ["simcore.stats.summary.x_a__mutmut_1"]


def test_every_equivalent_has_a_reason():
    entries = yaml.safe_load((ROOT / "tests/mutation-equivalents.yaml").read_text()) or []
    assert all(set(e) == {"mutant", "reason"} and len(e["reason"].split()) >= 3 for e in entries)
