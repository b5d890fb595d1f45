"""The report's generated inputs (``paper/generated/``), each written atomically by its own module:
``macros`` numbers.tex, ``headline`` (the first page's box), ``scorecard``, ``provenance``, ``artifact``,
``assumptions`` (and untested.tex),
``sections`` (one file per paper, and experiments.tex)."""

from __future__ import annotations

from pathlib import Path

from simcore.core.output import write_text
from simcore.report.assumptions import assumptions_tex, untested_tex
from simcore.report.data import by_paper, spec_order
from simcore.report.headline import headline_tex
from simcore.report.macros import numbers_tex
from simcore.report.provenance import provenance_tex
from simcore.report.scorecard import figure_claims, scorecard_tex
from simcore.report.sections import experiments_tex, paper_tex


def write_report_inputs(specs: list, results_dir: Path, outdir: Path, untested: dict | None = None,
                        san_dir: Path = Path("config/san"), reference: Path = Path("results/reference")) -> None:
    """Write numbers.tex, headline.tex, scorecard.tex, provenance.tex, artifact.tex (the checklist, with the
    times measured in ``reference``), assumptions.tex, untested.tex (the results ``untested``
    lists per paper), experiments.tex and paper-<paper>.tex for every paper of ``specs`` into
    ``outdir`` (each atomically)."""
    from simcore.report.artifact import artifact_tex

    results_dir, outdir = Path(results_dir), Path(outdir)
    specs = sorted(specs, key=spec_order)
    figures = figure_claims(san_dir)
    write_text(outdir / "numbers.tex", numbers_tex(specs, results_dir, figures))
    scored = sorted([*specs, *figures], key=spec_order)
    write_text(outdir / "headline.tex", headline_tex(scored, results_dir))
    write_text(outdir / "scorecard.tex", scorecard_tex(scored, results_dir))
    write_text(outdir / "provenance.tex", provenance_tex(specs, results_dir))
    write_text(outdir / "artifact.tex", artifact_tex(specs, reference))
    write_text(outdir / "assumptions.tex", assumptions_tex(specs))
    write_text(outdir / "untested.tex", untested_tex(untested))
    papers = by_paper(specs)
    for paper, group in papers.items():
        write_text(outdir / f"paper-{paper}.tex", paper_tex(paper, group, results_dir))
    write_text(outdir / "experiments.tex", experiments_tex(list(papers)))
