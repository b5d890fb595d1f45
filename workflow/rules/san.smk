# SAN models (config/san/*.yaml): the numerical solution, a SimPy simulation of the same model
# as its cross-check, a figure setting the two side by side; for models with a `fit` section the
# fit of their free parameter to the published curve; corr05 Figure 8 from its two models.
# Solutions, simulations and fits are the longest single jobs at full scale (minutes each): their
# priority starts them first, so no core waits for one of them at the end of the run.


rule san_solve:
    input:
        model="config/san/{model}.yaml",
        fingerprint=san_fingerprint_file,
    output:
        "results/san/{model}/solution.csv",
    log:
        "logs/san/{model}-solve.log",
    benchmark:
        "logs/benchmarks/san/{model}-solve.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        scale=SCALE,
    priority: 50
    message:
        "SAN solve {wildcards.model} at scale {params.scale} (minutes at full scale; progress: tail -f {log})"
    shell:
        "simcore san {input.model:q} --scale {params.scale:q} --out {output:q} 2> {log:q}"


rule san_simulate:
    input:
        model="config/san/{model}.yaml",
        fingerprint=san_fingerprint_file,
    output:
        "results/san/{model}/simulation.csv",
    log:
        "logs/san/{model}-simulate.log",
    benchmark:
        "logs/benchmarks/san/{model}-simulate.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        reps=lambda w: san_reps(w.model),
        seed=config["seed"],
        scale=SCALE,
    priority: 40
    message:
        "SAN simulation {wildcards.model}: {params.reps} trajectories (progress: tail -f {log})"
    shell:
        "simcore san {input.model:q} --scale {params.scale:q} --simulate {params.reps} --seed {params.seed} "
        "--out {output:q} 2> {log:q}"


rule san_fit:
    input:
        model="config/san/{model}.yaml",
        fingerprint=san_fingerprint_file,
        record=lambda w: [p for p in [config["san"]["fit_record"]] if Path(p).exists()],
    output:
        "results/san/{model}/fit.csv",
    log:
        "logs/san/{model}-fit.log",
    benchmark:
        "logs/benchmarks/san/{model}-fit.tsv"
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        fit=lambda wc: san_file(wc.model)["fit"],
        scale=SCALE,
        record=config["san"]["fit_record"],
    priority: 50
    message:
        "SAN fit of {params.fit[parameter]} in {wildcards.model} at scale {params.scale} (a recorded fit of the same code, model and bounds is taken as it is; else one solution per step; progress: tail -f {log})"
    shell:
        "simcore san-fit {input.model:q} --parameter {params.fit[parameter]:q} --bounds {params.fit[bounds]:q} "
        "--scale {params.scale:q} --cache {params.record:q} --out {output:q} 2> {log:q}"


rule san_figure:
    input:
        solution="results/san/{model}/solution.csv",
        simulation="results/san/{model}/simulation.csv",
    output:
        report("paper/figures/san-{model}.pdf", caption="../report/san-figure.rst", category="SAN",
               labels={"model": "{model}", "figure": "solution and simulation"}),
    log:
        "logs/san/{model}-figure.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    shell:
        "simcore san-figure {wildcards.model:q} --results results/san --out {output:q} 2> {log:q}"


rule san_report:
    input:
        solutions=expand("results/san/{model}/solution.csv", model=SAN_MODELS),
        simulations=expand("results/san/{model}/simulation.csv", model=SAN_MODELS),
    output:
        "paper/generated/san.tex",
    log:
        "logs/san/report.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    shell:
        "simcore san-report --results results/san --out {output:q} 2> {log:q}"


rule san_published_figure:
    wildcard_constraints:
        fig=SAN_FIGURE_IDS,
    input:
        solutions=lambda w: expand("results/san/{model}/solution.csv", model=SAN_FIGURES[w.fig]),
        simulations=lambda w: expand("results/san/{model}/simulation.csv", model=SAN_FIGURES[w.fig]),
        fits=lambda w: [f"results/san/{m}/fit.csv" for m in SAN_FIGURES[w.fig] if m in SAN_FITS],
        models=lambda w: [f"config/san/{m}.yaml" for m in SAN_FIGURES[w.fig]],
        code=ANALYSIS_CODE,  # its claims are judged by the artifact's rule (simcore/stats/claims.py)
    output:
        figure=report("paper/figures/{fig}.pdf", caption="../report/san-published.rst", category="corr05",
                      labels={"experiment": "{fig}", "figure": "SAN against the published curve"}),
        tex="paper/generated/{fig}.tex",
        claims="results/{fig}/claims.csv",
    log:
        "logs/san/{fig}.log",
    conda:
        "../envs/simcore.yaml"
    threads: 1
    params:
        models=lambda w: SAN_FIGURES[w.fig],
        scale=SCALE,
    shell:
        "simcore san-compare {params.models:q} --scale {params.scale:q} --results results/san --figure {output.figure:q} "
        "--tex {output.tex:q} --claims {output.claims:q} 2> {log:q}"
