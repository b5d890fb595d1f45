# One job = one batch of replications of one cell, every policy (common random numbers).


rule simulate:
    input:
        fingerprint="results/raw/{exp}/{scale}/fingerprint.json",
    output:
        "results/raw/{exp}/{scale}/c{cell}/r{a}-{b}.parquet",
    log:
        "logs/simulate/{exp}/{scale}/c{cell}/r{a}-{b}.log",
    benchmark:
        "logs/benchmarks/simulate/{exp}/{scale}/c{cell}/r{a}-{b}.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    wildcard_constraints:
        cell=r"\d{3}",
        a=r"\d{5}",
        b=r"\d{5}",
    params:
        reps=lambda w: f"{int(w.a)}:{int(w.b)}",
        cell=lambda w: int(w.cell),
    resources:
        runtime=60,
        mem_mb=1000,
    message:
        "simulate {wildcards.exp} ({wildcards.scale}) cell {params.cell}, replications {params.reps} (progress: tail -f {log})"
    shell:
        "simcore run {wildcards.exp:q} --cell {params.cell} --reps {params.reps} "
        "--scale {wildcards.scale:q} --out {output:q} 2> {log:q}"
