# One job = one batch of replications of one cell (or of a spec's cells_per_job consecutive cells),
# every policy (common random numbers).


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
        cell=r"\d{3}(-\d{3})?",
        a=r"\d{5}",
        b=r"\d{5}",
    params:
        reps=lambda w: f"{int(w.a)}:{int(w.b)}",
        cells=lambda w: f"--cells {int(w.cell[:3])}:{int(w.cell[4:])}" if "-" in w.cell else f"--cell {int(w.cell)}",
        label=lambda w: f"cells {int(w.cell[:3])}-{int(w.cell[4:]) - 1}" if "-" in w.cell else f"cell {int(w.cell)}",
    resources:
        runtime=60,
        mem_mb=1000,
    message:
        "simulate {wildcards.exp} ({wildcards.scale}) {params.label}, replications {params.reps} (progress: tail -f {log})"
    shell:
        "simcore run {wildcards.exp:q} {params.cells} --reps {params.reps} "
        "--scale {wildcards.scale:q} --out {output:q} 2> {log:q}"
