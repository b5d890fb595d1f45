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
    old = {"experiments": {"x": fp()}, "san": "S", "fits": ["K"]}
    recorded = {"experiments": {"x": {"fingerprint": fp()["hash"], "fingerprint_parts": fp()["parts"]}},
                "san": {"example": "S"}, "fits": ["K"]}
    restamp.check_was_old(recorded, old, "REV")                              # the same: carried on
    for broken in ({**recorded, "san": {"example": "other"}}, {**recorded, "fits": ["other"]},
                   {**recorded, "experiments": {"x": {"fingerprint": "h", "fingerprint_parts": fp(code="d")["parts"]}}}):
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
