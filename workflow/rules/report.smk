# Generated LaTeX inputs (numbers, scorecard, provenance, assumptions) and the report PDF.
GENERATED = [
    "paper/generated/numbers.tex",
    "paper/generated/headline.tex",
    "paper/generated/scorecard.tex",
    "paper/generated/provenance.tex",
    "paper/generated/artifact.tex",
    "paper/generated/assumptions.tex",
    "paper/generated/untested.tex",
    "paper/generated/experiments.tex",
] + [f"paper/generated/paper-{p}.tex" for p in PAPERS]


rule report_inputs:
    input:
        summaries=expand("results/{exp}/summary.csv", exp=SPECS),
        claims=expand("results/{exp}/claims.csv", exp=SPECS),
        san_claims=expand("results/{fig}/claims.csv", fig=SAN_FIGURES),
        provenance=expand("results/{exp}/provenance.json", exp=SPECS),
        specs=[f for exp in SPECS for f in spec_files(exp)],
        untested="config/untested.yaml",
        timings=sorted(str(p) for p in Path("results/reference").glob("jobs-*.csv")),
        code=ANALYSIS_CODE,
    output:
        GENERATED,
    log:
        "logs/report_inputs.log",
    benchmark:
        f"logs/benchmarks/report/{SCALE}/report_inputs.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    message:
        # a message instead of Snakemake's job block, which would list the hundreds of inputs once more
        "report macros: numbers, scorecard, provenance and the papers' sections from {n} experiments' results "
        "-> paper/generated/ (log: {log})".format(n=len(SPECS), log="logs/report_inputs.log")
    shell:
        "simcore report-macros --results results --out paper/generated 2> {log:q}"


rule run_profile:
    input:
        summaries=expand("results/{exp}/summary.csv", exp=SPECS),
        san=[f"paper/generated/{f}.tex" for f in SAN_FIGURES] + ["paper/generated/san.tex"],
        code=ANALYSIS_CODE,
    output:
        figure=report("paper/figures/run-profile.pdf", caption="../report/run-profile.rst", category="Run profile"),
        tex="paper/generated/run-profile.tex",
    log:
        "logs/run_profile.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        scale=SCALE,
    shell:
        "simcore run-profile --benchmarks logs/benchmarks --scale {params.scale:q} --figure {output.figure:q} "
        "--tex {output.tex:q} 2> {log:q}"


rule report:
    input:
        GENERATED,
        tables=expand("paper/tables/{exp}.tex", exp=SPECS),
        figures=expand("paper/figures/{exp}.pdf", exp=FIGURES),
        monitors=expand("paper/figures/{exp}-monitor.pdf", exp=MONITORED),
        san="paper/generated/san.tex",
        san_published=[f"paper/{d}/{f}.{e}" for f in SAN_FIGURES for d, e in (("generated", "tex"), ("figures", "pdf"))],
        san_figures=expand("paper/figures/san-{model}.pdf", model=SAN_MODELS),
        calibrations=[f"paper/{d}/calibration-{c}.{e}" for c in CALIBRATIONS for d, e in (("generated", "tex"), ("figures", "pdf"))],
        profile=["paper/figures/run-profile.pdf", "paper/generated/run-profile.tex"],
        tex=["paper/report.tex", *sorted(str(p) for p in Path("paper/sections").glob("*.tex"))],
    output:
        report("paper/build/report.pdf", caption="../report/report.rst", category="Report"),
    log:
        "logs/report.log",
    benchmark:
        f"logs/benchmarks/report/{SCALE}/report.tsv"
    conda:
        "../envs/latex.yaml"
    threads: 1
    message:
        "report: LaTeX of every section, figure and table -> paper/build/report.pdf (log: logs/report.log)"
    shell:
        "cd paper && latexmk -pdf -interaction=nonstopmode -halt-on-error -outdir=build report.tex "
        "> ../{log:q} 2>&1"


rule report_layout:
    input:
        pdf="paper/build/report.pdf",
        code=ANALYSIS_CODE,
    output:
        touch("paper/build/layout.ok"),
    log:
        "logs/report_layout.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    message:
        "report layout: no float too large for its page, no box past the margin in paper/build/report.log "
        "(log: logs/report_layout.log)"
    shell:
        "simcore check-layout paper/build/report.log 2> {log:q}"
