# Calibrated controls (config/calibration/ID.yaml): the experiments with `calibration: ID` run
# with the fit recorded in config/calibration/fits/ID.yaml; this rule replays that fit (its
# points simulated at its values) for the report, and stops if no fit is recorded for the
# current code (`make calibrate ID=...` makes one; see simcore/calibration).
rule calibrate:
    input:
        calibration="config/calibration/{calibration}.yaml",
        record="config/calibration/fits/{calibration}.yaml",
        code=calibration_code,
    output:
        fit="results/calibration/{calibration}/fit.yaml",
        points="results/calibration/{calibration}/points.csv",
        holdout="results/calibration/{calibration}/holdout.csv",
    log:
        "logs/calibration/{calibration}.log",
    benchmark:
        f"logs/benchmarks/calibration/{{calibration}}.tsv"
    conda:
        "../envs/simcore.yaml"
    params:
        out="results/calibration/{calibration}",
    threads: 2
    message:
        "calibration {wildcards.calibration}: the recorded fit's points simulated again at its values (log: {log})"
    shell:
        "simcore calibrate {wildcards.calibration:q} --scale full --jobs {threads} --recorded-only "
        "--cache {input.record:q} --out {params.out:q} 2> {log:q}"


rule calibration_report:
    input:
        fit="results/calibration/{calibration}/fit.yaml",
        points="results/calibration/{calibration}/points.csv",
        holdout="results/calibration/{calibration}/holdout.csv",
        code=ANALYSIS_CODE,
    output:
        tex="paper/generated/calibration-{calibration}.tex",
        figure="paper/figures/calibration-{calibration}.pdf",
    log:
        "logs/calibration/{calibration}-report.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    shell:
        "simcore calibration-report {wildcards.calibration:q} --results results/calibration --tex {output.tex:q} "
        "--figure {output.figure:q} 2> {log:q}"
