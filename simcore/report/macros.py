"""numbers.tex: every reproduced number of the report as a LaTeX macro (``\\val{KEY}``), keyed by experiment,
cell, policy and metric; published values, intervals, ratios, claims' statistics and the scores."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from simcore.experiments.spec import SCALES
from simcore.report.data import (
    HEADER,
    cell_key,
    cell_values,
    claim_rows,
    fmt,
    fmt_ci,
    fmt_percent,
    fmt_published,
    int_or_dash,
    isnum,
    pair_ratio,
    published_for,
    published_ratios,
    read_claims,
    read_provenance,
    read_replications,
    read_summary,
    split_cells,
    tex_escape,
    verdict_of,
    verdict_sentence,
    verdict_tex,
)
from simcore.report.provenance import run_values
from simcore.report.scorecard import STANDINGS, paper_sets, standing_counts, standing_sentence, verdict_counts
from simcore.stats.claims import VERDICTS, reading_text
from simcore.vocabulary.cells import where_matches

NOT_RUN = r"\valnotrun"

PREAMBLE = r"""\makeatletter
\providecommand{\valmissing}[1]{\textcolor{red}{\textbf{[??}\,\nolinkurl{#1}\textbf{]}}}
\providecommand{\valdef}[2]{\expandafter\def\csname val@#1\endcsname{#2}}
\providecommand{\val}[1]{\ifcsname val@#1\endcsname\csname val@#1\endcsname\else\valmissing{#1}\fi}
% A key of a cell of the full grid that was not run at this scale is \valnotrun: words, not the
% red marker of an unknown key; \valci and \valratioci then print the words once.
\providecommand{\valnotrun}{\textit{not run at this scale}}
\def\val@notrun{\valnotrun}
\providecommand{\valifnotrun}[3]{\ifcsname val@#1\endcsname\expandafter\ifx\csname val@#1\endcsname\val@notrun
  #2\else#3\fi\else#3\fi}
\providecommand{\valci}[1]{\valifnotrun{#1/mean}{\valnotrun}{\val{#1/mean}~[\val{#1/low},~\val{#1/high}]}}
\providecommand{\valratioci}[1]{\valifnotrun{#1/ratio}{\valnotrun}{\val{#1/ratio}~[\val{#1/ratiolow},~\val{#1/ratiohigh}]}}
\providecommand{\valwarning}[1]{\par\noindent
  \fcolorbox{red!75!black}{red!4}{\parbox{\dimexpr\linewidth-2\fboxsep-2\fboxrule\relax}{#1}}\par\medskip}
\providecommand{\valclaim}[1]{\val{#1/estimate}~[\val{#1/low},~\val{#1/high}], \val{#1/verdicttex}}
\makeatother
"""

class _Macros:
    def __init__(self):
        self.lines: list[str] = []
        self.keys: set[str] = set()

    def add(self, key: str, value: str) -> None:
        if key in self.keys:
            return
        self.keys.add(key)
        self.lines.append(f"\\valdef{{{key}}}{{{value}}}")

def numbers(specs, results_dir: Path, figures=()) -> dict:
    """Key -> formatted value of every macro (the content of numbers.tex); ``figures``: the
    published SAN figures' claims (:class:`FigureClaims`), counted with the specs'."""
    m = _Macros()
    per_paper = verdict_counts([*specs, *figures], results_dir)
    counts = {v: sum(c[v] for c in per_paper.values()) for v in (*VERDICTS, "missing")}
    for spec in specs:
        _published_macros(m, spec)
        summary = _default_reading(spec, read_summary(spec, results_dir))
        if summary is not None:
            _summary_macros(m, spec, summary)
        reps = _default_reading(spec, read_replications(spec, results_dir))
        if reps is not None:
            _pair_macros(m, spec, reps)
            if spec["output"]["kind"] == "fit":
                _fit_macros(m, spec, reps)
        _not_run_macros(m, spec, results_dir)
    for spec in [*specs, *figures]:
        _claim_macros(m, spec, results_dir)
    for key, value in run_values(specs, results_dir).items():
        m.add(f"report/{key}", value)
    for prefix, table in [("score", counts)] + [(f"score/{p}", c) for p, c in per_paper.items()]:
        for verdict, n in table.items():
            m.add(f"{prefix}/{verdict.replace(' ', '')}", str(n))
        m.add(f"{prefix}/total", str(sum(table.values())))
        m.add(f"{prefix}/sentence", verdict_sentence(table))
    standings = standing_counts([*specs, *figures], results_dir)
    for paper, table in standings.items():
        for key, n in table.items():
            m.add(f"score/{paper}/{key.replace(' ', '')}", str(n))
    m.add("score/readings", standing_sentence({k: sum(t[k] for t in standings.values()) for k in STANDINGS}))
    _best_set_macros(m, [*specs, *figures], results_dir)
    return dict(_pairs_of(m.lines))

def _best_set_macros(m: _Macros, specs, results_dir: Path) -> None:
    """Per paper with a best supported reading set: ``score/PAPER/bestset`` (its values) and
    ``score/PAPER/bestset/VERDICT``, the claims of that verdict under it (the default where not judged)."""
    from simcore.report.judged import reading_tex

    sets = paper_sets(specs, results_dir)
    for paper, table in verdict_counts(specs, results_dir, sets).items():
        if sets.get(paper) is None:
            continue
        m.add(f"score/{paper}/bestset", reading_tex({"reading": sets[paper].text()}))
        for verdict, n in table.items():
            m.add(f"score/{paper}/bestset/{verdict.replace(' ', '')}", str(n))

def _default_reading(spec, frame):
    """An experiment that judges another: only the rows of its first (the judged experiment's own)
    reading, whose cells the prose quotes; every reading's claims have their own macros
    (:func:`_judged_macros`). All its cells' values would be hundreds of thousands of macros,
    beyond TeX's string pool. Any other experiment: ``frame`` as it is."""
    from simcore.report.judged import rows_of_reading

    if frame is None or "judges" not in spec.data:
        return frame
    return rows_of_reading(frame, spec.reading_combinations()[0])

def _judged_macros(m: _Macros, spec, results_dir: Path) -> None:
    """``judges``: per reading k (0: the judged experiment's own) and judged claim, its verdict and
    statistic: ``ID/reading{k}/CLAIM/verdict``, ``.../verdicttex``, ``.../estimate``, ``/low``, ``/high``."""
    claims = read_claims(spec, results_dir)
    if claims is None:
        return
    readings = {r: k for k, r in enumerate(dict.fromkeys(claims["reading"]))}
    for row in claims.to_dict("records"):
        base = f"{spec.id}/reading{readings[row['reading']]}/{row['judged_claim']}"
        m.add(f"{base}/verdict", tex_escape(verdict_of(row)))
        m.add(f"{base}/verdicttex", verdict_tex(verdict_of(row)))
        for key, column in (("estimate", "estimate"), ("low", "ci_low"), ("high", "ci_high")):
            m.add(f"{base}/{key}", fmt(row.get(column)))
    _reading_levels(m, spec, results_dir, readings)

def _reading_levels(m: _Macros, spec, results_dir: Path, readings: dict) -> None:
    """``judges`` without a grid of its own (one cell per reading): each policy's diagnostics
    (``output.diagnostics``) per reading, ``ID/reading{k}/POLICY/METRIC/mean``, ``/low``, ``/high``
    (a few per reading; a gridded experiment's would be too many)."""
    from simcore.report.judged import rows_of_reading

    summary = read_summary(spec, results_dir)
    wanted = spec["output"].get("diagnostics")
    if summary is None or not wanted or spec["output"].get("x") is not None:
        return
    for combo in spec.reading_combinations():
        k = readings.get(reading_text(combo))
        rows = rows_of_reading(summary, combo)
        for row in rows[rows.metric.isin(wanted)].to_dict("records"):
            base = f"{spec.id}/reading{k}/{row['policy']}/{row['metric']}"
            for key, column in (("mean", "mean"), ("low", "ci_low"), ("high", "ci_high")):
                m.add(f"{base}/{key}", fmt(row.get(column)))

def _claim_macros(m: _Macros, spec, results_dir: Path) -> None:
    if "judges" in getattr(spec, "data", {}):
        _judged_macros(m, spec, results_dir)
    for claim, row in claim_rows(spec, results_dir):
        verdict = verdict_of(row)
        base = f"{spec.id}/claim/{claim['id']}"
        m.add(f"{base}/text", tex_escape(claim["text"]))
        if row:
            m.add(f"{base}/verdict", tex_escape(verdict))
            m.add(f"{base}/verdicttex", verdict_tex(verdict))
            m.add(f"{base}/estimate", fmt(row.get("estimate")))
            m.add(f"{base}/low", fmt(row.get("ci_low")))
            m.add(f"{base}/high", fmt(row.get("ci_high")))
            m.add(f"{base}/threshold", fmt(row.get("threshold")))
            m.add(f"{base}/statistic", tex_escape(row.get("statistic") or ""))
            m.add(f"{base}/cells", int_or_dash(row.get("cells")))
            m.add(f"{base}/cellsreproduced", int_or_dash(row.get("cells_reproduced")))

def _pairs_of(lines):
    for line in lines:
        key, _, value = line[len("\\valdef{"):].partition("}{")
        yield key, value[:-1]

def numbers_tex(specs, results_dir: Path, figures=()) -> str:
    values = numbers(specs, results_dir, figures)
    body = "\n".join(f"\\valdef{{{k}}}{{{v}}}" for k, v in values.items())
    return HEADER + PREAMBLE + body + "\n"

def _published_macros(m: _Macros, spec) -> None:
    """Published values from the spec, for every cell of the full grid they name."""
    for e in spec.data.get("published") or []:
        where = e.get("where") or {}
        cell = "".join(f"{k}={where[k]}/" for k in spec.grid if k in where)
        if "than" in e:
            m.add(f"{spec.id}/{cell}{e['policy']}/over/{e['than']}/{e['metric']}/published", fmt_published(e["value"]))
        else:
            m.add(f"{spec.id}/{cell}{e.get('policy', spec.baseline)}/{e['metric']}/published",
                  fmt_published(e["value"]))

SUMMARY_COLUMNS = {"mean": "mean", "low": "ci_low", "high": "ci_high"}
VS_BASELINE_COLUMNS = {"diff": "diff_mean", "difflow": "diff_low", "diffhigh": "diff_high",
                       "ratio": "ratio_mean", "ratiolow": "ratio_low", "ratiohigh": "ratio_high"}
RATIO_FIELDS = {"ratio": "mean", "ratiolow": "low", "ratiohigh": "high"}

def _summary_macros(m: _Macros, spec, summary) -> None:
    for _, r in summary.iterrows():
        values = cell_values(spec, r)
        base = f"{spec.id}/{cell_key(spec, values)}{r['policy']}/{r['metric']}"
        for suffix, column in SUMMARY_COLUMNS.items():
            m.add(f"{base}/{suffix}", fmt(r[column]))
        m.add(f"{base}/n", int_or_dash(r["n"]))
        pub = published_for(spec, values, r["policy"], r["metric"])
        if pub is not None:
            m.add(f"{base}/relerr", fmt_percent((r["mean"] - pub) / pub if pub else math.nan))
        if r["policy"] != spec.baseline:
            for suffix, column in VS_BASELINE_COLUMNS.items():
                m.add(f"{base}/{suffix}", fmt(r.get(column)))

def _pair_macros(m: _Macros, spec, reps) -> None:
    """Ratios policy/than of every ordered pair of policies, per cell, with their average and
    largest value over the cells."""
    by_pair: dict = {}
    for values, rows in split_cells(spec, reps):
        cell = cell_key(spec, values)
        for metric in spec.metrics:
            for p, q in itertools.permutations(spec.policies, 2):
                if not ((rows.policy == p).any() and (rows.policy == q).any()):
                    continue
                iv = pair_ratio(spec, rows, p, q, metric["name"])
                if iv is None:
                    continue
                base = f"{spec.id}/{cell}{p}/over/{q}/{metric['name']}"
                for suffix, field in RATIO_FIELDS.items():
                    m.add(f"{base}/{suffix}", fmt(getattr(iv, field)))
                by_pair.setdefault((p, q, metric["name"]), []).append((iv.mean, values))
                pub = _published_ratio(spec, values, p, q, metric["name"])
                if pub is not None:
                    m.add(f"{base}/relerr", fmt_percent((iv.mean - pub) / pub))
    if not spec.grid:
        return
    for (p, q, metric), items in by_pair.items():
        means = [x for x, _ in items if isnum(x)]
        if not means:
            continue
        m.add(f"{spec.id}/avg/{p}/over/{q}/{metric}/ratio", fmt(sum(means) / len(means)))
        for name, pick in (("max", max), ("min", min)):
            best, where = pick(((x, v) for x, v in items if isnum(x)), key=lambda t: t[0])
            m.add(f"{spec.id}/{name}/{p}/over/{q}/{metric}/ratio", fmt(best))
            m.add(f"{spec.id}/{name}/{p}/over/{q}/{metric}/at", tex_escape(", ".join(str(v) for v in where.values())))

def _fit_macros(m: _Macros, spec, reps) -> None:
    """X/fit/x: the fitted value with its interval; X/<machine>/{stated,level,error,gain}: the level
    at the stated reading, the level read off at the fit, its relative error against the paper
    (percent) and the gain ratio there."""
    from simcore.report.fit import fit

    result = fit(spec, reps)
    m.add(f"{spec.id}/fit/x", fmt_ci(result["x"].mean, result["x"].low, result["x"].high, 3))
    for r in result["rows"]:
        key = f"{spec.id}/{r['by']}"
        m.add(f"{key}/stated", fmt_ci(r["stated"].mean, r["stated"].low, r["stated"].high))
        m.add(f"{key}/level", fmt_ci(r["level"].mean, r["level"].low, r["level"].high))
        error = f"{100 * r['error']:+.1f}\\,\\%".replace("-", "\\ensuremath{-}") if isnum(r["error"]) else "--"
        m.add(f"{key}/error", error)
        m.add(f"{key}/gain", fmt_ci(r["gain"].mean, r["gain"].low, r["gain"].high))
    run = {r["by"] for r in result["rows"]}
    for name in spec.grid[spec["output"]["by"]]:
        if name not in run:   # a machine this scale leaves out
            for part in ("stated", "level", "error", "gain"):
                m.add(f"{spec.id}/{name}/{part}", NOT_RUN)

def _published_ratio(spec, values: dict, policy: str, than: str, metric: str):
    """The paper's ratio policy/than on ``metric`` in this cell, else None."""
    for e in published_ratios(spec):
        if (e["policy"], e["than"], e["metric"]) == (policy, than, metric) and e["value"] \
                and where_matches(e.get("where"), values) and (e.get("where") or not spec.grid):
            return float(e["value"])
    return None

def _not_run_macros(m: _Macros, spec, results_dir: Path) -> None:
    """Every key a cell of the full grid would have, as \\valnotrun, for the cells not run at
    the scale of the experiment's results."""
    for values in cells_not_run(spec, read_provenance(spec, results_dir)):
        for key in _cell_keys(spec, values):
            m.add(key, NOT_RUN)

def cells_not_run(spec, prov: dict | None) -> list[dict]:
    """Grid values of the cells of the full grid not run at the scale of ``prov``."""
    if not prov or prov.get("scale") not in SCALES:
        return []
    run = {c.index for c in spec.cells(prov["scale"])}
    own = {name: entries[0]["value"] for name, entries in (spec.data.get("readings") or {}).items()}
    return [c.values for c in spec.all_cells()   # judged readings: their own reading's cells (_default_reading)
            if c.index not in run and where_matches(own, c.values)]

def _cell_keys(spec, values: dict):
    """The keys of one cell's summary and pair macros (see _summary_macros, _pair_macros)."""
    cell = f"{spec.id}/{cell_key(spec, values)}"
    for metric in (x["name"] for x in spec.metrics):
        for policy in spec.policies:
            base = f"{cell}{policy}/{metric}"
            yield from (f"{base}/{s}" for s in (*SUMMARY_COLUMNS, "n"))
            if published_for(spec, values, policy, metric) is not None:
                yield f"{base}/relerr"
            if policy != spec.baseline:
                yield from (f"{base}/{s}" for s in VS_BASELINE_COLUMNS)
        for p, q in itertools.permutations(spec.policies, 2):
            base = f"{cell}{p}/over/{q}/{metric}"
            yield from (f"{base}/{s}" for s in RATIO_FIELDS)
            if _published_ratio(spec, values, p, q, metric) is not None:
                yield f"{base}/relerr"
