# Experiment specs, their cells and replication batches; helpers for the other rules.
import hashlib
import json
import re
import sys
from pathlib import Path

import yaml

from simcore.experiments import SpecError, load_spec
from simcore.experiments.provenance import code_fingerprint

SCALE = config["scale"]
SPEC_DIR = Path("config/experiments")


def _load_specs():
    try:
        specs = {p.stem: load_spec(p) for p in sorted(SPEC_DIR.glob("*.yaml"))}
    except SpecError as err:
        sys.exit(f"simcore: error: {err}")
    wanted = config.get("experiments", "all")
    if wanted != "all":
        unknown = [w for w in wanted if w not in specs]
        if unknown:
            sys.exit(f"config: key 'experiments': unknown experiment '{unknown[0]}'.")
        keep = set(wanted) | {specs[w].source_id for w in wanted}
        specs = {k: v for k, v in specs.items() if k in keep}
    return specs


SPECS = _load_specs()
PAPERS = sorted({spec["paper"] for spec in SPECS.values()})
FIGURES = [i for i, s in SPECS.items() if s["output"]["kind"] != "table"]
FIGURE_IDS = "|".join(re.escape(i) for i in FIGURES) or "(?!)"  # keeps paper/figures/san-*.pdf apart


def batch_names(exp):
    """'c<cell>/r<a>-<b>' for every workflow job of a simulated experiment at SCALE."""
    spec = SPECS[exp]
    return [
        f"c{cell.index:03d}/r{a:05d}-{b:05d}"
        for cell in spec.cells(SCALE)
        for a, b in spec.batches(SCALE, config.get("batch", 50))
    ]


def raw_files(wildcards):
    source = SPECS[wildcards.exp].source_id
    return [f"results/raw/{source}/{SCALE}/{b}.parquet" for b in batch_names(source)]


def spec_files(exp):
    """The files a spec is made of: itself, its preset and its data source."""
    spec = SPECS[exp]
    files = [str(spec.path)]
    if "preset" in spec.data:
        files.append(f"config/presets/{spec['preset']}.yaml")
    if spec.source_id != exp:
        files += spec_files(spec.source_id)
    return files


def simulation_fingerprint(exp):
    """What a simulation depends on; a change reruns the experiment's simulate jobs."""
    spec = SPECS[exp]
    relevant = {"model": spec["model"], "params": spec.params(), "policies": spec.policies,
                "grid": spec.grid, "seed": config["seed"], "code": code_fingerprint(spec["model"])}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()[:16]


def trace_files(exp):
    """The sample traces a table shows, for specs whose output asks for them."""
    return [f"results/{exp}/traces.txt"] if SPECS[exp]["output"].get("traces") else []


# -- SAN models (config/san/*.yaml) --------------------------------------------------------------
SAN_MODELS = sorted(p.stem for p in Path("config/san").glob("*.yaml"))
SAN_CODE = code_fingerprint("san")  # a param: solutions rerun when the solver or a topology changes


def san_file(model):
    return yaml.safe_load(Path(f"config/san/{model}.yaml").read_text()) or {}


SAN_FITS = [m for m in SAN_MODELS if "fit" in san_file(m)]
FIG8 = ["corr05-fig8-2sched", "corr05-fig8-4sched"]


def san_reps(wildcards):
    """Trajectories of the cross-check: the model file's solve.simulate for this scale, else config's."""
    own = (san_file(wildcards.model).get("solve") or {}).get("simulate") or {}
    return own.get(SCALE, config["san"]["simulate"][SCALE])
