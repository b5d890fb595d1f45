# numa-lb-repro: experiment specs -> raw replications -> summaries -> figures, tables -> report.pdf
# Every rule calls the `simcore` command; no model logic lives here (see docs/architecture.md).
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


envvars:
    "PATH",  # common.smk puts this interpreter's bin/ first, so rules find `simcore` without an activated venv


try:
    validate(config, "workflow/schemas/config.schema.yaml")
except WorkflowError as err:  # one sentence naming the key, not the schema's dump
    from jsonschema import ValidationError

    from simcore.experiments.spec import schema_problem

    if not isinstance(err.__context__, ValidationError):
        raise
    sys.exit(f"config/config.yaml or --config: {schema_problem(err.__context__)}.")


include: "workflow/rules/common.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/precision.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/san.smk"
include: "workflow/rules/calibration.smk"
include: "workflow/rules/report.smk"


onstart:
    # an overall line at the start and every minute: of the jobs this run does (the requested
    # targets' only), those done and their job-minutes, against the same jobs' in the committed
    # run, and the time left
    from simcore.progress import committed_jobs, start_overall

    try:
        cores = workflow.cores if workflow.cores and workflow.cores < 10_000 else None
    except Exception:   # no --cores (a cluster run): the time left from the measured rate only
        cores = None
    planned = [str(job.benchmark) for job in workflow.dag.needrun_jobs() if job.benchmark]
    start_overall("logs/benchmarks", SCALE, committed_jobs(SCALE), planned, cores=cores)


# Jobs of seconds run where Snakemake runs, never as cluster jobs (each of which would pay for
# its own Snakemake start): the simulations and SAN solutions are the cluster's work.
localrules:
    all,
    precision,
    aggregate,
    trace,
    monitor,
    figure,
    monitor_figure,
    table,
    san_figure,
    san_report,
    calibration_report,
    san_published_figure,
    report_inputs,
    run_profile,
    report,
    report_layout,


rule all:
    default_target: True
    input:
        "paper/build/report.pdf",
        "paper/build/layout.ok",
