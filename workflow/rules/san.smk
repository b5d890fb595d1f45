# SAN models (config/san/*.yaml): the numerical solution, a SimPy simulation of the same model
# as its cross-check, and a figure setting the two side by side.
SAN_MODELS = sorted(p.stem for p in Path("config/san").glob("*.yaml"))


rule san_solve:
    input:
        "config/san/{model}.yaml",
    output:
        "results/san/{model}/solution.csv",
    log:
        "logs/san/{model}-solve.log",
    conda:
        "../envs/simcore.yaml"
    params:
        times=config["san"]["times"],
    shell:
        "simcore san {input} --times {params.times} --out {output} 2> {log}"


rule san_simulate:
    input:
        "config/san/{model}.yaml",
    output:
        "results/san/{model}/simulation.csv",
    log:
        "logs/san/{model}-simulate.log",
    conda:
        "../envs/simcore.yaml"
    params:
        times=config["san"]["times"],
        reps=config["san"]["simulate"][SCALE],
        seed=config["seed"],
    shell:
        "simcore san {input} --times {params.times} --simulate {params.reps} --seed {params.seed} "
        "--out {output} 2> {log}"


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
