# Figures (PDF) and tables (LaTeX) of one experiment, from its aggregated results.


rule figure:
    wildcard_constraints:
        exp=FIGURE_IDS,
    input:
        summary="results/{exp}/summary.csv",
        replications="results/{exp}/replications.csv",
        spec=lambda w: spec_files(w.exp),
        code=ANALYSIS_CODE,
    output:
        report("paper/figures/{exp}.pdf", caption="../report/figure.rst", category=lambda w: SPECS[w.exp]["paper"],
               labels={"experiment": "{exp}", "figure": "results"}),
    log:
        "logs/figure/{exp}.log",
    benchmark:
        f"logs/benchmarks/figure/{SCALE}/{{exp}}.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        **SPEC_CAPTION,
    shell:
        "simcore figure {wildcards.exp:q} --results results --out {output:q} 2> {log:q}"


rule table:
    input:
        summary="results/{exp}/summary.csv",
        claims="results/{exp}/claims.csv",
        replications="results/{exp}/replications.csv",
        spec=lambda w: spec_files(w.exp),
        traces=lambda w: trace_files(w.exp),
        code=ANALYSIS_CODE,
    output:
        "paper/tables/{exp}.tex",
    log:
        "logs/table/{exp}.log",
    benchmark:
        f"logs/benchmarks/table/{SCALE}/{{exp}}.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    shell:
        "simcore table {wildcards.exp:q} --results results --out {output:q} 2> {log:q}"


rule trace:
    input:
        spec=lambda w: spec_files(w.exp),
        fingerprint=lambda w: fingerprint_file(SPECS[w.exp].source_id),
    output:
        "results/{exp}/traces.txt",
    log:
        "logs/trace/{exp}.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    shell:
        "simcore trace {wildcards.exp:q} --out {output:q} 2> {log:q}"


rule monitor:
    wildcard_constraints:
        exp=MONITORED_IDS,
    input:
        spec=lambda w: spec_files(w.exp),
        fingerprint=lambda w: fingerprint_file(SPECS[w.exp].source_id),
    output:
        "results/{exp}/monitor.csv",
    log:
        "logs/monitor/{exp}.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    shell:
        "simcore trace {wildcards.exp:q} --monitor --out {output:q} 2> {log:q}"


rule monitor_figure:
    wildcard_constraints:
        exp=MONITORED_IDS,
    input:
        samples="results/{exp}/monitor.csv",
        spec=lambda w: spec_files(w.exp),
        code=ANALYSIS_CODE,
    output:
        report("paper/figures/{exp}-monitor.pdf", caption="../report/figure.rst",
               category=lambda w: SPECS[w.exp]["paper"], labels={"experiment": "{exp}", "figure": "queues over time"}),
    log:
        "logs/figure/{exp}-monitor.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        **SPEC_CAPTION,
    shell:
        "simcore figure {wildcards.exp:q} --monitor --results results --out {output:q} 2> {log:q}"
