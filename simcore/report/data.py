"""Shared helpers of the report: reading results, published values, number formatting, escaping."""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from simcore.experiments.papers import PAPER_ORDER
from simcore.stats.claims import VERDICTS
from simcore.stats.summary import metric_estimate
from simcore.vocabulary.cells import grid_values, where_matches

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_SPECIAL))


def tex_escape(text) -> str:
    """``text`` with LaTeX special characters escaped (for any text coming from specs or results)."""
    return _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group()], str(text))


def tex_id(name) -> str:
    """An experiment id (or a parameter's or metric's name) in typewriter type that may break after
    each of its hyphens and underscores."""
    return r"\texttt{" + re.sub(r"(-|\\_)", r"\1\\allowbreak{}", tex_escape(name)) + "}"


def isnum(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def fmt(x, digits: int = 4) -> str:
    """A number for LaTeX text: ``digits`` significant digits, no exponent for ordinary sizes,
    a real minus sign; '--' for a missing value."""
    if not isnum(x):
        return "--"
    x = float(x)
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 10 ** digits:
        body = f"{ax:.0f}"
    elif ax < 1e-3:
        mant, exp = f"{ax:.{digits - 1}e}".split("e")
        body = f"{mant}\\ensuremath{{\\times 10^{{{int(exp)}}}}}"
    else:
        body = f"{ax:.{digits}g}"
        if "e" in body:  # e.g. 1e+03 from '4g' of 1000.0
            body = f"{ax:.0f}"
    return ("\\ensuremath{-}" if x < 0 else "") + body


def fmt_published(x) -> str:
    """A published value as printed in the paper (up to 6 significant digits)."""
    if not isnum(x):
        return "--"
    x = float(x)
    return ("\\ensuremath{-}" if x < 0 else "") + f"{abs(x):.6g}"


def fmt_percent(x, digits: int = 2) -> str:
    """A relative error (fraction) as a signed percentage."""
    if not isnum(x):
        return "--"
    x = 100 * float(x)
    sign = "+" if x >= 0 else "\\ensuremath{-}"
    return f"{sign}{abs(x):.{digits}g}\\%" if abs(x) < 10 else f"{sign}{abs(x):.0f}\\%"


def fmt_ci(mean, low, high, digits: int = 4) -> str:
    """'mean [low, high]' with the decimals of ``digits`` significant digits of the mean; the
    mean alone when there is no interval (or a degenerate one)."""
    if not isnum(mean):
        return "--"
    if not (isnum(low) and isnum(high)) or float(low) == float(high):
        return fmt(mean, digits)
    m = abs(float(mean)) or max(abs(float(low)), abs(float(high)))
    if m == 0 or m < 1e-3 or m >= 10 ** digits:
        return f"{fmt(mean, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"
    decimals = max(0, digits - 1 - math.floor(math.log10(m)))
    return f"{_fixed(mean, decimals)} [{_bound(low, decimals)}, {_bound(high, decimals)}]"


def _fixed(x, decimals: int) -> str:
    text = f"{abs(float(x)):.{decimals}f}"
    negative = float(x) < 0 and float(text) != 0
    return ("\\ensuremath{-}" if negative else "") + text


def _bound(x, decimals: int) -> str:
    """An interval bound at the mean's decimals, or to two significant digits where those
    decimals would print a positive bound (a positive metric's lower bound) as 0."""
    text = _fixed(x, decimals)
    return fmt(x, 2) if float(x) > 0 and float(text) == 0 else text


def results_of(results_dir: Path, exp: str) -> Path:
    return Path(results_dir) / exp


def read_csv(path: Path) -> pd.DataFrame | None:
    """The table at ``path``, else at ``path``.gz (the committed reference packs its largest
    tables), else None."""
    path = Path(path)
    if not path.exists():
        path = path.with_name(path.name + ".gz")
        if not path.exists():
            return None
    return pd.read_csv(path, keep_default_na=True)


def read_summary(spec, results_dir: Path) -> pd.DataFrame | None:
    return read_csv(results_of(results_dir, spec.id) / "summary.csv")


def read_claims(spec, results_dir: Path) -> pd.DataFrame | None:
    return read_csv(results_of(results_dir, spec.id) / "claims.csv")


def read_replications(spec, results_dir: Path) -> pd.DataFrame | None:
    """The experiment's replications, or those of the experiment it takes its data from."""
    for exp in dict.fromkeys([spec.id, spec.source_id]):
        frame = read_csv(results_of(results_dir, exp) / "replications.csv")
        if frame is not None:
            return frame
    return None


def claim_rows(spec, results_dir: Path):
    """Each claim of the spec with its row of claims.csv (``None`` when not yet evaluated)."""
    claims = read_claims(spec, results_dir)
    for claim in spec.data.get("claims") or []:
        row = None
        if claims is not None:
            hit = claims[claims.claim == claim["id"]]
            row = hit.iloc[0].to_dict() if len(hit) else None
        yield claim, row


def read_provenance(spec, results_dir: Path) -> dict | None:
    path = results_of(results_dir, spec.id) / "provenance.json"
    return json.loads(path.read_text()) if path.exists() else None


def metric_of(spec, name: str) -> dict:
    for m in spec.metrics:
        if m["name"] == name:
            return m
    raise ValueError(f"{spec.path}: metric '{name}' is not in 'metrics'.")


def metric_label(spec, name: str) -> str:
    m = metric_of(spec, name)
    label = m.get("label", name.replace("_", " "))
    return f"{label} ({m['unit']})" if m.get("unit") and m["unit"] != "1" else label


def published_values(spec) -> list[dict]:
    """Published values of one policy (no ``than``)."""
    return [e for e in spec.data.get("published") or [] if "than" not in e]


def has_gain_panel(spec) -> bool:
    """Line figures of experiments with a baseline and another policy show the paired gain too,
    unless the spec says ``gain: false`` or draws a ``series`` (one gain line per policy would mix its values)."""
    out = spec["output"]
    return (out["kind"] == "lines" and out.get("gain", True) and not out.get("series")
            and any(p != spec.baseline for p in spec.policies))


def published_ratios(spec) -> list[dict]:
    """Published ratios policy/than."""
    return [e for e in spec.data.get("published") or [] if "than" in e]


def published_for(spec, values: dict, policy: str, metric: str):
    """The published value (not ratio) for this cell, policy and metric, else None."""
    for e in published_values(spec):
        if e.get("policy", policy) == policy and e["metric"] == metric and where_matches(e.get("where"), values):
            return float(e["value"])
    return None


def grid_names(spec) -> list[str]:
    return list(spec.grid)


def cell_values(spec, row) -> dict:
    """Grid values of a summary/replications row, as Python scalars."""
    return grid_values(spec, row)


def cell_key(spec, values: dict) -> str:
    """'n_procs=17/' for a grid cell ('' for an experiment without grid; with a one-at-a-time grid
    only the values that differ from the first, 'default/' for the default cell). An experiment that judges
    another names only the judged grid's values: its cell macros are those of its own reading
    (``macros._default_reading``), and the readings' values would only lengthen every name."""
    readings = spec.data.get("readings") or {} if "judges" in spec.data else {}
    names = [k for k in grid_names(spec) if k in values and k not in readings]
    if spec.data.get("grid_design") == "one-at-a-time":   # only what differs from the default cell
        first = {k: _val_str(spec.grid[k][0]) for k in names}
        changed = "".join(f"{k}={_val_str(values[k])}/" for k in names if _val_str(values[k]) != first[k])
        return changed or "default/"
    return "".join(f"{k}={_val_str(values[k])}/" for k in names)


def _val_str(v) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def pair_ratio(spec, reps: pd.DataFrame, policy: str, than: str, metric: str):
    """Interval of policy/than on ``metric`` over paired replications in ``reps`` (one cell)."""
    m = metric_of(spec, metric)
    a = metric_estimate(spec.model, reps[reps.policy == policy], m)
    b = metric_estimate(spec.model, reps[reps.policy == than], m)
    if not b.value:
        return None
    return (a / b).interval(spec.confidence)


def split_cells(spec, reps: pd.DataFrame):
    """(values, rows) per cell of a replications table, in cell order."""
    for _, rows in reps.groupby("cell", sort=True):
        yield cell_values(spec, rows.iloc[0]), rows


VERDICT_COLOURS = {"reproduced": "green!45!black", "smaller than published": "orange!90!black",
                   "larger than published": "orange!90!black", "inconclusive": "blue!55!black",
                   "absent": "red!60!black", "negligible": "red!45!black", "not specific": "red!55!black",
                   "contradicted": "red!75!black", "calibrated": "violet!70!black"}


def verdict_tex(verdict) -> str:
    """A verdict, coloured (reproduced green, smaller/larger amber, inconclusive blue, absent and
    contradicted red, calibrated violet)."""
    if not isinstance(verdict, str) or not verdict:
        return r"\textcolor{gray}{no result}"
    colour = VERDICT_COLOURS.get(verdict, "gray")
    return rf"\textcolor{{{colour}}}{{\textbf{{{tex_escape(verdict)}}}}}"


STAT_SYMBOL = {"less": "<", "greater": ">", "ratio-above": ">", "ratio-below": "<", "share-less": ">",
               "gain-grows": ">", "spread": ">"}


def claim_statistic(row, unit: tuple[str, float] | None = None) -> str:
    """'ratio 1.67 [1.60, 1.74] > 1.2' for one row of claims.csv; with ``unit`` (:func:`statistic_unit`)
    'ratio (×) 1.67 [1.60, 1.74] > 1.2', every number at the unit's factor."""
    if not isnum(row.get("estimate")):
        return "--"
    name, factor = unit or ("", 1.0)
    at = functools.partial(_scaled, row, factor=factor)
    kind = row.get("kind", "")
    threshold = at("threshold") if "threshold" in row else 0.0
    test = f" {STAT_SYMBOL.get(kind, '?')} {fmt(threshold)}" if isnum(threshold) and kind != "value" else ""
    test = test.replace("<", r"\ensuremath{<}").replace(">", r"\ensuremath{>}")
    stat = tex_escape(row.get("statistic", "") or "") + (f" ({name})" if name else "")
    paper = f" (paper {fmt(at('published_effect'))})" if isnum(row.get("published_effect")) else ""
    needs = row.get("required_replications")
    more = f"; decided at about {int(needs)} replications" if isnum(needs) and needs > _n(row) else ""
    return f"{stat} {statistic_ci(row, factor)}{test}{paper}{more}"


def statistic_ci(row, factor: float = 1.0) -> str:
    """A claim row's estimate [ci_low, ci_high], each times ``factor``."""
    return fmt_ci(*(_scaled(row, column, factor) for column in ("estimate", "ci_low", "ci_high")))


def statistic_unit(spec, row) -> tuple[str, float]:
    """The unit of a claim row's statistic and the factor its numbers are shown at: × for a ratio,
    % for a ratio's spread (its standard deviation over the replications), % of the replications
    for a share of them, the metric's unit for a value or a difference (its label for a count or
    another quantity without one), per that unit for a slope."""
    statistic = row.get("statistic")
    if statistic == "ratio":
        return r"\ensuremath{\times}", 1.0
    if statistic in ("spread", "share"):
        return r"\%" + " of replications" * (statistic == "share"), 100.0
    metric = next((m for m in getattr(spec, "metrics", ()) if m["name"] == row.get("metric")), {})
    unit = metric.get("unit") if metric.get("unit") not in (None, "", "1") else None
    quantity = tex_escape(unit or metric.get("label") or str(row.get("metric", "")).replace("_", " "))
    if statistic == "slope":
        return f"per {quantity}" if unit else f"per unit of {quantity}", 1.0
    return quantity, 1.0


def _scaled(row, column: str, factor: float = 1.0):
    return float(row[column]) * factor if isnum(row.get(column)) else None


def _n(row) -> float:
    return row["n"] if isnum(row.get("n")) else 0


def resize_to_width(tabular: str) -> str:
    """Shrink a tabular to the line width only if it is wider."""
    return ("\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"
            f"{tabular}}}\n")


# -- shared by the report's generated inputs ------------------------------------------------------

HEADER = "% Generated by `simcore report-macros`; do not edit.\n"


def spec_order(spec):
    """Papers in the README's order; within a paper tables, then figures, then the rest."""
    source = str(spec["source"]).lower()
    rank = 0 if source.startswith("table") else 1 if source.startswith("fig") else 2
    paper = PAPER_ORDER.index(spec["paper"]) if spec["paper"] in PAPER_ORDER else len(PAPER_ORDER)
    return (paper, spec["paper"], rank, spec.id)

def by_paper(specs) -> dict:
    out: dict = {}
    for spec in specs:
        out.setdefault(spec["paper"], []).append(spec)
    return out

def verdict_of(row) -> str:
    """A claim row's verdict, 'missing' without a result."""
    return row["verdict"] if row and isinstance(row.get("verdict"), str) else "missing"

def verdict_sentence(counts: dict) -> str:
    """'reproduced 3, inconclusive 5, contradicted 1': every verdict that occurs, in VERDICTS order."""
    parts = [f"{tex_escape(v)} {counts[v]}" for v in (*VERDICTS, "missing") if counts.get(v)]
    return ", ".join(parts) or "none"

def int_or_dash(x) -> str:
    return str(int(x)) if isnum(x) else "--"

def ragged(*widths: float, flush: str = "raggedright") -> str:
    """Ragged-right paragraph columns of these fractions of the line width (a longtable's
    fractions and its column gaps must add up to at most the line width); numbers' columns with
    ``flush="raggedleft"``."""
    return "".join(f">{{\\{flush}\\arraybackslash}}p{{{w:g}\\linewidth}}" for w in widths)


def label_and_numbers(numbers: int, lead_number: bool = False) -> str:
    """Columns of a table at most as wide as the text: optionally a number, then a ragged label (a
    quarter of the line), then ``numbers`` columns flush right in equal shares of what the column
    gaps (2 tabcolsep, 0.025 of the line each) leave, none wider than a fifth of the line."""
    width = min((1 - 0.25 - 0.07 * lead_number - 0.025 * (lead_number + numbers)) / max(numbers, 1), 0.2)
    return "@{}" + "r" * lead_number + ragged(0.25) + ragged(*[round(width, 3)] * numbers, flush="raggedleft") + "@{}"


@dataclass
class LongTable:
    """A table set across pages (longtable), its header repeated on each page: ``header`` and
    ``rows`` are lines of cells, each ending in ``\\\\``."""

    colspec: str
    header: list[str]
    rows: list[str]

    def tex(self, caption: str = "", label: str = "") -> str:
        """The longtable in \\small type, with a numbered caption as wide as the text, or with none."""
        head = ["\\toprule", *self.header, "\\midrule"]
        first = [f"\\caption{{{caption}}}" + (f"\\label{{{label}}}" if label else "") + "\\\\"] if caption else []
        again = ["\\caption[]{(continued)}\\\\"] if caption else []
        return "\n".join(["\\begingroup\\small\\setlength\\LTcapwidth{\\linewidth}",
                          f"\\begin{{longtable}}{{{self.colspec}}}", *first, *head, "\\endfirsthead",
                          *again, *head, "\\endhead", "\\bottomrule", "\\endlastfoot", *self.rows,
                          "\\end{longtable}", "\\endgroup", ""])
