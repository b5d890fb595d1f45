# Raw batches of one experiment (precision rounds included) -> summary, claims, per-replication
# table, provenance.
import shlex


rule aggregate:
    input:
        raw=raw_files,
        spec=lambda w: spec_files(w.exp),
        fingerprint=lambda w: fingerprint_file(SPECS[w.exp].source_id),
        scale="results/scale.txt",
        plans=lambda w: precision_plans(SPECS[w.exp].source_id),
        code=ANALYSIS_CODE,
    output:
        summary="results/{exp}/summary.csv",
        claims="results/{exp}/claims.csv",
        replications="results/{exp}/replications.csv",
        provenance="results/{exp}/provenance.json",
    log:
        "logs/aggregate/{exp}.log",
    benchmark:
        f"logs/benchmarks/aggregate/{SCALE}/{{exp}}.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        scale=SCALE,
        outdir=lambda w: f"results/{w.exp}",
        plans=lambda w, input: " ".join(shlex.quote(p) for p in input.plans),
    shell:
        "simcore aggregate {wildcards.exp:q} --scale {params.scale:q} --raw {input.raw:q} "
        "--outdir {params.outdir:q} --plans {params.plans} 2> {log:q}"
