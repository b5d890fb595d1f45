# SAN models (config/san/*.yaml): the numerical solution, a SimPy simulation of the same model
# as its cross-check, a figure setting the two side by side; for models with a `fit` section the
# fit of their free parameter to the published curve; corr05 Figure 8 from its two models.
import yaml

SAN_MODELS = sorted(p.stem for p in Path("config/san").glob("*.yaml"))
SAN_CODE = sorted(str(p) for p in Path("simcore/san").glob("*.py")) + sorted(
    str(p) for p in Path("config/topologies").glob("*.yaml"))


def san_file(model):
    return yaml.safe_load(Path(f"config/san/{model}.yaml").read_text()) or {}


SAN_FITS = [m for m in SAN_MODELS if "fit" in san_file(m)]
FIG8 = ["corr05-fig8-2sched", "corr05-fig8-4sched"]


def san_reps(wildcards):
    """Trajectories of the cross-check: the model file's solve.simulate for this scale, else config's."""
    own = (san_file(wildcards.model).get("solve") or {}).get("simulate") or {}
    return own.get(SCALE, config["san"]["simulate"][SCALE])


rule san_solve:
    input:
        model="config/san/{model}.yaml",
        code=SAN_CODE,
    output:
        "results/san/{model}/solution.csv",
    log:
        "logs/san/{model}-solve.log",
    conda:
        "../envs/simcore.yaml"
    shell:
        "simcore san {input.model} --scale {SCALE} --out {output} 2> {log}"


rule san_simulate:
    input:
        model="config/san/{model}.yaml",
        code=SAN_CODE,
    output:
        "results/san/{model}/simulation.csv",
    log:
        "logs/san/{model}-simulate.log",
    conda:
        "../envs/simcore.yaml"
    params:
        reps=san_reps,
        seed=config["seed"],
    shell:
        "simcore san {input.model} --scale {SCALE} --simulate {params.reps} --seed {params.seed} "
        "--out {output} 2> {log}"


rule san_fit:
    input:
        model="config/san/{model}.yaml",
        code=SAN_CODE,
    output:
        "results/san/{model}/fit.csv",
    log:
        "logs/san/{model}-fit.log",
    conda:
        "../envs/simcore.yaml"
    params:
        fit=lambda wc: san_file(wc.model)["fit"],
    shell:
        "simcore san-fit {input.model} --parameter {params.fit[parameter]} --bounds {params.fit[bounds]} "
        "--scale {params.fit[scale]} --out {output} 2> {log}"


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
    shell:
        "simcore san-compare {FIG8} --scale {SCALE} --results results/san --figure {output.figure} "
        "--tex {output.tex} 2> {log}"
