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
        "paper/figures/{exp}.pdf",
    log:
        "logs/figure/{exp}.log",
    conda:
        "../envs/simcore.yaml"
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
    conda:
        "../envs/simcore.yaml"
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
        "paper/figures/{exp}-monitor.pdf",
    log:
        "logs/figure/{exp}-monitor.log",
    conda:
        "../envs/simcore.yaml"
    shell:
        "simcore figure {wildcards.exp:q} --monitor --results results --out {output:q} 2> {log:q}"
