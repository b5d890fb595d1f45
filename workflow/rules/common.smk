# Experiment specs, their cells and replication batches; helpers for the other rules.
import json
import os
import re
import sys
from pathlib import Path

import simcore
from simcore.experiments import SpecError, load_spec
from simcore.experiments.fingerprint import code_fingerprint, fingerprint_files, simulation_fingerprint, sync_fingerprint_file
from simcore.experiments.spec import SCALES
from simcore.inputs import read_yaml
from simcore.experiments.targets import san_figures, san_model_files

SCALE = config["scale"]
# Rules call `simcore`: the one beside the interpreter running Snakemake comes first on PATH, so
# the workflow works without an activated virtualenv (a conda env of a rule still goes before it).
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
# Under `--sdm conda`, workflow/envs/simcore.yaml installs the project from this directory (the
# environments are made by this process, before any job runs).
os.environ.update(NUMA_LB_REPRO_ROOT=str(Path(workflow.main_snakefile).resolve().parent))
SPEC_DIR = Path("config/experiments")
# The analysis and report code: aggregates, figures, tables and macros are remade when it changes
# (simulations depend on the model code through their fingerprints instead).
# A copy of the workflow without simcore/ (`make evaluate`'s) reads the installed package's code,
# which its jobs run.
_CODE_DIR = Path(workflow.main_snakefile).parent / "simcore"
_CODE_DIR = _CODE_DIR if _CODE_DIR.is_dir() else Path(simcore.__file__).parent
ANALYSIS_CODE = sorted(str(p) for pattern in ("stats/*.py", "report/*.py", "experiments/aggregate.py")
                       for p in _CODE_DIR.glob(pattern))


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
EXPERIMENT_IDS = "|".join(re.escape(i) for i in SPECS) or "(?!)"
# The words of a figure's caption in `snakemake --report` (workflow/report/figure.rst).
SPEC_CAPTION = {key: (lambda w, key=key: SPECS[w.exp][key]) for key in ("paper", "title", "source")}


wildcard_constraints:  # a wildcard is one of the known names, never a path; shell commands quote it too
    exp=EXPERIMENT_IDS,
    scale="|".join(SCALES),


def cells_name(group):
    """'c<cell>' for a job of one cell, 'c<first>-<stop>' for one of several (stop exclusive)."""
    if len(group) == 1:
        return f"c{group[0].index:03d}"
    return f"c{group[0].index:03d}-{group[-1].index + 1:03d}"


def batch_names(exp):
    """'c<cells>/r<a>-<b>' for every workflow job of a simulated experiment at SCALE."""
    spec = SPECS[exp]
    return [
        f"{cells_name(group)}/r{a:05d}-{b:05d}"
        for group in spec.cell_groups(SCALE)
        for a, b in spec.batches(SCALE, config.get("batch", 50))
    ]


def raw_files(wildcards):
    """Every raw batch file of the experiment's data, precision rounds included."""
    source = SPECS[wildcards.exp].source_id
    return raw_through(source, precision_rounds(source))


def precision_rounds(source):
    """Rounds of the precision mode of the experiment that simulates (0 at a scale without one)."""
    precision = SPECS[source].precision(SCALE)
    return precision["rounds"] if precision else 0


def readers_of(source):
    """The experiments that read ``source``'s data (their claims count in its precision rounds)."""
    return [e for e, s in SPECS.items() if s.source_id == source and e != source]


def precision_plans(source, upto=None):
    """The plan files of the rounds that run: 1, 2, ... up to the first that adds nothing, at most
    the spec's rounds (or ``upto``). Reading a plan waits for its checkpoint (Snakemake re-evaluates
    after it)."""
    plans = []
    last = precision_rounds(source) if upto is None else upto
    for k in range(1, last + 1):
        plans.append(checkpoints.precision.get(exp=source, scale=SCALE, round=str(k)).output[0])
        if not json.loads(Path(plans[-1]).read_text())["batches"]:
            break
    return plans


def raw_through(source, rounds):
    """Raw batch files of ``source`` at SCALE: the scale's own and those added by precision rounds
    1..rounds (a round that adds nothing ends the rounds)."""
    files = [f"results/raw/{source}/{SCALE}/{b}.parquet" for b in batch_names(source)]
    for plan in precision_plans(source, rounds):
        files += [f"results/raw/{source}/{SCALE}/{b}.parquet" for b in json.loads(Path(plan).read_text())["batches"]]
    return files


def spec_files(exp):
    """The files a spec is made of: itself, its preset and its data source's."""
    return [str(p) for p in SPECS[exp].files]


def fingerprint_file(exp, scale=SCALE):
    return f"results/raw/{exp}/{scale}/fingerprint.json"


def sync_fingerprints():
    """Rewrite each simulated experiment's fingerprint file (per scale) when its content changed,
    and results/scale.txt when the scale did: their mtimes rerun what depends on them even
    without Snakemake's metadata (a deleted .snakemake/, results copied from elsewhere)."""
    for exp in {spec.source_id for spec in SPECS.values()}:
        fingerprint = simulation_fingerprint(SPECS[exp], config["seed"])
        for scale in SCALES:
            sync_fingerprint_file(fingerprint_file(exp, scale), fingerprint)
    sync_fingerprint_file("results/scale.txt", SCALE)


sync_fingerprints()


MONITORED = [i for i, s in SPECS.items() if s["output"].get("monitor")]   # a queue-occupancy figure too
MONITORED_IDS = "|".join(re.escape(i) for i in MONITORED) or "(?!)"


def trace_files(exp):
    """The sample traces a table shows, for specs whose output asks for them."""
    return [f"results/{exp}/traces.txt"] if SPECS[exp]["output"].get("traces") else []


# -- SAN models (config/san/*.yaml) --------------------------------------------------------------
SAN_MODELS = [p.stem for p in san_model_files("config/san")]   # config/san/fits.yaml is the record of fits


wildcard_constraints:
    model="|".join(re.escape(m) for m in SAN_MODELS) or "(?!)",


SAN_CODE = code_fingerprint("san")


def san_file(model):
    return read_yaml(f"config/san/{model}.yaml") or {}


SAN_FITS = [m for m in SAN_MODELS if "fit" in san_file(m)]
SAN_FIGURES = san_figures("config/san")   # published SAN figure id -> its models, e.g. corr05-fig8
SAN_FIGURE_IDS = "|".join(re.escape(f) for f in SAN_FIGURES) or "(?!)"


def san_reps(model):
    """Trajectories of the cross-check: the model file's solve.simulate for this scale, else config's."""
    own = (san_file(model).get("solve") or {}).get("simulate") or {}
    return own.get(SCALE, config["san"]["simulate"][SCALE])


def san_fingerprint_file(wildcards):
    return f"results/san/{wildcards.model}/fingerprint.json"


def sync_san_fingerprints():
    """Per SAN model: solver code, scale, trajectories and seed; rewritten only when changed, an
    input of its solution, simulation and fit (whose paths do not name the scale)."""
    for model in SAN_MODELS:
        fingerprint = {"code": SAN_CODE, "scale": SCALE, "seed": config["seed"],
                       "simulate": san_reps(model)}
        sync_fingerprint_file(f"results/san/{model}/fingerprint.json", fingerprint)


sync_san_fingerprints()


# -- calibrated controls (config/calibration/*.yaml; rules in calibration.smk) -----------------------
CALIBRATIONS = sorted({s.data["calibration"] for s in SPECS.values() if s.data.get("calibration")})


wildcard_constraints:
    calibration="|".join(re.escape(c) for c in CALIBRATIONS) or "(?!)",


def calibration_code(wildcards):
    """The code a calibration's simulations run (its model's fingerprint files)."""
    from simcore.inputs import read_yaml

    model = read_yaml(f"config/calibration/{wildcards.calibration}.yaml")["model"]
    return [str(p) for p in fingerprint_files(model)]
