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


def test_equivalents_outside_a_runs_files_are_not_judged_but_gone_ones_are_stale():
    """A run of one part (here summary.py) judges the entries of its files: one whose mutant no
    longer exists there is stale, and so is one of a deleted file; an entry of another file
    (intervals.py, not mutated in this run) is left alone."""
    status = {"simcore.stats.summary.x_a__mutmut_1": "survived"}
    equivalent = {"simcore.stats.summary.x_a__mutmut_1": "r", "simcore.stats.summary.x_a__mutmut_9": "gone",
                  "simcore.stats.intervals.x_b__mutmut_1": "other file",
                  "simcore.models.numa.scheduler.x_c__mutmut_1": "deleted file"}
    _, _, stale = mutation.score(status, equivalent)
    assert stale == ["simcore.stats.summary.x_a__mutmut_9", "simcore.models.numa.scheduler.x_c__mutmut_1"]


def test_every_equivalent_has_a_reason():
    entries = yaml.safe_load((ROOT / "tests/mutation-equivalents.yaml").read_text()) or []
    assert all(set(e) == {"mutant", "reason"} and len(e["reason"].split()) >= 3 for e in entries)


def test_recorded_scores_count_only_files_unchanged_since_measured(tmp_path, monkeypatch):
    """Two files in scope, a.py (two mutants) and b.py (none), one out of scope. A run that tested
    every mutant of a.py records both (b.py with 0 of 0); editing a.py afterwards makes its record
    stale, and a file whose source changed after the run started is not recorded at all."""
    import json

    (tmp_path / "simcore/m").mkdir(parents=True)
    (tmp_path / "simcore/other").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["simcore/m/*"]\n')
    for name in ("simcore/m/a.py", "simcore/m/b.py", "simcore/other/c.py"):
        (tmp_path / name).write_text("x = 1\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "RECORDS", tmp_path / "scores.yaml")
    monkeypatch.setattr(mutation, "SOURCES", tmp_path / "mutants/sources.json")
    assert mutation.scope() == ["simcore/m/a.py", "simcore/m/b.py"]
    (tmp_path / "mutants").mkdir()
    mutation.SOURCES.write_text(json.dumps({p: mutation.source_hash(p) for p in mutation.scope()}))
    status = {"simcore.m.a.x_f__mutmut_1": "killed", "simcore.m.a.x_f__mutmut_2": "survived"}
    assert mutation.complete_files({**status, "simcore.m.a.x_f__mutmut_3": "not checked"}) == {"simcore/m/b.py"}
    per_file, _, _ = mutation.score(status, {})
    assert mutation.record(per_file, mutation.complete_files(status), {}) == ["simcore/m/a.py", "simcore/m/b.py"]
    assert mutation.recorded_score(mutation.load_records()) == (1, 2, [], [])
    (tmp_path / "simcore/m/a.py").write_text("x = 2\n")
    assert mutation.recorded_score(mutation.load_records()) == (0, 0, ["simcore/m/a.py"], [])
    assert mutation.complete_files(status) == {"simcore/m/b.py"}  # changed since the run started
    assert mutation.part_globs("simcore/m") == ["simcore.m.a.x*", "simcore.m.b.x*"]


def test_mutant_exit_codes_outlive_mutants_by_function(tmp_path, monkeypatch):
    """mutants/ of a run (a.py: f's mutants 1 killed and 2 survived, method C.g's mutant 1 not run)
    is kept in the state file by function with its hash; a machine without mutants/ gets the same
    meta back (mutmut then keeps the codes of functions whose hash is unchanged). A file that
    already has mutmut state here is left alone, and a file out of scope is not restored."""
    import json

    (tmp_path / "simcore/m").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["simcore/m/*"]\n')
    (tmp_path / "simcore/m/a.py").write_text("x = 1\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "STATE", tmp_path / "state.json")
    codes = {"simcore.m.a.x_f__mutmut_1": 1, "simcore.m.a.x_f__mutmut_2": 0, "simcore.m.a.xǁCǁg__mutmut_1": None}
    meta = {"exit_code_by_key": codes, "hash_by_function_name": {"x_f": "h1", "xǁCǁg": "h2"},
            "type_check_error_by_key": {}, "durations_by_key": {"simcore.m.a.x_f__mutmut_1": 0.5},
            "estimated_durations_by_key": {}}
    (tmp_path / "mutants/simcore/m").mkdir(parents=True)
    (tmp_path / "mutants/simcore/m/a.py.meta").write_text(json.dumps(meta))
    assert mutation.save_state() == ["simcore/m/a.py"]
    assert mutation.load_state() == {"simcore/m/a.py": {"x_f": {"sha": "h1", "exit": [1, 0]},
                                                        "xǁCǁg": {"sha": "h2", "exit": [None]}}}
    assert mutation.restore_state() == []  # this machine has its own state
    state = mutation.load_state()
    mutation.STATE.write_text(json.dumps({**state, "simcore/other/c.py": state["simcore/m/a.py"]}))
    import shutil
    shutil.rmtree(tmp_path / "mutants")
    assert mutation.restore_state() == ["simcore/m/a.py"]
    restored = json.loads((tmp_path / "mutants/simcore/m/a.py.meta").read_text())
    assert restored["exit_code_by_key"] == codes
    assert restored["hash_by_function_name"] == meta["hash_by_function_name"]
    assert not (tmp_path / "mutants/simcore/other").exists()
    assert mutation.function_of("simcore.m.a.xǁCǁg__mutmut_12") == ("xǁCǁg", 12)


def test_a_partial_run_keeps_the_codes_of_the_mutants_it_did_not_run(tmp_path, monkeypatch):
    """The state holds f's mutants 1-3 (killed, survived, killed); a later run of f (same hash)
    runs only mutant 2, now killed: the state keeps 1 and 3 and takes 2's new code. A function
    whose hash changed takes the new codes alone."""
    import json

    (tmp_path / "simcore/m").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["simcore/m/*"]\n')
    (tmp_path / "simcore/m/a.py").write_text("x = 1\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "STATE", tmp_path / "state.json")
    mutation.STATE.write_text(json.dumps({"simcore/m/a.py": {"x_f": {"sha": "h1", "exit": [1, 0, 1]},
                                                             "x_g": {"sha": "old", "exit": [0, 0]}}}))
    codes = {"simcore.m.a.x_f__mutmut_1": None, "simcore.m.a.x_f__mutmut_2": 1, "simcore.m.a.x_f__mutmut_3": None,
             "simcore.m.a.x_g__mutmut_1": 1, "simcore.m.a.x_g__mutmut_2": None}
    meta = {"exit_code_by_key": codes, "hash_by_function_name": {"x_f": "h1", "x_g": "new"}}
    (tmp_path / "mutants/simcore/m").mkdir(parents=True)
    (tmp_path / "mutants/simcore/m/a.py.meta").write_text(json.dumps(meta))
    mutation.save_state()
    assert mutation.load_state() == {"simcore/m/a.py": {"x_f": {"sha": "h1", "exit": [1, 1, 1]},
                                                        "x_g": {"sha": "new", "exit": [1, None]}}}


def test_the_records_name_only_files_and_functions_the_tree_has():
    """The kept exit codes, the equivalent mutants and the per-file scores name existing files and
    functions (`scripts/mutation.py --prune` drops those that do not)."""
    assert mutation.missing_records() == []


def test_a_record_of_a_deleted_function_or_file_is_found_and_pruned(tmp_path, monkeypatch):
    """a.py holds f and C.g; the state keeps f, C.g, a deleted h and a deleted file; one
    equivalent names C.g, one the deleted h: the three stale records are found, and pruning
    keeps the others untouched."""
    import json

    (tmp_path / "simcore").mkdir()
    (tmp_path / "simcore/a.py").write_text("def f():\n    pass\n\n\nclass C:\n    def g(self):\n        pass\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    for name, file in (("STATE", "state.json"), ("EQUIVALENTS", "eq.yaml"), ("RECORDS", "scores.yaml")):
        monkeypatch.setattr(mutation, name, tmp_path / file)
    entry = {"sha": "0", "exit": [1]}
    mutation.STATE.write_text(json.dumps({"simcore/a.py": {"x_f": entry, "xǁCǁg": entry, "x_h": entry},
                                          "simcore/gone.py": {"x_f": entry}}))
    mutation.EQUIVALENTS.write_text("# header\n- mutant: simcore.a.xǁCǁg__mutmut_1\n  reason: the same value here\n"
                                    "- mutant: simcore.a.x_h__mutmut_2\n  reason: the same value there\n")
    assert mutation.missing_records() == ["state.json: simcore/a.py x_h", "state.json: simcore/gone.py",
                                          "eq.yaml: simcore.a.x_h__mutmut_2"]
    mutation.prune_records()
    assert mutation.missing_records() == []
    assert mutation.load_state() == {"simcore/a.py": {"x_f": entry, "xǁCǁg": entry}}
    assert mutation.equivalents() == {"simcore.a.xǁCǁg__mutmut_1": "the same value here"}
    assert mutation.EQUIVALENTS.read_text().startswith("# header\n- mutant: simcore.a.xǁCǁg__mutmut_1\n")
