"""The simcore command: list, validate, run, aggregate, precision, figure, table, report-macros, topology, trace,
targets, params, san, san-fit, calibrate, calibration-report, san-compare, run-profile, evaluate, save-reference,
report-from-results, check-layout.

Errors are one sentence on stderr naming the file and key at fault; exit code 2 for bad input,
1 for an internal failure (and for `evaluate`, a run inconsistent with the reference). Heavy libraries are imported only
by the subcommands that use them.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

from simcore.core.output import is_temporary
from simcore.errors import InputError
from simcore.experiments.spec import SCALES, SpecError, find_spec, load_config, load_spec


def _progress(args, label: str):
    """The command's progress reporter (:mod:`simcore.progress`): stderr only."""
    from simcore.progress import reporter

    return reporter(label, args.progress)


def _spec(args):
    return load_spec(find_spec(args.experiment, args.specs))


def _range(text: str, option: str) -> range:
    """``A:B`` (integers, 0 <= A < B) as range(A, B), or a one-sentence error naming ``option``."""
    a, sep, b = text.partition(":")
    try:
        start, stop = int(a), int(b)
    except ValueError:
        raise SpecError(f"{option} '{text}': expected A:B with integers A < B.") from None
    if not sep or start < 0 or stop <= start:
        raise SpecError(f"{option} '{text}': expected A:B with integers 0 <= A < B.")
    return range(start, stop)


def _reps(text: str) -> range:
    from simcore.experiments.spec import MAX_REPLICATIONS

    reps = _range(text, "--reps")
    if reps.stop > MAX_REPLICATIONS:
        raise SpecError(f"--reps '{text}': replications up to {reps.stop:,}, more than the {MAX_REPLICATIONS:,} "
                        "a cell may have.")
    return reps


def _all_specs(specs_dir: str):
    paths = sorted(Path(specs_dir).glob("*.yaml"))
    if not paths:
        raise SpecError(f"{specs_dir}: holds no experiment specs (*.yaml).")
    return [load_spec(p) for p in paths]


def cmd_list(args) -> int:
    rows = [[spec.id, spec["paper"], spec["model"], str(len(spec.cells(args.scale))),
             str(spec.replications(args.scale)), f"{spec['source']}: {spec['title']}"]
            for spec in _all_specs(args.specs)]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        left = [value.ljust(w) for value, w in zip(row[:3], widths)]
        print(f"{'  '.join(left)}  {row[3]:>{widths[3]}} cells x {row[4]:>{widths[4]}} reps  {row[5]}")
    return 0


def cmd_validate(args) -> int:
    specs = [load_spec(find_spec(i, args.specs)) for i in args.experiments] or _all_specs(args.specs)
    load_config(args.config)
    for spec in specs:
        print(f"{spec.path}: ok ({len(spec.all_cells())} cells, policies {', '.join(spec.policies)})")
    return 0


def _check_resources(spec, cells, overrides: dict, reps: int) -> None:
    """Before any replication runs: each cell's state must fit in memory, and the whole call's
    estimated CPU time stay under the time limit (printed when it is long)."""
    from simcore.resources import check_run, check_time, replication_seconds

    seconds = 0.0
    for cell in cells:
        params = spec.params({**cell.values, **overrides})
        check_run(spec["model"], params, f"{spec.path}: cell {cell.index}")
        seconds += replication_seconds(spec["model"], params) * reps * len(spec.policies)
    what = f"{spec.path}: {len(cells):,} cell(s) x {reps:,} replication(s) x {len(spec.policies)} policies"
    note = check_time(seconds, what)
    if note:
        print(f"simcore run: {note}", file=sys.stderr)


def cmd_run(args) -> int:
    import pandas as pd

    from simcore.experiments.runner import run_batch, write_batch

    spec = _spec(args)
    spec.scale(args.scale)
    reps = _reps(args.reps)
    overrides = spec.parse_overrides(args.set)
    if args.cells is not None:
        span = _range(args.cells, "--cells")
        cells = spec.cells_between(args.scale, span.start, span.stop)
    else:
        cells = [spec.cell(args.cell)]
    _check_resources(spec, cells, overrides, len(reps))
    seed = args.seed if args.seed is not None else load_config(args.config)["seed"]
    gc.freeze()      # what is loaded so far lives as long as the job: the collector need not scan it again
    label = f"cell {cells[0].index}" if len(cells) == 1 else f"cells {cells[0].index}-{cells[-1].index}"
    total, frames = len(cells) * len(reps), []
    with _progress(args, f"simcore run {spec.id} {label}") as progress:
        for k, cell in enumerate(cells):
            done = k * len(reps) - reps.start + 1
            frames.append(run_batch(spec, cell.index, reps, seed, overrides,
                                    lambda rep, done=done: progress(done + rep, total, "replications")))
    write_batch(args.out, pd.concat(frames, ignore_index=True), spec, seed, overrides)
    return 0


def cmd_aggregate(args) -> int:
    from simcore.experiments.aggregate import aggregate

    spec = _spec(args)
    spec.scale(args.scale)
    seed = load_config(args.config)["seed"]
    result = aggregate(spec, args.raw, Path(args.outdir), args.scale, seed, Path(args.config), args.plans or ())
    verdicts = result["claims"]["verdict"].value_counts().to_dict()
    print(f"{spec.id}: {len(result['summary'])} summary rows; claims {verdicts or 'none'}", file=sys.stderr)
    return 0


def cmd_precision(args) -> int:
    from simcore.core.output import write_json
    from simcore.experiments.aggregate import load_raw
    from simcore.experiments.precision import plan_round

    spec = _spec(args)
    if spec.source_id != spec.id:
        raise SpecError(f"{spec.path}: key 'data_from': precision rounds belong to '{spec.source_id}', "
                        "the experiment that simulates.")
    if spec.precision(args.scale) is None:
        raise SpecError(f"{spec.path}: key 'scales.{args.scale}.precision' is not given: this scale has no "
                        "precision mode.")
    readers = [s for s in _all_specs(args.specs) if s.source_id == spec.id and s.id != spec.id]
    raw, _ = load_raw(spec, args.raw, load_config(args.config)["seed"])
    plan = plan_round([spec, *readers], raw, args.scale, args.round)
    write_json(Path(args.out), plan)
    print(f"{spec.id} precision round {args.round}: {len(plan['batches'])} batches ({plan['reason']})", file=sys.stderr)
    return 0


def cmd_figure(args) -> int:
    from simcore.report.figures import make_figure, make_monitor_figure

    (make_monitor_figure if args.monitor else make_figure)(_spec(args), Path(args.results), Path(args.out))
    return 0


def cmd_table(args) -> int:
    from simcore.report.tables import make_table

    make_table(_spec(args), Path(args.results), Path(args.out))
    return 0


def cmd_report_macros(args) -> int:
    from simcore.experiments.spec import load_untested
    from simcore.report.inputs import write_report_inputs

    untested = load_untested(args.untested)
    write_report_inputs(_all_specs(args.specs), Path(args.results), Path(args.out), untested,
                        reference=Path(args.reference))
    return 0


def cmd_topology(args) -> int:
    from simcore.topology import load_topology, this_machine
    from simcore.topology.domains import BUILDERS, DEFAULT_NODE_GROUPS, describe

    if args.this_machine == bool(args.machine):
        raise SpecError("topology: give a catalog name or a SLIT file, or --this-machine (not both).")
    machine = this_machine(args.sysfs) if args.this_machine else load_topology(args.machine, args.catalog)
    for builder in [args.builder] if args.builder else BUILDERS:
        print(describe(machine, builder, node_groups=args.node_groups or DEFAULT_NODE_GROUPS), end="\n\n")
    return 0


def cmd_trace(args) -> int:
    from simcore.core.output import write_text
    from simcore.core.rng import Streams, replication_seed

    spec = _spec(args)
    if args.monitor is not None:
        return _monitor(args, spec)
    if not hasattr(spec.model, "trace_replication"):
        raise SpecError(f"{spec.path}: key 'model': model '{spec['model']}' has no per-task trace (try --monitor).")
    wanted = spec["output"].get("traces", {})
    policies, cell, rep, params, seed = _traced_run(args, spec, wanted)
    tasks = args.tasks or wanted.get("tasks")
    migrated = args.migrated_only or wanted.get("migrated_only", False)
    out = []
    for policy in policies:
        streams = Streams(replication_seed(seed, spec.id, spec.seed_cell(cell.index), rep))
        lines = spec.model.trace_replication(params, policy, streams, migrated_only=migrated)
        if len(policies) > 1:
            out.append(f"# {policy}: cell {cell.index}, replication {rep}")
        out += lines[:tasks] if tasks else lines
    text = "\n".join(out) + "\n"
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return 0


def _traced_run(args, spec, wanted: dict):
    """The policies, cell, replication, parameters and root seed of one traced or monitored run: the
    command line's, else the spec's ``wanted`` section (output.traces or output.monitor), else defaults."""
    policies = [args.policy] if args.policy else wanted.get("policies", spec.policies)
    for policy in policies:
        if policy not in spec.policies:
            raise SpecError(f"--policy '{policy}': not one of {spec.path}'s policies ({', '.join(spec.policies)}).")
    cell = spec.cell(args.cell if args.cell is not None else wanted.get("cell", 0))
    rep = args.rep if args.rep is not None else wanted.get("rep", 0)
    params = spec.params({**cell.values, **spec.parse_overrides(args.set)})
    seed = args.seed if args.seed is not None else load_config(args.config)["seed"]
    return policies, cell, rep, params, seed


def _monitor(args, spec) -> int:
    """``trace --monitor PERIOD:TIME``: the model's queues sampled during one replication, as CSV."""
    from simcore.core.monitor import parse_monitor
    from simcore.core.output import write_text
    from simcore.core.rng import Streams, replication_seed

    if not hasattr(spec.model, "monitor_replication"):
        raise SpecError(f"{spec.path}: key 'model': model '{spec['model']}' has no queue monitor.")
    wanted = spec["output"].get("monitor") or {}
    if args.monitor:
        period, duration = parse_monitor(args.monitor)
    elif wanted:
        period, duration = float(wanted["period"]), float(wanted["time"])
    else:
        raise SpecError(f"--monitor: give PERIOD:TIME; {spec.path} has no output.monitor to take them from.")
    policies, cell, rep, params, seed = _traced_run(args, spec, wanted)
    frames = []
    for policy in policies:
        streams = Streams(replication_seed(seed, spec.id, spec.seed_cell(cell.index), rep))
        frames.append(spec.model.monitor_replication(params, policy, streams, period, duration).assign(policy=policy))
    import pandas as pd

    text = pd.concat(frames)[["policy", "time", "queue", "value"]].to_csv(index=False)
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return 0


def cmd_targets(args) -> int:
    from simcore.experiments.targets import targets

    print(" ".join(targets(args.experiment, args.specs, args.san)))
    return 0


def cmd_params(args) -> int:
    from simcore.models import MODELS, get_model

    if args.model not in MODELS:
        raise InputError(f"params: unknown model '{args.model}' (known: {', '.join(MODELS)}).")
    model = get_model(args.model)
    if args.metrics:
        for name, metric in model.METRICS.items():
            print(f"{name} ({metric.describe()})\n    {metric.doc}")
        return 0
    from simcore.models.registry import policy_names, users

    for name, p in model.PARAMETERS.items():
        used = users(args.model, name)
        by = f"; policies {', '.join(used)}" if used else ""
        print(f"{name} = {p.default!r}  ({p.domain.describe()}{by})\n    {p.doc}")
    print(f"policies: {', '.join(policy_names(args.model))}")
    return 0


def _check_san_resources(model: str, scale: str | None) -> None:
    """Refuse, before the descriptor is built, a SAN model whose product space would not fit in
    memory or take too long to build, and say so when building or a product will take a while
    (:func:`simcore.resources.check_san`)."""
    from simcore.resources import check_san
    from simcore.san.model import load_san

    note = check_san(load_san(model, scale))
    if note:
        print(f"simcore san: {note}", file=sys.stderr)


def cmd_san(args) -> int:
    from simcore.san.run import parse_measures, simulate_to_csv, solve_to_csv

    if args.simulate is None:
        _check_san_resources(args.model, args.scale)
    with _progress(args, f"simcore san {Path(args.model).stem}") as progress:
        if args.simulate is not None:
            summary = simulate_to_csv(args.model, args.out, args.times, parse_measures(args.measure), args.simulate,
                                      args.seed, args.scale, progress)
        else:
            summary = solve_to_csv(args.model, args.out, args.times, parse_measures(args.measure), args.steady,
                                   args.eps, args.method, args.transient, args.scale, progress)
    print(summary, file=sys.stderr)
    return 0


def cmd_san_fit(args) -> int:
    from simcore.san.fit import fit_to_csv

    _check_san_resources(args.model, args.scale)
    with _progress(args, f"simcore san-fit {Path(args.model).stem}") as progress:
        summary = fit_to_csv(args.model, args.parameter, args.bounds, args.out, args.scale, progress,
                             args.cache, args.record)
    print(summary, file=sys.stderr)
    return 0


def cmd_calibrate(args) -> int:
    from simcore.calibration.run import calibrate
    from simcore.calibration.spec import find_calibration, load_calibration

    cal = load_calibration(find_calibration(args.calibration, args.calibrations), args.specs)
    seed = args.seed if args.seed is not None else load_config(args.config)["seed"]
    with _progress(args, f"simcore calibrate {cal.id}") as progress:
        summary = calibrate(cal, args.scale, Path(args.out), seed, args.jobs, progress,
                            Path(args.cache) if args.cache else None, Path(args.record) if args.record else None,
                            not args.no_holdout, args.recorded_only)
    print(summary, file=sys.stderr)
    return 0


def cmd_calibration_report(args) -> int:
    from simcore.calibration.spec import find_calibration, load_calibration
    from simcore.report.calibration import write

    cal = load_calibration(find_calibration(args.calibration, args.calibrations), args.specs)
    folder = Path(args.results) / cal.id
    if not (folder / "fit.yaml").is_file():
        raise InputError(
            f"--results: {folder} holds no fit of {cal.id} (fit.yaml); run `simcore calibrate {cal.id}` first."
        )
    write(cal, folder, Path(args.tex), Path(args.figure), f"figures/{Path(args.figure).name}")
    print(f"calibration-report: {args.tex}, {args.figure}", file=sys.stderr)
    return 0


def cmd_san_compare(args) -> int:
    from simcore.report.san_published import compare

    print(compare(args.models, Path(args.results), args.scale, Path(args.figure), Path(args.tex),
                  Path(args.claims) if args.claims else None), file=sys.stderr)
    return 0


def cmd_san_figure(args) -> int:
    from simcore.report.san import make_figure

    make_figure(args.model, Path(args.results), Path(args.out))
    return 0


def cmd_run_profile(args) -> int:
    from simcore.core.output import write_text
    from simcore.report.run_profile import draw_profile, load_jobs, markdown_times, read_jobs, save_jobs

    if args.jobs:
        jobs, cores = read_jobs(Path(args.jobs))
        cores = args.cores or cores
    else:
        jobs, cores = load_jobs(Path(args.benchmarks), args.scale), args.cores or os.cpu_count() or 1
        if args.save_jobs:
            save_jobs(Path(args.benchmarks), args.scale, cores, Path(args.save_jobs))
    print(draw_profile(jobs, args.scale, Path(args.figure), Path(args.tex), cores), file=sys.stderr)
    if args.markdown:
        write_text(Path(args.markdown), markdown_times(jobs, cores))
    return 0


def cmd_save_reference(args) -> int:
    from simcore.experiments.targets import san_figures
    from simcore.report.reference import save_reference

    ids = sorted(p.stem for p in Path(args.specs).glob("*.yaml"))
    cores = args.cores or os.cpu_count() or 1
    if args.jobs_out and not args.experiments:
        raise InputError("--jobs-out: only with --experiments (a whole run's jobs go to OUT/jobs-full.csv).")
    if args.experiments:
        from simcore.report.reference import update_reference

        jobs_out = Path(args.jobs_out) if args.jobs_out else Path(args.out) / "jobs-full-rerun.csv"
        written = update_reference(Path(args.results), args.experiments, ids, sorted(san_figures(args.san)),
                                   Path(args.benchmarks), Path(args.out), cores, jobs_out)
    else:
        written = save_reference(Path(args.results), ids, sorted(san_figures(args.san)), Path(args.benchmarks),
                                 Path(args.out), cores)
    print(f"save-reference: {written} files in {args.out}", file=sys.stderr)
    return 0


def cmd_report_from_results(args) -> int:
    from simcore.experiments.spec import load_untested
    from simcore.report.reference import rebuild_report

    with _progress(args, "simcore report-from-results") as progress:
        made = rebuild_report(Path(args.results), Path(args.paper), _all_specs(args.specs), Path(args.san),
                              load_untested(args.untested), progress)
    print(f"report-from-results: {len(made)} report inputs in {args.paper} from {args.results}", file=sys.stderr)
    return 0


def cmd_evaluate(args) -> int:
    from simcore.core.output import write_text
    from simcore.experiments.targets import san_figures, targets
    from simcore.report.evaluation import WITHIN_CHANCE, evaluate, markdown

    ids = sorted(p.stem for p in Path(args.specs).glob("*.yaml"))
    figures = san_figures(args.san)
    root = Path(args.results).resolve().parent     # the run's folder: its paper/ is beside its results/
    wanted = [root / t for name in [*ids, *figures] for t in targets(name, args.specs, args.san)]
    report = root / "paper/build/report.pdf"
    wanted.append(report)
    from simcore.report.evaluation import san_tolerances

    result = evaluate(Path(args.results), Path(args.reference), ids, set(figures), wanted, args.alpha,
                      allow_changed=args.allow_changed, replications=args.replications, report=str(report),
                      san_tolerance=san_tolerances(Path(args.san), figures))
    result.scorecard = _scorecard(args, Path(args.reference))
    write_text(Path(args.out), markdown(result) + "\n")
    state = "consistent" if result.ok else "INCONSISTENT"
    failing = [e for e, v in result.replication_verdicts.items() if v != WITHIN_CHANCE]
    print(f"evaluate: {state} ({len(result.missing)} missing outputs, {len(result.inconsistent_claims)} claims and "
          f"{len(result.inconsistent_means)} means differ beyond chance, {len(failing)} experiments' shared "
          f"replications differ{': ' + ', '.join(failing) if failing else ''}); see {args.out}", file=sys.stderr)
    return 0 if result.ok else 1


def _scorecard(args, reference: Path) -> dict:
    """The reference's standing counts over every claim (the report's first page)."""
    from simcore.report.scorecard import STANDINGS, figure_claims, standing_counts

    per_paper = standing_counts([*_all_specs(args.specs), *figure_claims(Path(args.san))], reference)
    return {k: sum(t[k] for t in per_paper.values()) for k in STANDINGS}


def cmd_check_layout(args) -> int:
    from simcore.report.layout import MAX_OVERFULL_PT, check_log

    faults = check_log(Path(args.log))
    for fault in faults:
        print(f"check-layout: {fault}", file=sys.stderr)
    if faults:
        print(f"check-layout: {args.log}: {len(faults)} layout faults (floats too large for their page, boxes "
              f"more than {MAX_OVERFULL_PT:g} pt past the margin).", file=sys.stderr)
    return 1 if faults else 0


def cmd_san_report(args) -> int:
    from simcore.report.san import write_report

    write_report(Path(args.results), Path(args.out))
    return 0


ID_HELP = "experiment id (config/experiments/ID.yaml; see `simcore list`)"
SCALE_HELP = "smoke, quick or full: replications per cell, and the cells smoke runs (default: full)"
RESULTS_HELP = "folder of aggregated results (results/ID/summary.csv, ...)"
SAN_RESULTS_HELP = "folder of SAN results (NAME/solution.csv, simulation.csv, fit.csv)"
SAN_MODEL_HELP = "a SAN model file (config/san/*.yaml)"
EXAMPLES = """examples:
  simcore list --scale smoke                      every experiment, its cells and replications
  simcore run amir-table2 --cell 0 --reps 0:10 --scale quick --out /tmp/raw.parquet
  simcore targets corr05-fig8                     what `make figure ID=corr05-fig8` builds
  simcore topology superdome-16x4                 a machine and the sched domains of each builder
  simcore params numa                             every parameter of the NUMA model and its meaning
  simcore san config/san/example.yaml --times 0:30:0.5 --out /tmp/example.csv
  simcore evaluate                                a run (results/) against results/reference/

The workflow runs these for you: `make reproduce SCALE=smoke|quick|full`, `make figure ID=...`.
Run `simcore COMMAND --help` for one command's options.
"""


def _add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", metavar="MODE",
                        help="progress on stderr: auto (a bar on a terminal, else a line every 10 s), bar, lines "
                             "or off (default: $SIMCORE_PROGRESS, else auto)")


def _one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters (from a key or value) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _at_least(low: int):
    """An argparse type: an integer >= ``low`` (seeds, indices and counts are never negative)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    return parse


INDEX, COUNT = _at_least(0), _at_least(1)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one sentence on stderr and exit code 2 (no usage block)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {_one_line(message)}; see `{self.prog} --help`.\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="simcore", description=__doc__.splitlines()[0], epilog=EXAMPLES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default="config/experiments", help="folder of experiment specs")
    parser.add_argument("--config", default="config/config.yaml", help="global configuration (root seed)")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, show the Python traceback (also SIMCORE_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, func, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    for commands in (_experiment_commands, _output_commands, _san_commands, _calibration_commands, _reference_commands):
        commands(add)
    return parser


def _experiment_commands(add) -> None:
    """The experiments' commands: list, validate, run, aggregate, precision."""
    p = add("list", cmd_list, "list the experiments with their cells and replications")
    p.add_argument("--scale", choices=SCALES, default="full", help=SCALE_HELP)
    p = add("validate", cmd_validate, "check experiment specs against the schema and the models")
    p.add_argument("experiments", nargs="*", metavar="ID", help="experiment ids (default: every spec)")
    p = add("run", cmd_run, "run replications A..B-1 of one cell for every policy")
    p.add_argument("experiment", metavar="ID", help=ID_HELP)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--cell", type=INDEX, metavar="K", help="cell index in the full grid")
    which.add_argument("--cells", metavar="A:B", help="the scale's cells with index A <= K < B, in one file")
    p.add_argument("--reps", required=True, metavar="A:B", help="replication range, B exclusive")
    p.add_argument("--out", required=True, metavar="FILE", help="raw rows (parquet), written atomically")
    p.add_argument("--scale", choices=SCALES, default="full", help=SCALE_HELP)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a model parameter")
    p.add_argument("--seed", type=INDEX, help="root seed (default: config/config.yaml)")
    _add_progress(p)
    p = add("aggregate", cmd_aggregate, "summary, claims, replications and provenance of one experiment")
    p.add_argument("experiment", metavar="ID", help=ID_HELP)
    p.add_argument("--raw", nargs="+", required=True, metavar="FILE",
                   help="raw batch files (parquet); refused unless made by the current spec, seed and code")
    p.add_argument("--outdir", required=True, metavar="DIR", help="where summary, claims, replications and "
                                                                   "provenance go (results/ID)")
    p.add_argument("--scale", choices=SCALES, default="full", help=SCALE_HELP)
    p.add_argument(
        "--plans", nargs="*", metavar="FILE", help="the precision rounds' plan files, kept in the provenance"
    )
    p = add("precision", cmd_precision, "plan a precision round: the replication batches that would decide the "
                                        "experiment's inconclusive claims (docs/statistics.md)")
    p.add_argument("experiment", metavar="ID", help=ID_HELP)
    p.add_argument("--round", type=COUNT, required=True, metavar="K", help="the round (1, 2, ...)")
    p.add_argument("--raw", nargs="+", required=True, metavar="FILE",
                   help="raw batch files so far: the scale's own and those of rounds before K")
    p.add_argument("--out", required=True, metavar="FILE", help="the plan (JSON), written atomically")
    p.add_argument("--scale", choices=SCALES, default="full", help=SCALE_HELP)


def _output_commands(add) -> None:
    """The outputs' commands: figure, table, report-macros, topology, trace, targets, params."""
    for name, func, what in (("figure", cmd_figure, "draw the figure of one experiment (PDF)"),
                             ("table", cmd_table, "write the LaTeX table of one experiment")):
        p = add(name, func, what)
        p.add_argument("experiment", metavar="ID", help=ID_HELP)
        p.add_argument("--results", default="results", metavar="DIR", help=RESULTS_HELP)
        p.add_argument("--out", required=True, metavar="FILE", help="output file, written atomically")
        if name == "figure":
            p.add_argument("--monitor", action="store_true",
                           help="the queue-occupancy figure of output.monitor (from results/ID/monitor.csv) instead")
    p = add("report-macros", cmd_report_macros, "numbers.tex macros, scorecard and provenance for the report")
    p.add_argument("--results", default="results", metavar="DIR", help=RESULTS_HELP)
    p.add_argument("--out", required=True, metavar="DIR", help="paper/generated")
    p.add_argument("--untested", default="config/untested.yaml", metavar="FILE",
                   help="published results no experiment tests, with reasons (default: %(default)s)")
    p.add_argument("--reference", default="results/reference", metavar="DIR",
                   help="the committed reference, whose jobs-SCALE.csv give the measured times (default: %(default)s)")
    p = add("topology", cmd_topology, "show a machine and the sched domains each builder makes")
    p.add_argument("machine", nargs="?", metavar="NAME|FILE", help="catalog name or topology YAML")
    p.add_argument("--this-machine", action="store_true", help="read /sys/devices/system/node")
    p.add_argument("--sysfs", default="/sys/devices/system/node", help=argparse.SUPPRESS)
    p.add_argument("--builder", choices=("linux-2level", "multilevel"), help="only this builder")
    p.add_argument("--node-groups", choices=("per-node", "child-spans"),
                   help="groups of the node levels (default: the numa model's node_groups default)")
    p.add_argument("--catalog", default="config/topologies", metavar="DIR", help="folder of catalog machines")
    p = add(
        "trace", cmd_trace, "one replication's per-task event trace (mehta style), or its queues over time (--monitor)"
    )
    p.add_argument("experiment", metavar="ID", help=ID_HELP)
    p.add_argument("--cell", type=INDEX, metavar="K", help="grid cell (default: the spec's output.traces, else 0)")
    p.add_argument("--rep", type=INDEX, metavar="R", help="replication index (same seeds as `run`; default 0)")
    p.add_argument("--policy", help="one policy (default: the spec's output.traces policies, else all)")
    p.add_argument("--tasks", type=COUNT, metavar="N", help="only the first N tasks")
    p.add_argument("--migrated-only", action="store_true", help="only tasks the balancer moved")
    p.add_argument("--monitor", metavar="PERIOD:TIME", nargs="?", const="",
                   help="instead of task traces, sample the model's queues every PERIOD time units for TIME (like "
                        "Netmon's -d and -t); CSV: policy, time, queue, value. Without a value: the spec's "
                        "output.monitor (its period, time, cell, replication and policies)")
    p.add_argument("--out", metavar="FILE", help="write here (atomically) instead of standard output")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a model parameter")
    p.add_argument("--seed", type=INDEX, help="root seed (default: config/config.yaml)")
    p = add("targets", cmd_targets, "the workflow targets of one id: an experiment's table (and figure), "
                                    "a SAN model's figure (san-NAME) or a published SAN figure (corr05-fig8)")
    p.add_argument("experiment", metavar="ID", help="experiment id, san-MODEL, or a SAN figure id")
    p.add_argument("--san", default="config/san", metavar="DIR", help="folder of SAN model files")
    p = add("params", cmd_params, "a model's parameters (default, type and domain, meaning), or its metrics")
    p.add_argument("model", metavar="MODEL", help="numa, cluster, pools, cosched or pvm")
    p.add_argument("--metrics", action="store_true", help="list the metrics instead")


def _san_commands(add) -> None:
    """The SAN's commands: san, san-fit."""
    p = add("san", cmd_san, "solve a SAN model (transient by uniformization or Krylov, steady state) into a CSV")
    p.add_argument("model", metavar="MODEL.yaml", help=SAN_MODEL_HELP)
    p.add_argument("--times", metavar="A:B:STEP",
                   help="time grid, B included (or a comma list); default: the model file's solve.times")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="CSV: time, each measure, mass, error_bound (written atomically)")
    p.add_argument("--measure", action="append", metavar="NAME=EXPR",
                   help="expected value of an expression (a predicate gives a probability)")
    p.add_argument("--steady", action="store_true",
                   help="add a steady-state row (time inf; error_bound holds the residual ||pi Q||_1)")
    p.add_argument("--method", choices=("gmres", "power"), default="gmres", help="steady-state method")
    p.add_argument("--transient", choices=("uniformization", "krylov"),
                   help="transient method (default: the model file's solve.method, else uniformization)")
    p.add_argument("--eps", type=float,
                   help="uniformization: error bound (1-norm) at the last time; krylov: local error per unit "
                        "time (default: the model file's solve.tol, else 1e-10)")
    p.add_argument("--scale", choices=("smoke", "quick", "full"),
                   help="for model files that give generator arguments per scale")
    p.add_argument("--simulate", type=int, metavar="REPS",
                   help="instead of solving, simulate REPS trajectories on SimPy (the cross-check): "
                        "CSV of time, each measure and its 95%% interval (<m>_low, <m>_high)")
    p.add_argument("--seed", type=INDEX, default=0, help="root seed of --simulate")
    _add_progress(p)
    p = add("san-fit", cmd_san_fit, "fit one parameter of a SAN model file to its published curve")
    p.add_argument("model", metavar="MODEL.yaml", help=SAN_MODEL_HELP)
    p.add_argument("--parameter", required=True, metavar="NAME", help="a parameter of the model (or its generator)")
    p.add_argument("--bounds", required=True, metavar="LOW:HIGH", help="search interval (log scale)")
    p.add_argument("--scale", choices=("smoke", "quick", "full"),
                   help="for model files that give generator arguments per scale")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="CSV: parameter, value, rmse, evaluations, low, high, computed (date of a recorded fit)")
    p.add_argument("--cache", metavar="RECORD.yaml",
                   help="take the fit from this record if one was made with the same SAN code, model, "
                        "parameter, bounds and scale (e.g. config/san/fits.yaml)")
    p.add_argument("--record", metavar="RECORD.yaml", help="store a fit made now in this record")
    _add_progress(p)


def _calibration_commands(add) -> None:
    """Calibrate, calibration-report and the SAN's report commands."""
    p = add("calibrate", cmd_calibrate, "fit a paper's control on its published baseline points, holding "
                                        "each machine out in turn (config/calibration/ID.yaml)")
    p.add_argument("calibration", metavar="ID", help="calibration id (config/calibration/ID.yaml) or file")
    p.add_argument("--calibrations", default="config/calibration", metavar="DIR", help="folder of calibrations")
    p.add_argument("--scale", choices=("smoke", "quick", "full"), default="full", help="replications per point")
    p.add_argument(
        "--out", required=True, metavar="DIR", help="fit.yaml, points.csv and holdout.csv, written atomically"
    )
    p.add_argument("--jobs", type=COUNT, default=1, metavar="N", help="worker processes (default: 1)")
    p.add_argument(
        "--cache", metavar="RECORD.yaml", help="take the fit recorded under the same key (config/calibration/fits.yaml)"
    )
    p.add_argument("--record", metavar="RECORD.yaml", help="store a fit made now in this record")
    p.add_argument("--no-holdout", action="store_true", help="fit on all points only")
    p.add_argument("--recorded-only", action="store_true", help="take the fit from --cache or stop (never fit)")
    p.add_argument("--seed", type=INDEX, help="root seed (default: config/config.yaml)")
    _add_progress(p)
    p = add("calibration-report", cmd_calibration_report, "a calibration's page of the report: its ranges, fit, "
                                                          "held-out predictions and features (LaTeX and a figure)")
    p.add_argument("calibration", metavar="ID", help="calibration id (config/calibration/ID.yaml) or file")
    p.add_argument("--calibrations", default="config/calibration", metavar="DIR", help="folder of calibrations")
    p.add_argument("--results", default="results/calibration", metavar="DIR", help="folder of calibrations' results")
    p.add_argument("--tex", required=True, metavar="FILE.tex", help="the section (LaTeX), written atomically")
    p.add_argument("--figure", required=True, metavar="FILE.pdf", help="the figure (PDF), written atomically")
    p = add("san-compare", cmd_san_compare,
            "SAN models beside their published curves: a figure and a LaTeX table with macros")
    p.add_argument("models", nargs="+", metavar="NAME", help="config/san/NAME.yaml, each with a 'published' section")
    p.add_argument("--scale", choices=("smoke", "quick", "full"), help="the scale the results were made at")
    p.add_argument("--results", default="results/san", metavar="DIR", help=SAN_RESULTS_HELP)
    p.add_argument("--figure", required=True, metavar="FILE.pdf", help="the figure (PDF), written atomically")
    p.add_argument("--tex", required=True, metavar="FILE.tex", help="table and macros (LaTeX), written atomically")
    p.add_argument(
        "--claims", metavar="FILE.csv", help="the figure's claims for the scorecard (results/FIGURE/claims.csv)"
    )
    p = add("san-figure", cmd_san_figure, "a SAN model's solution beside its simulation (PDF)")
    p.add_argument("model", metavar="NAME", help="results/san/NAME/{solution,simulation}.csv")
    p.add_argument("--results", default="results/san", metavar="DIR", help=SAN_RESULTS_HELP)
    p.add_argument("--out", required=True, metavar="FILE", help="output file, written atomically")
    p = add("san-report", cmd_san_report, "the report's SAN appendix (LaTeX) from results/san/")
    p.add_argument("--results", default="results/san", metavar="DIR", help=SAN_RESULTS_HELP)
    p.add_argument("--out", required=True, metavar="FILE", help="output file, written atomically")


def _reference_commands(add) -> None:
    """The reference's and the report's commands: evaluate, run-profile, save-reference,
    report-from-results, check-layout."""
    p = add("evaluate", cmd_evaluate, "check a run's outputs, claims and means against the full-scale reference "
                                      "(exit 1 when inconsistent)")
    p.add_argument("--results", default="results", metavar="DIR",
                   help="the run to check; its figures, tables and report are looked for in the paper/ beside it "
                        "(default: %(default)s)")
    p.add_argument("--reference", default="results/reference", metavar="DIR",
                   help="the committed full-scale results (default: %(default)s)")
    p.add_argument("--san", default="config/san", metavar="DIR", help="folder of SAN model files")
    p.add_argument("--alpha", type=float, default=0.01,
                   help="family-wise level of the claims' and the means' tests (default: %(default)s)")
    p.add_argument("--out", default="results/evaluation.md", metavar="FILE",
                   help="the verdict page, Markdown (default: %(default)s)")
    p.add_argument("--allow-changed", action="store_true",
                   help="report experiments simulated from other inputs than the reference's (spec, preset, seed, "
                        "model code, topologies) instead of failing on them: for deliberate changes")
    p.add_argument("--replications", choices=("auto", "identical", "paired"), default="auto",
                   help="how replications both runs hold are compared: identical in every value (the reference's "
                        "platform), a paired test (another platform), or auto: by the platforms the provenance "
                        "records (default: %(default)s)")
    p = add("run-profile", cmd_run_profile,
            "the cores the run used over time and its CPU time per paper, from the workflow's benchmark files")
    p.add_argument("--benchmarks", default="logs/benchmarks", metavar="DIR", help="Snakemake's benchmark files")
    p.add_argument("--scale", choices=("smoke", "quick", "full"), default="full", help="the run's scale")
    p.add_argument("--figure", required=True, metavar="FILE.pdf", help="the figure (PDF), written atomically")
    p.add_argument("--tex", required=True, metavar="FILE.tex", help="LaTeX macros, written atomically")
    p.add_argument("--cores", type=COUNT, help="the cores of the machine (default: this machine's, or the jobs file's)")
    p.add_argument("--jobs", metavar="FILE.csv", help="the jobs saved with the reference (results/reference/"
                                                      "jobs-full.csv) instead of the benchmark files")
    p.add_argument("--save-jobs", metavar="FILE.csv",
                   help="also save the jobs read from the benchmark files (e.g. results/reference/jobs-quick.csv)")
    p.add_argument("--markdown", metavar="FILE.md",
                   help="also write the jobs, job time, CPU time and span of each experiment and paper as a "
                        "Markdown table (the README's)")
    p = add("save-reference", cmd_save_reference,
            "keep a full run's results as the reference: summaries, claims, provenance, per-replication "
            "tables (gzip), SAN results, jobs; never the raw batches")
    p.add_argument("--results", default="results", metavar="DIR", help="the full run (default: %(default)s)")
    p.add_argument("--benchmarks", default="logs/benchmarks", metavar="DIR", help="its benchmark files")
    p.add_argument("--san", default="config/san", metavar="DIR", help="folder of SAN model files")
    p.add_argument("--cores", type=COUNT, help="the cores of the machine that ran it (default: this machine's)")
    p.add_argument("--out", default="results/reference", metavar="DIR", help="(default: %(default)s)")
    p.add_argument("--experiments", nargs="+", metavar="ID",
                   help="replace only these experiments in the reference at --out (a full run that reran them "
                        "after their model changed); the claims table is rebuilt, the rest stays")
    p.add_argument("--jobs-out", metavar="FILE.csv",
                   help="with --experiments: where the rerun's jobs go (default: OUT/jobs-full-rerun.csv)")
    p = add("report-from-results", cmd_report_from_results,
            "every input of paper/report.tex (tables, figures, macros, SAN, run profile) from a folder of results, "
            "e.g. the committed reference, without simulating")
    p.add_argument("--results", default="results/reference", metavar="DIR", help="(default: %(default)s)")
    p.add_argument("--paper", required=True, metavar="DIR", help="the paper folder to fill (its tables/, "
                                                                 "figures/, generated/)")
    p.add_argument("--san", default="config/san", metavar="DIR", help="folder of SAN model files")
    p.add_argument("--untested", default="config/untested.yaml", metavar="FILE",
                   help="published results no experiment tests, with reasons (default: %(default)s)")
    _add_progress(p)
    p = add("check-layout", cmd_check_layout,
            "the report's layout from pdflatex's log: each float too large for its page and each box past the "
            "margin (exit 1 when there is one)")
    p.add_argument("log", metavar="LOG", help="the log pdflatex wrote beside the PDF, e.g. paper/build/report.log")


#: the options that name files or folders simcore writes
OUTPUT_OPTIONS = ("out", "outdir", "figure", "tex", "save_jobs", "markdown", "paper", "claims", "record", "jobs_out")


def _outputs(args):
    """(option, path) of every file or folder the command writes."""
    for name in OUTPUT_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, (str, os.PathLike)):
            yield f"--{name.replace('_', '-')}", Path(value)


def _check_outputs(args) -> None:
    """Refuse, before any work, an output simcore could not write: a device or a pipe (outputs are
    written beside their path and renamed over it, which would replace it: ``--out /dev/null`` as
    root turned /dev/null into a regular file), a path under a file, or in a folder in which no
    file can be made (/proc, even as root)."""
    import tempfile

    for option, path in _outputs(args):
        if path.exists() and not (path.is_file() or path.is_dir()):
            raise InputError(f"{option}: {path} is not a regular file or folder; simcore writes "
                             "its outputs beside the path and renames them over it, which would replace it.")
        folder = path if path.is_dir() else path.parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise InputError(f"{option}: cannot write {path}: {folder} is a file, not a folder.")
        try:
            tempfile.TemporaryFile(dir=folder).close()
        except OSError as err:
            raise _cannot_write(option, path, f"no file can be made in {folder}: {err.strerror}") from None


def _cannot_write(option: str, path: Path, reason: str) -> InputError:
    return InputError(f"{option}: cannot write {path} ({reason}).")


def _output_error(args, err: OSError) -> InputError | None:
    """An OS error met on an output (its path, a folder on the way to it or inside it, the
    temporary file beside it) as the sentence naming the option; None for any other."""
    if err.filename is None:
        return None
    where = Path(os.path.abspath(err.filename))
    for option, path in _outputs(args):
        target = Path(os.path.abspath(path))
        if where == target or is_temporary(where, target):
            return _cannot_write(option, path, err.strerror)
        if where in target.parents or target in where.parents:
            return _cannot_write(option, path, f"{err.filename}: {err.strerror}")
    return None


def _run(args) -> int:
    """The command, its outputs checked first; an OS error on one of them is bad input."""
    _check_outputs(args)
    try:
        return args.func(args)
    except OSError as err:
        problem = _output_error(args, err)
        if problem is None:
            raise
        raise problem from err


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help, or a bad argument (one sentence already printed)
        return done.code if isinstance(done.code, int) else 2
    try:
        return _run(args)
    except InputError as err:
        print(f"simcore: error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stderr.close()
        return 0
    except Exception as err:  # an internal failure: one line, then exit 1
        print(f"simcore: internal error: {type(err).__name__}: {_one_line(str(err))}", file=sys.stderr)
        if args.debug or os.environ.get("SIMCORE_DEBUG"):
            raise
        return 1


if __name__ == "__main__":
    sys.exit(main())
