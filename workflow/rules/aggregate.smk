# Raw batches of one experiment -> summary, claims, per-replication table, provenance.


rule aggregate:
    input:
        raw=raw_files,
        spec=lambda w: spec_files(w.exp),
        fingerprint=lambda w: fingerprint_file(SPECS[w.exp].source_id),
        scale="results/scale.txt",
    output:
        summary="results/{exp}/summary.csv",
        claims="results/{exp}/claims.csv",
        replications="results/{exp}/replications.csv",
        provenance="results/{exp}/provenance.json",
    log:
        "logs/aggregate/{exp}.log",
    conda:
        "../envs/simcore.yaml"
    params:
        scale=SCALE,
    shell:
        "simcore aggregate {wildcards.exp} --scale {params.scale} --raw {input.raw} "
        "--outdir results/{wildcards.exp} 2> {log}"
