"""`simcore targets` and `make figure`: every figure of the report is a valid ID, and a typo
stops with the closest ids instead of starting the whole workflow."""

import subprocess
import sys
from pathlib import Path


def test_san_figures_and_models_are_targets(simcore_cli):
    assert simcore_cli("targets", "corr05-fig8").stdout.split() == ["paper/figures/corr05-fig8.pdf"]
    assert simcore_cli("targets", "san-example").stdout.split() == ["paper/figures/san-example.pdf"]
    assert simcore_cli("targets", "corr05-fig8-2sched").stdout.split() == ["paper/figures/san-corr05-fig8-2sched.pdf"]


def test_an_unknown_id_names_the_closest_ones(simcore_cli):
    proc = simcore_cli("targets", "amir-tabel2")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "did you mean amir-table2" in proc.stderr


def test_make_figure_with_a_typo_stops_before_snakemake(root):
    """The old Makefile expanded a failed `simcore targets` to nothing, and Snakemake then built
    its default target: the whole workflow."""
    venv = Path(sys.executable).parent.parent
    proc = subprocess.run(["make", "-s", "-C", str(root), "figure", "ID=amir-tabel2", f"VENV={venv}", "STAMP="],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "did you mean amir-table2" in proc.stderr
    assert "Building DAG" not in proc.stdout + proc.stderr and "snakemake" not in proc.stdout


def test_every_argument_of_every_command_is_described(simcore_cli):
    """`simcore COMMAND --help` leaves no argument undescribed; `simcore --help` shows examples."""
    import argparse

    from simcore.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    bare = [f"{name} {a.dest}" for name, p in sub.choices.items() for a in p._actions
            if not a.help and not isinstance(a, argparse._HelpAction)]
    assert bare == []
    top = simcore_cli("--help").stdout
    assert "examples:" in top and "simcore run amir-table2" in top


def test_the_record_of_san_fits_is_not_a_san_model(root):
    """config/san/fits.yaml (simcore san-fit --record) sits beside the model files and is not one."""
    from simcore.experiments.targets import san_model_files

    names = [p.name for p in san_model_files(root / "config/san")]
    assert (root / "config/san/fits.yaml").exists() and "fits.yaml" not in names
    assert {"corr05-fig8-2sched.yaml", "corr05-fig8-4sched.yaml", "example.yaml"} <= set(names)
