# SAN models (config/san/*.yaml): the numerical solution, a SimPy simulation of the same model
# as its cross-check, a figure setting the two side by side; for models with a `fit` section the
# fit of their free parameter to the published curve; corr05 Figure 8 from its two models.


rule san_solve:
    input:
        model="config/san/{model}.yaml",
    output:
        "results/san/{model}/solution.csv",
    log:
        "logs/san/{model}-solve.log",
    conda:
        "../envs/simcore.yaml"
    params:
        code=SAN_CODE,
        scale=SCALE,
    shell:
        "simcore san {input.model} --scale {params.scale} --out {output} 2> {log}"


rule san_simulate:
    input:
        model="config/san/{model}.yaml",
    output:
        "results/san/{model}/simulation.csv",
    log:
        "logs/san/{model}-simulate.log",
    conda:
        "../envs/simcore.yaml"
    params:
        reps=san_reps,
        seed=config["seed"],
        code=SAN_CODE,
        scale=SCALE,
    shell:
        "simcore san {input.model} --scale {params.scale} --simulate {params.reps} --seed {params.seed} "
        "--out {output} 2> {log}"


rule san_fit:
    input:
        model="config/san/{model}.yaml",
    output:
        "results/san/{model}/fit.csv",
    log:
        "logs/san/{model}-fit.log",
    conda:
        "../envs/simcore.yaml"
    params:
        fit=lambda wc: san_file(wc.model)["fit"],
        code=SAN_CODE,
        scale=SCALE,
    shell:
        "simcore san-fit {input.model} --parameter {params.fit[parameter]} --bounds {params.fit[bounds]} "
        "--scale {params.scale} --out {output} 2> {log}"


rule san_figure:
    input:
        solution="results/san/{model}/solution.csv",
        simulation="results/san/{model}/simulation.csv",
    output:
        "paper/figures/san-{model}.pdf",
    log:
        "logs/san/{model}-figure.log",
    conda:
        "../envs/simcore.yaml"
    shell:
        "simcore san-figure {wildcards.model} --results results/san --out {output} 2> {log}"


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
    shell:
        "simcore san-report --results results/san --out {output} 2> {log}"


rule corr05_fig8:
    input:
        solutions=expand("results/san/{model}/solution.csv", model=FIG8),
        simulations=expand("results/san/{model}/simulation.csv", model=FIG8),
        fit=[f"results/san/{m}/fit.csv" for m in FIG8 if m in SAN_FITS],
    output:
        figure="paper/figures/corr05-fig8.pdf",
        tex="paper/generated/corr05-fig8.tex",
    log:
        "logs/san/corr05-fig8.log",
    conda:
        "../envs/simcore.yaml"
    params:
        models=FIG8,
        scale=SCALE,
    shell:
        "simcore san-compare {params.models} --scale {params.scale} --results results/san --figure {output.figure} "
        "--tex {output.tex} 2> {log}"
