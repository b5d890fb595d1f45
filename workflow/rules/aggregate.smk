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
        outdir=lambda w: f"results/{w.exp}",
    shell:
        "simcore aggregate {wildcards.exp:q} --scale {params.scale:q} --raw {input.raw:q} "
        "--outdir {params.outdir:q} 2> {log:q}"
