"""scripts/restamp.py's rules, on hand-made fingerprints: a reference is carried over only from
the commit that made it, and only for experiments whose code or machines changed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("restamp", ROOT / "scripts/restamp.py")
restamp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(restamp)

PARTS = {"experiment": "e", "model": "m", "params": "p", "policies": "q", "grid": "g", "seed": "s", "code": "c",
         "topology": "t"}


def fp(**changed) -> dict:
    parts = {**PARTS, **changed}
    return {"hash": "".join(parts.values()), "parts": parts}


def test_the_reference_must_be_the_named_commits(capsys):
    old = {"experiments": {"x": fp()}, "san": "S", "fits": ["K"], "calibrations": {"c/full": "C"}}
    recorded = {"experiments": {"x": {"fingerprint": fp()["hash"], "fingerprint_parts": fp()["parts"]}},
                "san": {"example": "S"}, "fits": ["K"], "calibrations": {"c/full": "C"}}
    restamp.check_was_old(recorded, old, "REV")                              # the same: carried on
    for broken in (
        {**recorded, "san": {"example": "other"}},
        {**recorded, "fits": ["other"]},
        {**recorded, "calibrations": {"c/full": "other"}},
        {**recorded, "experiments": {"x": {"fingerprint": "h", "fingerprint_parts": fp(code="d")["parts"]}}},
    ):
        with pytest.raises(SystemExit) as done:
            restamp.check_was_old(broken, old, "REV")
        assert done.value.code == 2
    assert "REV" in capsys.readouterr().err


def test_only_code_or_machines_may_change():
    old = {"experiments": {"a": fp(), "b": fp(), "c": fp()}}
    new = {"experiments": {"a": fp(), "b": fp(code="C2"), "c": fp(topology="T2")}}
    assert restamp.changed_experiments(old, new) == ["b", "c"]
    for part in ("params", "seed", "grid", "policies", "model", "experiment"):
        with pytest.raises(SystemExit):
            restamp.changed_experiments(old, {"experiments": {"a": fp(**{part: "changed"})}})
    with pytest.raises(SystemExit):       # a new experiment has no reference to carry over
        restamp.changed_experiments(old, {"experiments": {"new": fp()}})


def test_a_new_parameter_at_its_default_is_carried_over_but_a_changed_one_is_not():
    """The params part may change only by parameters the code adds: {m: 1} -> {m: 1, new: 'x'} is
    carried over (as a change of code); a value changed or a parameter dropped is not."""
    old = {"experiments": {"a": fp()}, "params": {"a": {"m": 1}}}
    added = {"experiments": {"a": fp(params="P2")}, "params": {"a": {"m": 1, "new": "x"}}}
    assert restamp.changed_experiments(old, added) == ["a"]
    for params in ({"m": 2, "new": "x"}, {}, {"m": 1}):
        with pytest.raises(SystemExit):
            restamp.changed_experiments(old, {"experiments": {"a": fp(params="P2")}, "params": {"a": params}})


def test_a_carried_provenance_names_head_and_the_platform_shown_identical():
    """The re-stamp names HEAD and the identical replications; a reference without a CPU model or
    numba's version takes the run's when every key both record agrees (the values were shown
    identical there), and keeps its own record when a key differs (glibc 2.36 against 2.41)."""
    fingerprint = fp(code="C2")
    prov = {"commit": "gone", "date": "2026-11-28", "platform": "Linux-6-x86_64-with-glibc2.36",
            "packages": {"python": "3.11.7", "numpy": "2.4.6"}}
    run = {"commit": "head", "platform": "Linux-7-x86_64-with-glibc2.36", "cpu": "AMD EPYC",
           "packages": {"python": "3.11.7", "numpy": "2.4.6", "numba": "0.68.1"}}
    out = restamp.carried(prov, run, fingerprint, "abc123", 40, "2026-12-04")
    assert (out["commit"], out["fingerprint"], out["date"]) == ("abc123", fingerprint["hash"], "2026-11-28")
    assert out["restamp"] == {"date": "2026-12-04", "identical_replications": 40}
    assert out["cpu"] == "AMD EPYC" and out["packages"]["numba"] == "0.68.1"
    other = restamp.carried(prov, {**run, "platform": "Linux-7-x86_64-with-glibc2.41"}, fingerprint, "abc123", 40, "d")
    assert "cpu" not in other and "numba" not in other["packages"]


def test_experiments_naming_a_commit_outside_the_branch_are_carried_over():
    import subprocess

    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    rec = {"experiments": {"a": {"commit": head}, "b": {"commit": "4840c8f34c31"}, "c": {"commit": f"{head}-dirty"}}}
    assert restamp.unreachable(rec) == ["b", "c"]


def test_a_calibration_is_carried_over_only_when_its_replay_gives_the_references_files(capsys):
    """The recorded corr05-control fit: its key changes with the model's code; the re-stamp takes
    the new key only when the current code's replay of the recorded values gives the reference's
    points.csv and holdout.csv byte for byte (here a stand-in replay: the reference's own bytes,
    then one value changed in its last digit)."""
    rec = {"calibrations": {"corr05-control/full": "OLD", "other/full": "SAME"}}
    new = {"calibrations": {"corr05-control/full": "NEW", "other/full": "SAME"}}
    changed = restamp.changed_calibrations(rec, new)
    assert changed == ["corr05-control/full"]
    kept = {
        f: (restamp.REFERENCE / "calibration/corr05-control" / f).read_bytes() for f in ("points.csv", "holdout.csv")
    }
    asked = []
    assert restamp.check_calibrations(changed, new, lambda name, key: asked.append((name, key)) or kept) == 1
    assert asked == [("corr05-control/full", "NEW")]
    text = kept["points.csv"].decode().splitlines()
    row = text[1].split(",")
    row[4] = row[4][:-1] + ("1" if row[4][-1] != "1" else "2")
    off = {**kept, "points.csv": "\n".join([text[0], ",".join(row), *text[2:]]).encode() + b"\n"}
    with pytest.raises(SystemExit) as done:
        restamp.check_calibrations(changed, new, lambda name, key: off)
    assert done.value.code == 2 and "points.csv" in capsys.readouterr().err


def test_a_key_of_digits_alone_is_written_quoted_and_found_again(tmp_path):
    """A record key is 16 hexadecimal digits, which may all be decimal ones: written unquoted, YAML
    reads it back as a number and no computed key ever matches (the full run of 2026-12-06 stopped
    on amir-control's key 7924424600717117). The re-stamp writes such a key quoted, as
    ``yaml.safe_dump`` does, leaves a key with letters as it is, and an unquoted one is refused
    with a sentence naming the file and the entry."""
    from simcore.calibration.record import recorded
    from simcore.errors import InputError
    from simcore.san.fit import recorded_fit

    text = "- key: c4f8bed73ef31bd2\n  calibration: amir-control\n  scale: full\n"
    digits = restamp.requote(text, "c4f8bed73ef31bd2", "7924424600717117")
    assert digits.startswith("- key: '7924424600717117'\n")
    assert restamp.requote(digits, "7924424600717117", "8af163d3da4cd81f").startswith("- key: 8af163d3da4cd81f\n")
    for read in (recorded, recorded_fit):
        path = tmp_path / "fits.yaml"
        path.write_text(digits)
        assert read(path, "7924424600717117")["calibration"] == "amir-control"
        path.write_text(digits.replace("'", ""))
        with pytest.raises(InputError, match=r"fits.yaml: key '0.key' \(7924424600717117\) is not text"):
            read(path, "7924424600717117")
