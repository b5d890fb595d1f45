"""A calibration: which open quantities of a model are fitted, within which ranges, on which
published points (``config/calibration/ID.yaml``).

A calibration names a paper's **control** (``policy``: the baseline of every target experiment;
or a list of controls, the baseline among them, run together on each replication's workload)
and the experiments whose published points of those policies and ``metric`` (one name, a list, or
a mapping of names to groups: a control fitted on several published quantities at once, each
group weighing alike in the objective ``squared-relative-error-per-group``; a metric the target
spec defines as a ``ratio`` of two model metrics is their sums' quotient over the replications)
it is fitted on; the treatment's points never enter it, nor points marked ``untested`` unless
``take_untested`` says why they are the control's level all the same; ``where`` (a parameter's
listed values, with ``why``) keeps only the points of those cells, the others left to judge. Each open quantity is
declared before any fit: a model parameter, its range (``low``/``high``, searched on a ``linear`` or ``log``
scale; an integer parameter's values are rounded) or its ``choices``, the sentence of the paper
behind the range (``support``) and why the text leaves it open (``why``). ``fixed`` holds what
the text states and the experiments' spec may not (each with its ``why``); ``tied`` sets a
parameter to a quantity's value (``same_as``, with its ``why``: e.g. a domain's shortest and
longest balancing interval made one period). Every value is checked against the model
parameter's domain here, before anything runs; a bad file is one sentence naming the file and key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from simcore.errors import InputError
from simcore.experiments.spec import find_named, find_spec, load_spec
from simcore.inputs import read_yaml
from simcore.vocabulary.domains import show

SCALES = ("linear", "log")
OBJECTIVES = ("squared-relative-error", "squared-relative-error-per-group")
RUN_SCALES = ("smoke", "quick", "full")


@dataclass(frozen=True)
class Quantity:
    """One open quantity: a model parameter with a range (``low``, ``high``, ``scale``) or a
    list of ``choices``; ``support`` is the paper's sentence behind it, ``why`` why it is open."""

    name: str
    support: str
    why: str
    low: float | None = None
    high: float | None = None
    scale: str = "linear"
    choices: tuple = ()
    integer: bool = False

    @property
    def continuous(self) -> bool:
        return not self.choices


@dataclass(frozen=True)
class Point:
    """One published point of the control: its experiment, the parameters of its cell, the
    metric and the value; ``cell``: the cell it is measured in, named by the index of the cell's
    first point among the file's points (its seeds)."""

    experiment: str
    params: dict
    value: float
    source: str
    metric: str = ""
    cell: int = 0
    policy: str = ""
    ratio: tuple = ()      # the target's [numerator, denominator] when the metric is their sums' quotient

    @property
    def label(self) -> str:
        where = ", ".join(f"{k}={show(v)}" for k, v in self.params.items() if k in ("topology", "n_tasks"))
        return f"{self.experiment} ({where}){': ' + self.metric if self.metric else ''}"


@dataclass
class Calibration:
    """A validated calibration file (module docstring)."""

    path: Path
    id: str
    paper: str
    title: str
    model: str
    policies: list[str]
    metrics: list[str]
    targets: list[str]
    quantities: list[Quantity]
    fixed: dict
    objective: str
    holdout: str
    search: dict
    replications: dict
    points: list[Point] = field(default_factory=list)
    tied: dict = field(default_factory=dict)      # {parameter: the quantity whose value it takes}
    metric_groups: dict = field(default_factory=dict)  # {metric: its group in the objective}

    @property
    def cells(self) -> list[int]:
        """The cells of the points: a cell is simulated once for all its points, with the seeds
        of its name (a one-metric calibration: every point its own cell, named by its index)."""
        return list(dict.fromkeys(p.cell for p in self.points))

    def expand(self, values: dict) -> dict:
        """``values`` and the tied parameters set from them."""
        return {**values, **{name: values[source] for name, source in self.tied.items()}}

    @property
    def continuous(self) -> list[Quantity]:
        return [q for q in self.quantities if q.continuous]

    @property
    def choices(self) -> list[Quantity]:
        return [q for q in self.quantities if not q.continuous]

    @property
    def policy(self) -> str:
        """The controls, as the text names them ('pvm, mosix')."""
        return ", ".join(self.policies)

    def group(self, point: Point) -> str:
        """The held-out group of a point: its ``holdout`` parameter's value, or its metric."""
        return point.metric if self.holdout == "metric" else str(point.params[self.holdout])

    def groups(self) -> list[str]:
        """The held-out groups among the points, in their order."""
        return list(dict.fromkeys(self.group(p) for p in self.points))


def _need(path, data: dict, key: str, kind, where: str = ""):
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, (str, list, dict)) and not value):
        raise InputError(f"{path}: key '{where}{key}' must be a non-empty {getattr(kind, '__name__', kind)}.")
    return value


def _quantity(path, name: str, entry, parameters: dict) -> Quantity:
    where = f"open.{name}"
    if name not in parameters:
        raise InputError(f"{path}: key '{where}' names no parameter of the model.")
    if not isinstance(entry, dict):
        raise InputError(f"{path}: key '{where}' must be a mapping (low/high/scale or choices, support, why).")
    support, why = _need(path, entry, "support", str, where + "."), _need(path, entry, "why", str, where + ".")
    domain = parameters[name]
    if "choices" in entry:
        choices = _need(path, entry, "choices", list, where + ".")
        for value in choices:
            domain.check(value, f"{path}: key '{where}.choices'")
        return Quantity(name, support, why, choices=tuple(choices))
    low, high = entry.get("low"), entry.get("high")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)) or not low < high:
        raise InputError(f"{path}: keys '{where}.low' and '{where}.high' must be numbers with low < high.")
    integer = not domain.domain.admits(float(low)) and domain.domain.admits(int(low))
    for key, value in (("low", low), ("high", high)):
        if integer and value != int(value):
            raise InputError(f"{path}: key '{where}.{key}' must be an integer: {name} takes integers.")
        domain.check(int(value) if integer else float(value), f"{path}: key '{where}.{key}'")
    scale = entry.get("scale", "linear")
    if scale not in SCALES or (scale == "log" and low <= 0):
        raise InputError(f"{path}: key '{where}.scale' must be one of {', '.join(SCALES)} (log needs low > 0).")
    return Quantity(name, support, why, float(low), float(high), scale, integer=integer)


def _points(path, policies: list[str], metrics: list[str], targets: list[str], specs_dir, fixed: dict,
            untested: bool = False, where: dict | None = None) -> list[Point]:
    """The published points of ``policies`` and ``metrics`` of every target, in file order (an
    ``untested`` entry, set beside for reading only, is no point unless ``untested``; with
    ``where``, only entries at its listed values); points of one experiment and parameters share
    a cell, where every control runs on the same workload."""
    out, cells = [], {}
    for target in targets:
        spec = load_spec(find_spec(target, specs_dir))
        if spec.baseline not in policies or not set(policies) <= set(spec.policies):
            raise InputError(f"{path}: key 'policy' is {', '.join(policies)}, but target {target} has baseline "
                             f"{spec.baseline!r} and policies {', '.join(spec.policies)}: a calibration fits the "
                             "controls only, the baseline among them.")
        ratios = {m["name"]: tuple(m["ratio"]) for m in spec.metrics if "ratio" in m}
        for entry in spec.data.get("published") or []:
            at = entry.get("where") or {}
            if (entry.get("policy") in policies and entry.get("metric") in metrics and "than" not in entry
                    and (untested or "untested" not in entry)
                    and all(name in at and at[name] in values for name, values in (where or {}).items())):
                params = spec.params({**(entry.get("where") or {}), **fixed}, calibrated=False)
                cell = cells.setdefault(json.dumps([target, params], sort_keys=True, default=str), len(out))
                out.append(Point(target, params, float(entry["value"]), str(entry.get("source", target)),
                                 entry["metric"], cell, entry["policy"], ratios.get(entry["metric"], ())))
    missing = [(p, m) for p in policies for m in metrics if not any(q.policy == p and q.metric == m for q in out)]
    if missing:
        raise InputError(f"{path}: key 'targets' gives no published point of {missing[0][0]} and {missing[0][1]}.")
    return out


def load_calibration(path: str | Path, specs_dir: str | Path = "config/experiments") -> Calibration:
    """Read and check a calibration file and collect its published points."""
    from simcore.models import get_model

    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping.")
    model = get_model(_need(path, data, "model", str))
    parameters = model.PARAMETERS
    quantities = [_quantity(path, n, e, parameters) for n, e in _need(path, data, "open", dict).items()]
    fixed = _fixed(path, data, parameters)
    objective, holdout = data.get("objective", OBJECTIVES[0]), _need(path, data, "holdout", str)
    if objective not in OBJECTIVES:
        raise InputError(f"{path}: key 'objective' must be one of {', '.join(OBJECTIVES)}.")
    search = _need(path, data, "search", dict)
    for key in ("design", "polish", "holdout_polish", "seed"):
        if not isinstance(search.get(key), int) or isinstance(search.get(key), bool) or search[key] < 0:
            raise InputError(f"{path}: key 'search.{key}' must be a non-negative integer.")
    tied = _tied(path, data, parameters)
    groups = _metric_groups(path, data)
    metrics = list(groups)
    reps = _need(path, data, "replications", dict)
    for scale in RUN_SCALES:
        if not isinstance(reps.get(scale), int) or reps[scale] < 1:
            raise InputError(f"{path}: key 'replications.{scale}' must be a positive integer.")
    policies = _policies(path, data)
    untested = data.get("take_untested")
    if untested is not None and not (isinstance(untested, str) and len(untested) >= 20):
        raise InputError(f"{path}: key 'take_untested' must say, in a sentence, why the control's untested "
                         "points are its level all the same.")
    where = _where(path, data.get("where"), parameters)
    cal = Calibration(path, _need(path, data, "id", str), _need(path, data, "paper", str),
                      _need(path, data, "title", str), data["model"], policies,
                      metrics, _need(path, data, "targets", list), quantities, fixed,
                      objective, holdout, search, reps, tied=tied, metric_groups=groups)
    if cal.id != path.stem:
        raise InputError(f"{path}: key 'id' must be the file's name ({path.stem!r}), not {cal.id!r}.")
    cal.points = _points(path, cal.policies, cal.metrics, cal.targets, specs_dir, fixed, untested is not None, where)
    if (holdout != "metric" and holdout not in parameters) or len(cal.groups()) < 2:
        raise InputError(f"{path}: key 'holdout' must name a parameter that takes two values or more among the "
                         "points, or 'metric' when the points have two metrics or more.")
    return cal


def _fixed(path: Path, data: dict, parameters: dict) -> dict:
    """``fixed``: {parameter: {value, why}}, each value in its parameter's domain, as {parameter: value}."""
    fixed = {}
    for name, entry in (data.get("fixed") or {}).items():
        if name not in parameters or not isinstance(entry, dict) or "value" not in entry or "why" not in entry:
            raise InputError(f"{path}: key 'fixed.{name}' must name a model parameter and give value and why.")
        parameters[name].check(entry["value"], f"{path}: key 'fixed.{name}.value'")
        fixed[name] = entry["value"]
    return fixed


def _tied(path: Path, data: dict, parameters: dict) -> dict:
    """``tied``: {parameter: {same_as: open quantity, why}}, as {parameter: quantity}."""
    tied = {}
    for name, entry in (data.get("tied") or {}).items():
        source = entry.get("same_as") if isinstance(entry, dict) else None
        if name not in parameters or source not in data["open"] or "why" not in entry or name in data["open"]:
            raise InputError(f"{path}: key 'tied.{name}' must name a model parameter that is not open, and give "
                             f"same_as (an open quantity) and why.")
        tied[name] = source
    return tied


def _metric_groups(path: Path, data: dict) -> dict:
    """``metric``: a metric's name, a list of them, or {metric: group}; as {metric: group}."""
    metrics = data.get("metric")
    metrics = [metrics] if isinstance(metrics, str) else metrics
    groups = dict(metrics) if isinstance(metrics, dict) else {m: m for m in metrics or [] if isinstance(m, str)}
    if not groups or not all(isinstance(m, str) and m and isinstance(g, str) and g for m, g in groups.items()) \
            or len(groups) != len(metrics):
        raise InputError(f"{path}: key 'metric' must be a metric's name, a list of them, or a mapping of them to "
                         f"groups.")
    return groups


def _policies(path: Path, data: dict) -> list[str]:
    """``policy``: a policy's name or a list of distinct names, as a list."""
    policies = data.get("policy")
    policies = [policies] if isinstance(policies, str) else policies
    if not isinstance(policies, list) or not policies or not all(isinstance(p, str) and p for p in policies) \
            or len(set(policies)) != len(policies):
        raise InputError(f"{path}: key 'policy' must be a policy's name or a list of distinct names.")
    return policies


def _where(path, where, parameters: dict) -> dict:
    """``where``: {parameter: [values], why: sentence} (module docstring), as {parameter: values}."""
    if where is None:
        return {}
    if not isinstance(where, dict) or not isinstance(where.get("why"), str) or len(where) < 2:
        raise InputError(f"{path}: key 'where' must map parameters to lists of values and say why (key 'why').")
    out = {}
    for name, values in where.items():
        if name == "why":
            continue
        if name not in parameters or not isinstance(values, list) or not values:
            raise InputError(f"{path}: key 'where.{name}' must name a model parameter and list its values.")
        for value in values:
            parameters[name].check(value, f"{path}: key 'where.{name}'")
        out[name] = values
    return out


def find_calibration(name: str, directory: str | Path = "config/calibration") -> Path:
    """The file of calibration ``name`` (or ``name`` itself if it is a YAML path)."""
    return find_named(name, directory, "calibration", InputError)
