# Precision mode (docs/statistics.md, "Precision mode"): at a scale whose spec gives `precision`,
# rounds of replication batches for the cells of claims the replications cannot decide yet.
# Round k is a checkpoint: it reads the scale's batches and those of rounds before it and names
# the batches it adds; they are ordinary `simulate` jobs, so they spread over cores and clusters.


checkpoint precision:
    input:
        raw=lambda w: raw_through(w.exp, int(w.round) - 1),
        spec=lambda w: spec_files(w.exp),
        readers=lambda w: [f for e in readers_of(w.exp) for f in spec_files(e)],
        fingerprint="results/raw/{exp}/{scale}/fingerprint.json",
    output:
        "results/raw/{exp}/{scale}/precision/round{round}.json",
    log:
        "logs/precision/{exp}/{scale}/round{round}.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    wildcard_constraints:
        round=r"[1-9]\d*",
    message:
        "precision round {wildcards.round} of {wildcards.exp} ({wildcards.scale}): which claims are undecided"
    shell:
        "simcore precision {wildcards.exp:q} --scale {wildcards.scale:q} --round {wildcards.round:q} "
        "--raw {input.raw:q} --out {output:q} 2> {log:q}"
