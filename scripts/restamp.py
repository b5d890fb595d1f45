"""Re-stamp the committed reference after a change of code that leaves every result alone.

A fingerprint hashes the code a result depends on byte for byte, so moving a function, splitting
a file or renaming a variable invalidates the whole reference although no number changes. This
script carries the reference over such a change, and only when it can show that nothing changed:

1. ``--from REV`` names the commit whose code made the reference. In a worktree of REV, every
   recorded fingerprint (each experiment's provenance, each SAN model's ``fingerprint.json``,
   each fit's key in ``config/san/fits.yaml``) must be what REV's code computes.
2. Between REV and now only the ``code`` and ``topology`` parts may differ: a change of a spec,
   a preset, a grid or the seed changes what is simulated, and needs a rerun. The ``params`` part
   may differ only by parameters the current code adds (every earlier one keeps its value): a new
   parameter at its default, which step 3 must show changes nothing.
3. ``--results DIR`` is a workflow run of the current code (``make evaluate`` leaves one in
   ``build/evaluation/results``; any scale). Every experiment whose fingerprint changes must be
   in it under the current fingerprint, and every replication it shares with the reference
   must be identical in every value (same seeds at every scale; on the reference's platform).
   When the SAN code changes, REV's code solves and simulates each SAN model at DIR's scale, and
   its files must equal DIR's byte for byte. When a recorded calibration's key changes (its
   model's code did), the current code replays the recorded values (``simcore calibrate
   --recorded-only``), and its points and held-out points must equal the reference's
   ``calibration/ID/points.csv`` and ``holdout.csv`` byte for byte.

The experiments carried over are those whose fingerprint changes and those whose provenance names
a commit a reader cannot check out from this branch (not an ancestor of HEAD, or ``-dirty``). Then
it writes (``--write``; without it, it only reports) the new fingerprints and, for every experiment
carried over, HEAD as the commit of its code, the date and count of the identical replications,
and the CPU model of this machine where the reference records none and DIR's platform is the
reference's otherwise; and the reference's README again. HEAD must hold the code: commit the
change first (the re-stamp is then a commit of its own). Run from the repository root:
``.venv/bin/python scripts/restamp.py --from REV --results DIR [--write]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results" / "reference"
ALLOWED = {"code", "topology"}

DUMP = """
import json, sys
from pathlib import Path
import yaml
from simcore.experiments import load_spec
from simcore.experiments.fingerprint import code_fingerprint, simulation_fingerprint
from simcore.san.fit import fit_key
root = Path.cwd()
seed = yaml.safe_load((root / "config/config.yaml").read_text())["seed"]
specs = {s.id: s for s in (load_spec(p) for p in sorted((root / "config/experiments").glob("*.yaml")))}
fits = yaml.safe_load((root / "config/san/fits.yaml").read_text()) or []
calibrations = {}
for record in sorted((root / "config/calibration/fits").glob("*.yaml")):   # none in a tree before them
    from simcore.calibration.record import calibration_key
    from simcore.calibration.spec import load_calibration
    for e in yaml.safe_load(record.read_text()) or []:
        cal = load_calibration(root / f"config/calibration/{e['calibration']}.yaml")
        calibrations[f"{e['calibration']}/{e['scale']}"] = calibration_key(cal, cal.replications[e["scale"]], seed)
print(json.dumps({
    "experiments": {i: simulation_fingerprint(specs[s.source_id], seed) for i, s in specs.items()},
    "params": {i: specs[s.source_id].params() for i, s in specs.items()},
    "san": code_fingerprint("san"),
    "fits": [fit_key(root / f"config/san/{f['model']}.yaml", f["parameter"], f["low"], f["high"], f["scale"])
             for f in fits],
    "calibrations": calibrations}, default=str))
"""


def fail(message: str) -> None:
    print(f"restamp: {message}", file=sys.stderr)
    sys.exit(2)


def _env(tree: Path) -> dict:
    """The environment with ``tree``'s simcore first on the path."""
    return {**os.environ, "PYTHONPATH": str(tree)}


def fingerprints(tree: Path) -> dict:
    """Every fingerprint the code and config of ``tree`` compute."""
    out = subprocess.run([sys.executable, "-c", DUMP], cwd=tree, env=_env(tree), capture_output=True, text=True)
    if out.returncode:
        fail(f"computing the fingerprints in {tree} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def recorded() -> dict:
    """The fingerprints the committed reference records."""
    fits = yaml.safe_load((ROOT / "config/san/fits.yaml").read_text()) or []
    return {
        "experiments": {p.parent.name: json.loads(p.read_text()) for p in sorted(REFERENCE.glob("*/provenance.json"))},
        "san": {
            p.parent.name: json.loads(p.read_text())["code"] for p in sorted(REFERENCE.glob("san/*/fingerprint.json"))
        },
        "fits": [f["key"] for f in fits],
        "calibrations": {fit_name(e): e["key"] for e in calibration_entries()},
    }


def fit_name(entry: dict) -> str:
    """A recorded calibration fit's name, 'ID/scale' (as the fingerprints dump names it)."""
    return f"{entry['calibration']}/{entry['scale']}"


def calibration_entries() -> list[dict]:
    """Every recorded calibration fit (config/calibration/fits/*.yaml)."""
    return [e for record in sorted((ROOT / "config/calibration/fits").glob("*.yaml"))
            for e in yaml.safe_load(record.read_text()) or []]


def check_was_old(rec: dict, old: dict, rev: str) -> None:
    """Step 1: the reference is REV's."""
    for exp, prov in rec["experiments"].items():
        if (prov["fingerprint"], prov["fingerprint_parts"]) != (old["experiments"][exp]["hash"],
                                                                 old["experiments"][exp]["parts"]):
            fail(
                f"{exp}: the reference's fingerprint is not the one {rev}'s code computes; name the commit that made "
                "it."
            )
    for model, code in rec["san"].items():
        if code != old["san"]:
            fail(f"san/{model}: the reference's SAN code fingerprint is not {rev}'s.")
    if rec["fits"] != old["fits"]:
        fail(f"config/san/fits.yaml: the recorded keys are not the ones {rev}'s code computes.")
    if rec.get("calibrations", {}) != old.get("calibrations", {}):
        fail(f"config/calibration/fits: the recorded keys are not the ones {rev}'s code computes.")


def changed_calibrations(rec: dict, new: dict) -> list[str]:
    """The recorded calibrations ('ID/scale') whose key the current code computes otherwise."""
    return [name for name, key in rec.get("calibrations", {}).items() if new["calibrations"].get(name) != key]


def check_calibrations(changed: list[str], new: dict, replay) -> int:
    """Step 3 for calibrations: ``replay(name, key)`` (the current code replaying the recorded
    values under the new key: {file name: bytes}) gives the reference's files byte for byte."""
    for name in changed:
        calibration = name.split("/")[0]
        for file, made in replay(name, new["calibrations"][name]).items():
            kept = REFERENCE / "calibration" / calibration / file
            if not kept.exists() or kept.read_bytes() != made:
                fail(f"{kept}: the current code's replay of {name} does not give it byte for byte; refit it "
                     f"(make calibrate ID={calibration}).")
    return len(changed)


def replay(name: str, key: str) -> dict[str, bytes]:
    """The current code's points.csv and holdout.csv of the recorded fit ``name`` ('ID/scale'),
    replayed from a copy of its record under ``key``."""
    calibration, scale = name.split("/")
    entries = [{**e, "key": key} if fit_name(e) == name else e for e in calibration_entries()]
    with tempfile.TemporaryDirectory() as tmp:
        record, out = Path(tmp) / "record.yaml", Path(tmp) / "out"
        record.write_text(yaml.safe_dump(entries, sort_keys=False))
        cmd = [sys.executable, "-m", "simcore.cli", "calibrate", calibration, "--scale", scale, "--recorded-only",
               "--cache", str(record), "--out", str(out), "--jobs", str(os.cpu_count() or 1), "--progress", "off"]
        run = subprocess.run(cmd, cwd=ROOT, env=_env(ROOT), capture_output=True, text=True)
        if run.returncode:
            fail(f"replaying {name} failed: {run.stderr.strip()[-300:]}")
        return {f: (out / f).read_bytes() for f in ("points.csv", "holdout.csv")}


def changed_experiments(old: dict, new: dict) -> list[str]:
    """Step 2: the experiments whose fingerprint changes, each only in its code or machines."""
    changed = []
    for exp, now in new["experiments"].items():
        before = old["experiments"].get(exp)
        if before is None:
            fail(f"{exp}: not in {REFERENCE}; a new experiment needs a full run, not a re-stamp.")
        parts = {p for p in now["parts"] if now["parts"][p] != before["parts"].get(p)}
        if "params" in parts and only_added(old.get("params", {}).get(exp), new.get("params", {}).get(exp)):
            parts.discard("params")
            parts.add("code")           # a new parameter comes with the code that reads it
        if parts - ALLOWED:
            fail(f"{exp}: its {', '.join(sorted(parts - ALLOWED))} changed: that changes what is simulated; rerun it.")
        if parts:
            changed.append(exp)
    return changed


def only_added(before: dict | None, now: dict | None) -> bool:
    """Whether the parameters ``now`` are ``before`` with new ones added (a parameter the code now
    declares, at its default): every earlier parameter keeps its value. Whether the new ones change
    nothing is for the identical replications to show (step 3)."""
    if before is None or now is None:
        return False
    return all(k in now and now[k] == v for k, v in before.items()) and len(now) > len(before)


def unreachable(rec: dict) -> list[str]:
    """The experiments whose provenance names a commit this branch's history does not hold."""
    from simcore.experiments.provenance import unreachable_reason

    return [exp for exp, prov in rec["experiments"].items() if unreachable_reason(str(prov.get("commit")), ROOT)]


def head_commit() -> str:
    """HEAD, which must hold the code that is re-stamped (no uncommitted change to it)."""
    from simcore.experiments.provenance import git_commit

    commit = git_commit(ROOT)
    if commit.endswith("-dirty") or commit == "unknown":
        fail(f"{ROOT}: simcore/ or config/ has uncommitted changes (HEAD is {commit}); commit the code first, "
             "so the reference can name the commit that holds it.")
    return commit


def check_replications(results: Path, new: dict, changed: list[str]) -> dict[str, int]:
    """Step 3 for simulations: the run is of the current code and shares identical replications;
    returns how many each experiment shares."""
    from simcore.report.evaluation import compare_replications, read_shared

    shared = {}
    for exp in changed:
        prov = results / exp / "provenance.json"
        if not prov.exists():
            fail(f"{prov}: missing; the evidence run must hold every changed experiment.")
        if json.loads(prov.read_text())["fingerprint"] != new["experiments"][exp]["hash"]:
            fail(f"{prov}: not a run of the current code (its fingerprint is another).")
        rows, first = compare_replications(read_shared(results, REFERENCE, [exp]), "identical", 0.01)
        if rows.empty or rows.k.sum() == 0:
            fail(f"{exp}: the run shares no replication with the reference.")
        if (rows.identical < rows.k).any():
            fail(f"{first}: a shared replication differs; the change is not a pure refactor.")
        shared[exp] = int(rows.k.sum())
    return shared


def check_san(results: Path, rev_tree: Path) -> int:
    """Step 3 for SAN: REV's code gives the run's SAN files byte for byte."""
    compared = 0
    for folder in sorted((results / "san").glob("*/fingerprint.json")):
        model, meta = folder.parent.name, json.loads(folder.read_text())
        for name, extra in (("solution.csv", []), ("simulation.csv", ["--simulate", str(meta["simulate"]),
                                                                     "--seed", str(meta["seed"])])):
            mine = folder.parent / name
            if not mine.exists():
                continue
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / name
                cmd = [sys.executable, "-m", "simcore.cli", "san", f"config/san/{model}.yaml", "--scale", meta["scale"],
                       *extra, "--out", str(out), "--progress", "off"]
                run = subprocess.run(cmd, cwd=rev_tree, env=_env(rev_tree),
                                     capture_output=True, text=True)
                if run.returncode or out.read_bytes() != mine.read_bytes():
                    fail(f"{mine}: REV's code does not give it byte for byte ({run.stderr.strip()[-200:]}).")
            compared += 1
    if not compared:
        fail(f"{results / 'san'}: no SAN results to compare; the evidence run must include them.")
    return compared


def carried(prov: dict, run: dict, fingerprint: dict, commit: str, identical: int, today: str) -> dict:
    """An experiment's provenance carried over to ``commit``'s code by a run (``run``: that run's
    provenance) sharing ``identical`` replications with it, all identical."""
    from simcore.report.evaluation import platform_of

    out = {**prov, "fingerprint": fingerprint["hash"], "fingerprint_parts": fingerprint["parts"], "commit": commit,
           "restamp": {"date": today, "identical_replications": identical}}
    mine, theirs = platform_of(prov), platform_of(run)
    if all(theirs.get(k) == v for k, v in mine.items()):
        # the values were shown identical on the run's platform: what the reference lacks of it is filled in
        out["cpu"] = prov.get("cpu") or run.get("cpu")
        out["packages"] = {**run.get("packages", {}), **prov.get("packages", {})}
    return out


def write(rec: dict, new: dict, shared: dict[str, int], results: Path, commit: str) -> None:
    from datetime import date

    from simcore.report.reference import reference_readme

    for exp, identical in shared.items():
        path = REFERENCE / exp / "provenance.json"
        run = json.loads((results / exp / "provenance.json").read_text())
        prov = carried(json.loads(path.read_text()), run, new["experiments"][exp], commit, identical,
                       date.today().isoformat())
        path.write_text(json.dumps(prov, indent=2, sort_keys=True) + "\n")
    for model in rec["san"]:
        path = REFERENCE / "san" / model / "fingerprint.json"
        data = json.loads(path.read_text())
        data["code"] = new["san"]
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    fits = ROOT / "config/san/fits.yaml"
    text = fits.read_text()
    for old_key, new_key in zip(rec["fits"], new["fits"]):
        text = requote(text, old_key, new_key)
    fits.write_text(text)
    for name in changed_calibrations(rec, new):
        calibration = name.split("/")[0]
        for path in (ROOT / "config/calibration/fits" / f"{calibration}.yaml",
                     REFERENCE / "calibration" / calibration / "fit.yaml"):
            if path.exists():
                path.write_text(requote(path.read_text(), rec["calibrations"][name], new["calibrations"][name]))
    (REFERENCE / "README.md").write_text(reference_readme(REFERENCE))


def requote(text: str, old_key: str, new_key: str) -> str:
    """``text`` with the record key ``old_key`` (quoted or not) replaced by ``new_key`` as the records'
    writers (``yaml.safe_dump``) write it: quoted when YAML would read it as a number (digits alone)."""
    line = yaml.safe_dump({"key": new_key}).strip()
    return re.sub(rf"key: (['\"]?){re.escape(old_key)}\1(?=\s)", lambda _: line, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="rev", required=True, help="the commit whose code made the reference")
    parser.add_argument(
        "--results", required=True, help="a workflow run of the current code (e.g. build/evaluation/results)"
    )
    parser.add_argument("--write", action="store_true", help="write the new fingerprints (default: report only)")
    args = parser.parse_args()
    results = Path(args.results)
    with tempfile.TemporaryDirectory(prefix="restamp-") as tmp:
        tree = Path(tmp) / "rev"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.rev], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            rec, old, new = recorded(), fingerprints(tree), fingerprints(ROOT)
            check_was_old(rec, old, args.rev)
            commit = head_commit()
            changed = sorted(set(changed_experiments(old, new)) | set(unreachable(rec)))
            shared = check_replications(results, new, changed)
            san_changed = old["san"] != new["san"] or old["fits"] != new["fits"]
            files = check_san(results, tree) if san_changed else 0
            fits = check_calibrations(changed_calibrations(rec, new), new, replay)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    print(
        f"restamp: {len(changed)} experiments change only in code or machines or name a commit this branch "
        f"lacks, {sum(shared.values())} shared replications "
        "identical; SAN code "
        f"{'changed, ' + str(files) + ' SAN files identical under ' + args.rev if san_changed else 'unchanged'}; "
        f"{fits} recorded calibrations replayed byte for byte under their new keys."
    )
    if args.write:
        write(rec, new, shared, results, commit)
        print(f"restamp: new fingerprints and commit {commit} written; commit them and name this evidence.")


if __name__ == "__main__":
    main()
