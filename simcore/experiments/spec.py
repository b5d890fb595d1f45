"""Load and validate experiment specs (``config/experiments/<id>.yaml``).

Every problem is reported as one :class:`SpecError` sentence naming the file and the key.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from simcore.errors import InputError
from simcore.inputs import DuplicateKey, load_yaml_text, read_yaml
from simcore.models import get_model
from simcore.models.registry import policy_names
from simcore.vocabulary.cells import options, where_matches
from simcore.vocabulary.domains import NONNEGATIVE_INTEGER

SCALES = ("smoke", "quick", "full")
# Bounds checked before anything is built: a grid beyond them would take memory and time before
# the first replication runs (the largest committed grid has 96 cells, the largest count 9,000).
MAX_CELLS = 10_000            # cells of one experiment's grid: split a larger sweep
MAX_REPLICATIONS = 100_000    # replications of one cell at any scale, precision caps included
CONTROL = "calibration"       # the reading of a judged experiment's control: its calibration's id, or...
UNCALIBRATED = "none"         # ...the control as its spec states it, the recorded fit not applied


class SpecError(InputError):
    """Bad input in an experiment spec, the configuration or an argument."""


def _read_yaml(path: Path) -> Any:
    return read_yaml(path, SpecError)


@functools.lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    """The spec schema's validator, parsed once per process (a workflow parse checks about 110 files)."""
    text = files("simcore.experiments").joinpath("experiment.schema.yaml").read_text()
    return jsonschema.Draft202012Validator(yaml.safe_load(text))


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def schema_problem(error: jsonschema.ValidationError) -> str:
    """A schema violation as the end of one sentence: the key and what is wrong with it."""
    return f"key '{_key(error.absolute_path)}': {error.message}"


def _check_schema(path: Path, data: Any) -> None:
    if not isinstance(data, dict):
        raise SpecError(f"{path}: must be a mapping of keys to values, not {type(data).__name__}.")
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is None:
        return
    if error.validator == "required":
        missing = error.message.split("'")[1]
        where = _key(error.absolute_path)
        key = f"{where}.{missing}" if error.absolute_path else missing
        raise SpecError(f"{path}: key '{key}' is missing.")
    if error.validator == "pattern" and list(error.absolute_path) in (["id"], ["data_from"]):
        raise SpecError(f"{path}: key '{_key(error.absolute_path)}': {error.instance!r} is not an experiment id "
                        "(lower-case words and digits joined by '-').")
    if error.validator in ("minItems", "minProperties") and list(error.absolute_path)[:1] in (["grid"], ["scales"]):
        raise SpecError(
            f"{path}: key '{_key(error.absolute_path)}' is empty: the grid needs at least one value per swept "
            "parameter."
        )
    raise SpecError(f"{path}: {schema_problem(error)}.")


@dataclass(frozen=True)
class Cell:
    """One grid point: its index in the full grid and the swept values."""

    index: int
    values: dict

    @property
    def id(self) -> str:
        return f"c{self.index:03d}"


class Spec:
    """A validated experiment spec."""

    def __init__(self, path: Path, data: dict):
        self.path = path
        self.data = data
        self.model = get_model(data["model"])

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def source_id(self) -> str:
        """The experiment whose raw replications this one reads (itself unless ``data_from``)."""
        return self.data.get("data_from", self.id)

    @property
    def files(self) -> list[Path]:
        """The files this spec is made of: itself, its preset, its data source's files and those
        of the experiment it judges."""
        out = [self.path]
        if "preset" in self.data:
            out.append(self.path.parent.parent / "presets" / f"{self.data['preset']}.yaml")
        for other in dict.fromkeys(x for x in (self.source_id, self.data.get("judges")) if x and x != self.id):
            out += load_spec(self.path.parent / f"{other}.yaml").files
        if "readings_from" in self.data:
            out.append(readings_path(self.path, self.data["readings_from"]))
        if "calibration" in self.data:
            from simcore.experiments.calibrated import record_path

            out += [self.calibration_path, record_path(self.calibration_path)]
        return out

    @property
    def calibration_path(self) -> Path | None:
        """The calibration file of ``calibration`` (None without one)."""
        name = self.data.get("calibration")
        return self.path.parent.parent / "calibration" / f"{name}.yaml" if name else None

    def calibrated(self) -> dict:
        """The recorded fit's values of ``calibration`` ({} without one), each in its domain."""
        if "calibration" not in self.data:
            return {}
        from simcore.experiments.calibrated import calibrated_values, record_path

        values = calibrated_values(self.calibration_path)
        for name, value in values.items():
            self.model.PARAMETERS[name].check(value, f"{record_path(self.calibration_path)}: value {name}")
        return values

    def reading_combinations(self) -> list[dict]:
        """``judges``: every reading, the judged experiment's own first, as {parameter: entry}
        (entry: value, support, why), in the order of ``readings``."""
        readings = self.data.get("readings") or {}
        names = list(readings)
        return [dict(zip(names, combo)) for combo in itertools.product(*(readings[n] for n in names))]

    @property
    def policies(self) -> list[str]:
        return list(self.data["policies"])

    @property
    def baseline(self) -> str:
        return self.data["baseline"]

    @property
    def grid(self) -> dict:
        return dict(self.data.get("grid") or {})

    @property
    def metrics(self) -> list[dict]:
        return list(self.data["metrics"])

    @property
    def confidence(self) -> float:
        return float(self.data["confidence"])

    def label(self, policy: str) -> str:
        return (self.data.get("labels") or {}).get(policy, policy)

    def params(self, overrides: dict | None = None, calibrated: bool = True) -> dict:
        """Model defaults, then fixed values, then assumptions, then (``calibrated``) the recorded
        calibration's values, then ``overrides`` (grid values,
        ``--set``), each in its domain; the relations between parameters (the model's
        ``CONSTRAINTS``) must hold. A grid value ``calibration: none`` (the control's reading)
        leaves the recorded fit out."""
        overrides = dict(overrides or {})
        control = overrides.pop(CONTROL, None)
        params = {name: p.default for name, p in self.model.PARAMETERS.items()}
        params.update(self.data.get("fixed") or {})
        params.update({k: v["value"] for k, v in (self.data.get("assumptions") or {}).items()})
        if calibrated and control != UNCALIBRATED:
            params.update(self.calibrated())
        for name, value in overrides.items():
            if name in self.model.PARAMETERS:  # an unknown name is refused when the model runs
                self.model.PARAMETERS[name].check(value, f"{self.path}: parameter {name}")
            params[name] = value
        for constraint in getattr(self.model, "CONSTRAINTS", ()):
            constraint.check(params, str(self.path))
        return params

    def grid_size(self) -> int:
        """The number of cells of the grid, computed without building them."""
        return grid_size(self.data)

    def all_cells(self) -> list[Cell]:
        """The grid's cells: its product, or (``grid_design: one-at-a-time``) the default cell of
        every parameter's first value, then each other value of each parameter alone."""
        names = list(self.grid)
        if self.data.get("grid_design") == "one-at-a-time":
            base = {n: self.grid[n][0] for n in names}
            combos = [base] + [{**base, n: v} for n in names for v in self.grid[n][1:]]
            return [Cell(i, values) for i, values in enumerate(combos)]
        together = self.data.get("grid_together") or []
        if together:   # the zipped parameters make one axis, at the place of the first of them
            axes = [n for n in names if n not in together[1:]]
            options = [[dict(zip(together, vs)) for vs in zip(*(self.grid[t] for t in together))] if n == together[0]
                       else [{n: v} for v in self.grid[n]] for n in axes]
            return [Cell(i, {k: v for part in combo for k, v in part.items()})
                    for i, combo in enumerate(itertools.product(*options))]
        combos = itertools.product(*(self.grid[n] for n in names)) if names else [()]
        return [Cell(i, dict(zip(names, combo))) for i, combo in enumerate(combos)]

    def varied(self, cell: Cell) -> str | None:
        """One-at-a-time design: the parameter ``cell`` changes from the default cell (None there)."""
        first = self.all_cells()[0].values
        changed = [n for n, v in cell.values.items() if v != first[n]]
        return changed[0] if changed else None

    @property
    def shares_seeds(self) -> bool:
        """``seeds: shared``: every cell's replication r draws from cell 0's seed."""
        return self.data.get("seeds") == "shared"

    def seed_cell(self, index: int) -> int:
        """The cell whose seeds cell ``index`` draws from: itself, or cell 0 with shared seeds."""
        return 0 if self.shares_seeds else index

    def cells(self, scale: str) -> list[Cell]:
        """The cells run at ``scale`` (smoke may thin the grid; indices stay those of the full grid)."""
        thin = self.scale(scale).get("grid") or {}
        return [c for c in self.all_cells() if all(c.values[k] in v for k, v in thin.items())]

    def cell(self, index: int) -> Cell:
        """Cell ``index`` of the full grid; a product grid's is computed from the index alone (the
        last parameter varies fastest, as in :meth:`all_cells`)."""
        n = self.grid_size()
        if not 0 <= index < n:
            raise SpecError(f"{self.path}: cell {index} does not exist (the grid has {n} cells).")
        if self.data.get("grid_design") == "one-at-a-time" or self.data.get("grid_together"):
            return self.all_cells()[index]
        values, rest = {}, index
        for name in reversed(list(self.grid)):
            values[name] = self.grid[name][rest % len(self.grid[name])]
            rest //= len(self.grid[name])
        return Cell(index, {name: values[name] for name in self.grid})

    def scale(self, scale: str) -> dict:
        if scale not in SCALES:
            raise SpecError(f"scale '{scale}' is unknown (choose one of {', '.join(SCALES)}).")
        return self.data["scales"][scale]

    def replications(self, scale: str) -> int:
        return int(self.scale(scale)["replications"])

    def batch_size(self, scale: str, default: int = 50) -> int:
        return int(self.scale(scale).get("batch", default))

    def batches(self, scale: str, default: int = 50) -> list[tuple[int, int]]:
        """Replication ranges [a, b) of the workflow jobs of one cell."""
        n, size = self.replications(scale), self.batch_size(scale, default)
        return [(a, min(a + size, n)) for a in range(0, n, size)]

    def cell_groups(self, scale: str) -> list[list[Cell]]:
        """The cells of ``scale`` in the groups one workflow job runs together (``cells_per_job``
        consecutive cells of the scale's grid; 1 by default): cheap cells share a job's start. A
        group never mixes kinds of value of one parameter (a CPU number and 'random'): one file's
        column holds one type, so a new group starts where the kinds change."""
        size, groups = int(self.scale(scale).get("cells_per_job", 1)), []
        for cell in self.cells(scale):
            last = groups[-1] if groups else None
            if last and len(last) < size and _kinds(last[0]) == _kinds(cell):
                last.append(cell)
            else:
                groups.append([cell])
        return groups

    def cells_between(self, scale: str, first: int, stop: int) -> list[Cell]:
        """The cells of ``scale`` whose index lies in [first, stop) (a job's group of cells), all
        with values of one kind per parameter (:meth:`cell_groups`)."""
        found = [c for c in self.cells(scale) if first <= c.index < stop]
        if not found:
            raise SpecError(f"{self.path}: no cell of scale '{scale}' lies in {first}:{stop}.")
        for cell in found[1:]:
            mixed = [n for n, (a, b) in zip(cell.values, zip(_kinds(found[0]), _kinds(cell))) if a != b]
            if mixed:
                raise SpecError(f"--cells {first}:{stop}: cells {found[0].index} and {cell.index} give parameter "
                                f"'{mixed[0]}' values of different kinds ({found[0].values[mixed[0]]!r} and "
                                f"{cell.values[mixed[0]]!r}); one file holds one kind per column, so run them "
                                "in separate jobs.")
        return found

    def precision(self, scale: str) -> dict | None:
        """The scale's precision mode, defaults filled in (``max_replications``, ``batch``,
        ``rounds``), or None (docs/statistics.md, "Precision mode")."""
        own = self.scale(scale).get("precision")
        if not own:
            return None
        return {"max_replications": int(own["max_replications"]),
                "batch": int(own.get("batch", self.batch_size(scale))), "rounds": int(own.get("rounds", 1))}

    def claim_level(self, scale: str) -> float:
        """The level at which claims are judged at ``scale``: the spec's confidence, or with a
        precision mode, Bonferroni over its rounds + 1 looks at the verdicts."""
        precision = self.precision(scale)
        looks = precision["rounds"] + 1 if precision else 1
        return 1 - (1 - self.confidence) / looks

    def at_level(self, level: float) -> "Spec":
        """This spec with its intervals at ``level`` (the claims of a scale with a precision mode)."""
        return Spec(self.path, {**self.data, "confidence": level})

    def parse_overrides(self, items: list[str] | None) -> dict:
        """``key=value`` strings to a dict; values are YAML scalars or lists."""
        out = {}
        for item in items or []:
            key, sep, raw = item.partition("=")
            if not sep or not key:
                raise SpecError(f"--set '{item}': expected key=value.")
            if key not in self.model.PARAMETERS:
                raise SpecError(
                    f"--set '{key}': unknown parameter of model '{self['model']}' used by {self.path} "
                    f"(known: {', '.join(sorted(self.model.PARAMETERS))})."
                )
            try:
                out[key] = load_yaml_text(raw)
            except DuplicateKey as err:
                raise SpecError(f"--set '{key}': {err}.") from None
            except yaml.YAMLError:
                raise SpecError(f"--set '{key}': value '{raw}' is not a valid YAML value.") from None
            self.model.PARAMETERS[key].check(out[key], f"--set {key}")
        return out


def _model(path: Path, data: dict):
    try:
        return get_model(data["model"])
    except KeyError:
        raise SpecError(f"{path}: key 'model': unknown model '{data['model']}'.") from None


def _check_params(path: Path, data: dict, model) -> None:
    """Every name in ``fixed``, ``assumptions`` and ``grid`` is a parameter of the model and
    every value lies in its domain; the message names ``path`` and the key."""
    for section in ("fixed", "assumptions", "grid"):
        for name, entry in (data.get(section) or {}).items():
            if name not in model.PARAMETERS:
                raise SpecError(f"{path}: key '{section}.{name}': not a parameter of model '{data['model']}'.")
            check = model.PARAMETERS[name].check
            if section == "fixed":
                check(entry, f"{path}: fixed.{name}")
            elif section == "assumptions":
                check(entry["value"], f"{path}: assumptions.{name}.value")
            else:
                for i, value in enumerate(entry):
                    check(value, f"{path}: grid.{name}[{i}]")


def _non_finite(value, key: str = ""):
    """``key = value`` of the first NaN or infinity in a nested value, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{key or '(top level)'} = {value}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _non_finite(v, f"{key}.{k}" if key else str(k))
        if found:
            return found
    return None


def _kinds(cell: Cell) -> tuple[str, ...]:
    """The kind of each of a cell's values as a table column stores it: number, text, flag, none
    or other (a list or a mapping)."""
    def kind(value) -> str:
        if isinstance(value, bool):
            return "flag"
        if isinstance(value, (int, float)):
            return "number"
        return "text" if isinstance(value, str) else "none" if value is None else "other"
    return tuple(kind(v) for v in cell.values.values())


def grid_size(data: dict) -> int:
    """Cells of a spec's grid: the product of its axes (parameters zipped by ``grid_together``
    make one, as long as the shortest of them), or one-at-a-time, 1 + the other values of each."""
    grid = data.get("grid") or {}
    if data.get("grid_design") == "one-at-a-time":
        return 1 + sum(len(v) - 1 for v in grid.values())
    together = [n for n in data.get("grid_together") or [] if n in grid]
    axes = [len(v) for n, v in grid.items() if n not in together]
    return math.prod(axes + ([min(len(grid[n]) for n in together)] if together else []))


def _check_sizes(path: Path, data: dict) -> None:
    """A grid or a replication count beyond :data:`MAX_CELLS` or :data:`MAX_REPLICATIONS` is
    refused before any cell is built."""
    n = grid_size(data)
    if n > MAX_CELLS:
        raise SpecError(f"{path}: key 'grid': {n:,} cells, more than the {MAX_CELLS:,} one experiment may hold "
                        "(split the sweep into several experiments).")
    for scale, entry in (data.get("scales") or {}).items():
        for key, value in (("replications", entry.get("replications")),
                           ("precision.max_replications", (entry.get("precision") or {}).get("max_replications"))):
            if isinstance(value, int) and value > MAX_REPLICATIONS:
                raise SpecError(f"{path}: key 'scales.{scale}.{key}': {value:,} replications of a cell, more than "
                                f"the {MAX_REPLICATIONS:,} allowed.")


def _check_semantics(path: Path, data: dict) -> None:
    """What the schema cannot say: names that must exist, and relations between keys (in this order)."""
    _check_sizes(path, data)
    rest = {k: v for k, v in data.items() if k not in ("fixed", "assumptions", "grid")}  # those: their domains
    bad = _non_finite(rest)
    if bad:
        raise SpecError(f"{path}: {bad} is not a finite number.")
    if data["id"] != path.stem:
        raise SpecError(f"{path}: key 'id' is '{data['id']}' but must equal the file name '{path.stem}'.")
    model = _model(path, data)
    metric_names = _check_policies_and_metrics(path, data, model)
    grid = data.get("grid") or {}
    _check_scales(path, data, grid)
    _check_claims(path, data, grid, metric_names)
    _check_output(path, data, grid, model, metric_names)
    _check_grid_design(path, data, grid)
    if "judged_claims" not in data:     # the judged experiment's were checked where they are stated
        _check_published_judged(path, data)
    _check_judged_output(path, data, grid)


def _check_policies_and_metrics(path: Path, data: dict, model) -> set[str]:
    """Every policy registered for the model, the baseline among them, every metric (and each part
    of a ratio) the model's; returns the spec's metric names."""
    known = policy_names(data["model"])
    for i, name in enumerate(data["policies"]):
        if name not in known:
            raise SpecError(f"{path}: key 'policies.{i}': unknown policy '{name}' (known: {', '.join(known)}).")
    if data["baseline"] not in data["policies"]:
        raise SpecError(f"{path}: key 'baseline': '{data['baseline']}' is not one of the spec's policies.")
    for m in data["metrics"]:
        for part in m.get("ratio") or [m["name"]]:
            if part not in model.METRICS:
                raise SpecError(f"{path}: key 'metrics': '{part}' is not a metric of model '{data['model']}'.")
    return {m["name"] for m in data["metrics"]}


def _check_scales(path: Path, data: dict, grid: dict) -> None:
    """A precision round allows more replications than its scale's first round; a scale's grid is
    part of the grid."""
    for scale in SCALES:
        precision = data["scales"][scale].get("precision") or {}
        if precision and precision["max_replications"] <= data["scales"][scale]["replications"]:
            raise SpecError(f"{path}: key 'scales.{scale}.precision.max_replications': "
                            f"{precision['max_replications']} must exceed the scale's replications "
                            f"({data['scales'][scale]['replications']}).")
        for name, values in (data["scales"][scale].get("grid") or {}).items():
            bad = [v for v in values if v not in grid.get(name, [])]
            if bad:
                raise SpecError(f"{path}: key 'scales.{scale}.grid.{name}': {bad[0]!r} is not in the grid.")


#: the claim kinds that may average over their cells (``across``)
ACROSS_KINDS = ("value", "less", "greater", "ratio-above", "ratio-below", "spread")


def _check_claims(path: Path, data: dict, grid: dict, metric_names: set[str]) -> None:
    """The published values' cells, and each claim's statistic, published table, ``than``,
    ``across`` and ``than_cell``."""
    for i, entry in enumerate(data.get("published") or []):
        _check_where(path, "published", i, entry, grid)
    for i, claim in enumerate(data.get("claims") or []):
        _check_statistic(path, "claims", i, claim, data, grid, metric_names)
        _check_published_table(path, i, claim, data)
        if claim["kind"] == "value" and "than" in claim:
            raise SpecError(f"{path}: key 'claims.{i}.than': a 'value' claim judges one policy's own value, "
                            "it has no 'than'.")
        if claim.get("across") and claim["kind"] not in ACROSS_KINDS:
            raise SpecError(f"{path}: key 'claims.{i}.across': only value, difference, ratio and spread claims "
                            f"average over cells, not '{claim['kind']}'.")
        _check_than_cell(path, i, claim, data, grid)


def _check_output(path: Path, data: dict, grid: dict, model, metric_names: set[str]) -> None:
    """The output's statistics, map or fit, marked metric and series."""
    for i, stat in enumerate(data["output"].get("statistics") or []):
        _check_statistic(path, "output.statistics", i, stat, data, grid, metric_names)
    if data["output"]["kind"] == "map":
        _check_map(path, data["output"], grid)
    if data["output"]["kind"] == "fit":
        _check_fit(path, data, grid, metric_names)
    mark = data["output"].get("mark")
    if mark is not None and mark["metric"] not in model.METRICS:
        raise SpecError(f"{path}: key 'output.mark.metric': '{mark['metric']}' is not a metric of model "
                        f"'{data['model']}'.")
    series = data["output"].get("series")
    if series is not None and (series not in grid or series == data["output"].get("x")):
        raise SpecError(f"{path}: key 'output.series': '{series}' is not a grid parameter other than output.x.")


def _check_grid_design(path: Path, data: dict, grid: dict) -> None:
    """Parameters varied together have as many values; a one-at-a-time grid varies one parameter at
    a time and lists each value once."""
    together = data.get("grid_together") or []
    for name in together:
        if name not in grid or len(grid[name]) != len(grid[together[0]]):
            raise SpecError(f"{path}: key 'grid_together': '{name}' is not a grid parameter with as many values as "
                            f"'{together[0]}'.")
    if together and data.get("grid_design") == "one-at-a-time":
        raise SpecError(f"{path}: key 'grid_together': a one-at-a-time grid varies one parameter at a time.")
    if data.get("grid_design") == "one-at-a-time":
        for name, values in grid.items():
            if len(set(map(repr, values))) != len(values):
                raise SpecError(f"{path}: key 'grid.{name}': a one-at-a-time grid lists each value once.")


def _check_judged_output(path, data: dict, grid: dict) -> None:
    """output.kind 'judged' draws the judged claims against output.x, a grid parameter of the
    judged experiment (none when that experiment has no grid: the readings side by side); it
    belongs to, and only to, an experiment that judges another."""
    judged = data["output"]["kind"] == "judged"
    if judged != ("judged_claims" in data):
        raise SpecError(
            f"{path}: key 'output.kind': 'judged' is the output of, and only of, an experiment with 'judges'."
        )
    if not judged:
        return
    own = [name for name in grid if name not in data["readings"]]
    x = data["output"].get("x")
    if (x is None and own) or (x is not None and x not in own):
        wanted = f"one of {', '.join(own)}" if own else "none (the judged experiment has no grid)"
        raise SpecError(f"{path}: key 'output.x': {wanted}, not {x!r}.")
    measured = [m["name"] for m in data["metrics"]]
    for name in data["output"].get("diagnostics", ()):
        if name not in measured:
            raise SpecError(
                f"{path}: key 'output.diagnostics': '{name}' is not one of the metrics ({', '.join(measured)})."
            )


def _check_than_cell(path, i: int, claim: dict, data: dict, grid: dict) -> None:
    """``than_cell`` substitutes grid values the grid holds, in a spec whose cells share seeds,
    for a claim that compares two sides with a published number rather than a table."""
    other = claim.get("than_cell")
    if other is None:
        return
    key = f"{path}: key 'claims.{i}.than_cell'"
    if claim["kind"] == "value":
        raise SpecError(f"{key}: a 'value' claim judges one policy's own value, it has no other side.")
    if data.get("seeds") != "shared":
        raise SpecError(f"{key}: comparing two cells needs 'seeds: shared' (their replications must pair).")
    if claim.get("published_effect") == "table":
        raise SpecError(f"{key}: a claim across cells states its published effect as a number, not 'table'.")
    for name, value in other.items():
        if name not in grid:
            raise SpecError(f"{path}: key 'claims.{i}.than_cell.{name}': '{name}' is not a grid parameter.")
        if value not in grid[name]:
            raise SpecError(f"{path}: key 'claims.{i}.than_cell.{name}': {value!r} is not in the grid.")


def _check_map(path, output: dict, grid: dict) -> None:
    """A map crosses two grid parameters (output.x, output.y); every other one has a single value."""
    for key in ("x", "y"):
        if output.get(key) not in grid:
            raise SpecError(f"{path}: key 'output.{key}': a map needs a grid parameter here, not {output.get(key)!r}.")
    for name, values in grid.items():
        if name not in (output["x"], output["y"]) and len(values) > 1:
            raise SpecError(f"{path}: key 'grid.{name}': a map crosses output.x and output.y only; "
                            "give every other grid parameter one value.")


def _check_fit(path, data: dict, grid: dict, metric_names) -> None:
    """A fit: x and by are the only grid parameters, x positive numbers (interpolated on the log
    scale), fit_on one of by's values, the level's policy and metric the spec's, seeds shared
    (the delta method pairs the cells by replication) and a second policy for the gain."""
    out = data["output"]
    for key in ("x", "by"):
        if out.get(key) not in grid:
            raise SpecError(f"{path}: key 'output.{key}': a fit needs a grid parameter here, not {out.get(key)!r}.")
    if set(grid) != {out["x"], out["by"]} or out["x"] == out["by"]:
        raise SpecError(f"{path}: key 'grid': a fit sweeps output.x and output.by only; put the rest under 'fixed'.")
    xs = grid[out["x"]]
    if len(xs) < 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in xs):
        raise SpecError(f"{path}: key 'grid.{out['x']}': a fit needs two or more positive numbers.")
    if out.get("fit_on") not in grid[out["by"]]:
        raise SpecError(f"{path}: key 'output.fit_on': {out.get('fit_on')!r} is not one of grid.{out['by']}.")
    if out.get("policy") not in data["policies"] or out.get("metric") not in metric_names:
        raise SpecError(f"{path}: key 'output.policy': a fit needs one of the spec's policies and metrics "
                        "(output.policy, output.metric).")
    if data.get("seeds") != "shared" or len(data["policies"]) < 2:
        raise SpecError(f"{path}: key 'seeds': a fit pairs its cells by replication: give 'seeds: shared' "
                        "and a second policy for the gain.")


def _check_statistic(path, section: str, i: int, claim: dict, data: dict, grid: dict, metric_names) -> None:
    """What a claim and a readings statistic share: cells, policies, metric, threshold, effect."""
    _check_where(path, section, i, claim, grid)
    for key in ("policy", "than"):
        if key in claim and claim[key] not in data["policies"]:
            raise SpecError(f"{path}: key '{section}.{i}.{key}': '{claim[key]}' is not one of the spec's policies.")
    if claim["metric"] not in metric_names:
        raise SpecError(f"{path}: key '{section}.{i}.metric': '{claim['metric']}' is not in 'metrics'.")
    if claim["kind"].startswith("ratio") and "threshold" not in claim:
        raise SpecError(f"{path}: key '{section}.{i}.threshold' is missing (ratio claims need one).")
    _check_published_effect(path, i, claim, section)


def _merge_preset(path: Path, data: dict) -> dict:
    """Fold ``config/presets/<preset>.yaml`` under the spec's own fixed values and assumptions."""
    if "preset" not in data:
        return data
    preset_path = path.parent.parent / "presets" / f"{data['preset']}.yaml"
    if not preset_path.exists():
        raise SpecError(f"{path}: key 'preset': no preset file {preset_path}.")
    preset = _read_yaml(preset_path)
    if not isinstance(preset, dict) or set(preset) - {"description", "fixed", "assumptions"}:
        raise SpecError(f"{preset_path}: must hold only 'description', 'fixed' and 'assumptions'.")
    merged = dict(data)
    own = set(data.get("fixed") or {}) | set(data.get("assumptions") or {})
    inherited = {}
    for key in ("fixed", "assumptions"):   # the spec's own value wins, fixed or assumed
        inherited[key] = {k: v for k, v in (preset.get(key) or {}).items() if k not in own}
        merged[key] = {**inherited[key], **(data.get(key) or {})}
    _check_schema(preset_path, {**_skeleton(), "fixed": merged["fixed"], "assumptions": merged["assumptions"]})
    _check_params(preset_path, {"model": data["model"], **inherited}, _model(path, data))
    return merged


def _skeleton() -> dict:
    """The smallest valid spec, to schema-check a preset's sections on their own."""
    return {"id": "x-y", "paper": "amir", "title": "t", "source": "s", "model": "m", "policies": ["p"],
            "baseline": "p", "metrics": [{"name": "m"}], "confidence": 0.9, "output": {"kind": "table"}}


def _link_source(path: Path, data: dict) -> dict:
    """Take scales and grid from the experiment named in ``data_from``."""
    if "data_from" not in data:
        if "scales" not in data:
            raise SpecError(f"{path}: key 'scales' is missing.")
        return data
    name = data["data_from"]
    if name == data["id"]:
        raise SpecError(f"{path}: key 'data_from': '{name}' names this experiment itself.")
    source_path = path.parent / f"{name}.yaml"
    if not source_path.is_file():
        raise SpecError(f"{path}: key 'data_from': no experiment '{name}' ({source_path} does not exist).")
    raw = _read_yaml(source_path)
    if isinstance(raw, dict) and "data_from" in raw:  # checked before loading it: no chain, hence no cycle
        raise SpecError(f"{path}: key 'data_from': '{name}' itself reads another experiment's data.")
    source = load_spec(source_path)
    if source["model"] != data["model"]:
        raise SpecError(
            f"{path}: key 'data_from': '{source.id}' uses model '{source['model']}', not '{data['model']}'."
        )
    missing = [p for p in data["policies"] if p not in source.policies]
    if missing:
        raise SpecError(f"{path}: key 'policies': '{missing[0]}' is not simulated by '{source.id}'.")
    return {**data, "scales": source.data["scales"], "grid": source.data.get("grid"),
            "fixed": source.data.get("fixed"), "assumptions": source.data.get("assumptions"),
            "calibration": source.data.get("calibration")}


JUDGED_KEYS = (
    "preset",
    "calibration",
    "fixed",
    "assumptions",
    "grid",
    "published",
    "claims",
)  # taken from the judged experiment


def _link_judged(path: Path, data: dict) -> dict:
    """``judges``: the judged experiment's model values, published numbers and claims (kept as
    ``judged_claims``, not this experiment's own), its grid crossed with the readings' values."""
    if "judges" not in data:
        if "readings" in data:
            raise SpecError(
                f"{path}: key 'readings': readings are judged only with 'judges' (the experiment whose claims they "
                "judge)."
            )
        return data
    name = data["judges"]
    other = path.parent / f"{name}.yaml"
    if name == data["id"] or not other.is_file():
        raise SpecError(f"{path}: key 'judges': no other experiment '{name}' ({other} does not exist or is this one).")
    if "readings" not in data:
        raise SpecError(f"{path}: key 'readings' is missing: 'judges' needs the readings to judge under.")
    if isinstance(data["readings"], str):
        data = {**data, "readings_from": data["readings"], "readings": _readings_file(path, data["readings"])}
    raw = _read_yaml(other)
    if isinstance(raw, dict) and ("judges" in raw or raw.get("data_from") == data["id"]):   # no chain, hence no cycle
        raise SpecError(f"{path}: key 'judges': '{name}' itself judges another experiment or reads this one's data.")
    judged = load_spec(other)
    if judged["model"] != data["model"] or judged.baseline != data["baseline"]:
        raise SpecError(f"{path}: key 'judges': '{name}' must have this experiment's model and baseline.")
    if not judged.data.get("claims"):
        raise SpecError(f"{path}: key 'judges': '{name}' states no claims to judge.")
    _check_judged_policies(path, data, judged)
    _check_readings(path, data, judged)
    grid = {**judged.grid, **{param: [e["value"] for e in entries] for param, entries in data["readings"].items()}}
    if "data_from" in data and list((data.get("grid") or {}).items()) != list(grid.items()):
        raise SpecError(f"{path}: key 'data_from': '{data['data_from']}' must have run this experiment's cells "
                        f"(the judged grid crossed with the readings, in order), not others.")
    return {**data, "fixed": judged.data.get("fixed"), "assumptions": judged.data.get("assumptions"), "grid": grid,
            "calibration": judged.data.get("calibration"), "published": judged.data.get("published"),
            "judged_claims": [c for c in judged.data["claims"] if not c.get("point")]}


def _token(value) -> str:
    return str(value).replace("_", "-").replace(".", "p").lower()


def _point_claims(data: dict) -> dict:
    """``point_claims``: one ``value`` claim per published point of its metric (or of each of its
    metrics, listed: the metric then named in the claim's id and text), first in the
    claims (marked ``point``; a judging experiment does not take them). With a calibration, the
    control's points are those its fit chose the values on: ``calibrated``."""
    if "point_claims" not in data:
        return data
    metrics, control = data["point_claims"]["metric"], data.get("baseline")
    several = isinstance(metrics, list)     # one metric: ids without it (point-POLICY-KEY-VALUE...)
    metrics = metrics if several else [metrics]
    points = []
    for e in data.get("published") or []:
        if e.get("metric") not in metrics or "than" in e or "untested" in e:
            continue
        where = e.get("where") or {}
        unit = f" {e['unit']}" if e.get("unit") not in (None, "1") else ""
        at = ", ".join(f"{k} = {v}" for k, v in where.items())
        what = f"{data.get('labels', {}).get(e['policy'], e['policy'])}" + (
            f", {_label(data, e['metric'])}," if several else ""
        )
        claim = {"id": "-".join(["point", _token(e["policy"]), *([_token(e["metric"])] if several else []),
                                 *(f"{_token(k)}-{_token(v)}" for k, v in where.items())]),
                 "text": f"{e.get('source', data['source'])}: {what} {e['value']:g}{unit} at {at or 'every cell'}.",
                 "kind": "value", "metric": e["metric"], "policy": e["policy"], "published_effect": "table",
                 "where": {k: [v] for k, v in where.items()}, "point": True}
        if "if_not_reproduced" in data["point_claims"]:
            claim["if_not_reproduced"] = data["point_claims"]["if_not_reproduced"]
        if "calibration" in data and e["policy"] == control:
            claim["calibrated"] = (f"The open quantities of calibration {data['calibration']} were fitted on this "
                                   "number among the control's points (config/calibration).")
            claim.pop("calibrated_input", None)
        points.append(claim)
    return {**data, "claims": points + [c for c in data.get("claims") or [] if not c.get("point")]}


def _label(data: dict, metric: str) -> str:
    """The spec's label of ``metric`` (its name if it has none)."""
    return next(
        (m.get("label", metric) for m in data.get("metrics") or [] if isinstance(m, dict) and m.get("name") == metric),
        metric,
    )


def _calibrated_claims(data: dict) -> dict:
    """With a calibration, every claim not marked otherwise is judged on the calibrated control."""
    if "calibration" not in data or not data.get("claims"):
        return data
    note = (f"The control's open quantities were fitted on its own published points by calibration "
            f"{data['calibration']} (config/calibration); this claim is a prediction on that control.")
    claims = [c if c.get("calibrated") or c.get("calibrated_input") else {**c, "calibrated_input": note}
              for c in data["claims"]]
    return {**data, "claims": claims}


def readings_path(spec_path: Path, name: str) -> Path:
    """The file of a named set of readings: config/readings/<name>.yaml beside config/experiments."""
    return spec_path.parent.parent / "readings" / f"{name}.yaml"


def _readings_file(path: Path, name: str) -> dict:
    """The readings of ``config/readings/<name>.yaml``, checked against the spec schema's mapping."""
    file = readings_path(path, name)
    if not file.is_file():
        raise SpecError(f"{path}: key 'readings': no readings file '{name}' ({file} does not exist).")
    data = _read_yaml(file)
    schema = _validator().schema["properties"]["readings"]["oneOf"][1]
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        raise SpecError(f"{file}: {schema_problem(error)}.")
    return data


def _check_judged_policies(path: Path, data: dict, judged: Spec) -> None:
    """The policies: some of the judged experiment's, every one its claims compare among them
    (a reading need not rerun a policy no claim is about)."""
    extra = [p for p in data["policies"] if p not in judged.policies]
    if extra:
        raise SpecError(f"{path}: key 'policies': '{extra[0]}' is not a policy of '{judged.id}'.")
    for claim in judged.data["claims"]:
        for p in (claim.get("policy"), claim.get("than")):
            if p is not None and p not in data["policies"]:
                raise SpecError(
                    f"{path}: key 'policies': '{p}' is missing (claim '{claim['id']}' of '{judged.id}' compares it)."
                )


def _check_readings(path: Path, data: dict, judged: Spec) -> None:
    """The judged claims' metrics are measured; each reading is a parameter the judged experiment
    holds fixed, its values in the parameter's domain, listed once, the judged experiment's first."""
    metrics = {m["name"] for m in data["metrics"]}
    for claim in judged.data["claims"]:
        if claim["metric"] not in metrics and not claim.get("point"):     # a judging experiment takes no point
            raise SpecError(f"{path}: key 'metrics': '{claim['metric']}' is missing (claim '{claim['id']}' of "
                            f"'{judged.id}' judges it).")
    own = {**judged.params(calibrated=False), CONTROL: judged.data.get(CONTROL)}   # the control as its spec states it
    model = _model(path, data)
    fitted = _fitted(judged)
    for param, entries in data["readings"].items():
        key = f"{path}: key 'readings.{param}'"
        if param == CONTROL:
            _check_control_reading(key, entries, own[CONTROL], judged.id)
            continue
        if param not in model.PARAMETERS or param in judged.grid:
            raise SpecError(f"{key}: not a parameter of model '{data['model']}' that '{judged.id}' holds fixed.")
        if param in fitted:
            raise SpecError(f"{key}: {param} is fitted by calibration '{own[CONTROL]}' of '{judged.id}': read the "
                            f"control with the reading 'calibration' instead.")
        for i, entry in enumerate(entries):
            model.PARAMETERS[param].check(entry["value"], f"{path}: readings.{param}[{i}].value")
        values = [e["value"] for e in entries]
        if len(set(map(repr, values))) != len(values) or values[0] != own[param]:
            raise SpecError(f"{key}: list each value once, {judged.id}'s own ({own[param]!r}) first.")


def _fitted(judged: "Spec") -> set:
    """The parameters the judged experiment's calibration sets (its open and tied quantities)."""
    from simcore.experiments.calibrated import fitted_parameters

    return set() if judged.calibration_path is None else fitted_parameters(judged.calibration_path)


def _check_not_fitted(path: Path, data: dict, spec: "Spec") -> None:
    """A calibrated spec's own keys (fixed, assumptions, grid; not its preset's, which the fit
    replaces by design) set no quantity its calibration fits: the fitted value would silently
    replace the spec's."""
    fitted = _fitted(spec)
    for key in ("fixed", "assumptions", "grid"):
        for name in sorted(fitted & set(data.get(key) or {})):
            raise SpecError(f"{path}: key '{key}.{name}': {name} is fitted by calibration '{data['calibration']}'; "
                            f"drop it here, or run the spec without the calibration.")


def _check_control_reading(key: str, entries: list, calibration: str | None, judged: str) -> None:
    """The control's reading: the judged experiment's calibration (first), then 'none'."""
    values = [e["value"] for e in entries]
    if calibration is None:
        raise SpecError(f"{key}: '{judged}' has no calibration to read its control without.")
    if values != [calibration, UNCALIBRATED]:
        raise SpecError(f"{key}: the values are [{calibration}, {UNCALIBRATED}]: {judged}'s calibrated control "
                        f"first, then the control as its spec states it.")


def load_spec(path: str | Path) -> Spec:
    """Read, schema-check and cross-check one spec."""
    path = Path(path)
    data = _read_yaml(path)
    _check_schema(path, data)
    for link, keys in (("data_from", ("scales", "grid", "fixed", "assumptions", "preset", "calibration")),
                       ("judges", JUDGED_KEYS)):
        if link in data:
            for key in keys:
                if key in data:
                    raise SpecError(f"{path}: key '{key}' must not be given: it comes from '{link}'.")
    _check_params(path, data, _model(path, data))
    own = data
    data = _link_judged(path, _link_source(path, _merge_preset(path, data)))
    data = _calibrated_claims(_point_claims({k: v for k, v in data.items() if v is not None}))
    _check_semantics(path, data)
    spec = Spec(path, data)
    if "calibration" in data and not spec.calibration_path.exists():
        raise SpecError(f"{path}: key 'calibration': no calibration file {spec.calibration_path}.")
    if "calibration" in own:
        _check_not_fitted(path, own, spec)
    for cell in spec.all_cells():
        spec.params(cell.values, calibrated=False)   # the recorded fit is read when cells run
    _check_monitor(spec)
    return spec


def _check_monitor(spec: "Spec") -> None:
    """output.monitor names a cell of the grid, the spec's policies, and a model with a queue monitor."""
    monitor = spec["output"].get("monitor")
    if not monitor:
        return
    if not hasattr(spec.model, "monitor_replication"):
        raise SpecError(f"{spec.path}: key 'output.monitor': model '{spec['model']}' has no queue monitor.")
    n = len(spec.all_cells())
    if monitor.get("cell", 0) >= n:
        raise SpecError(f"{spec.path}: key 'output.monitor.cell': {monitor['cell']} is not a cell (the grid has {n}).")
    for policy in monitor.get("policies") or []:
        if policy not in spec.policies:
            raise SpecError(
                f"{spec.path}: key 'output.monitor.policies': '{policy}' is not one of the spec's policies."
            )


def find_spec(name: str, specs_dir: str | Path = "config/experiments") -> Path:
    """The spec file of experiment ``name`` (or ``name`` itself if it is a path)."""
    return find_named(name, specs_dir, "experiment")


def find_named(name: str, folder: str | Path, what: str, error: type[InputError] = SpecError) -> Path:
    """``folder/name.yaml`` (or ``name`` itself if it is a YAML path); else one sentence naming
    the ``what`` files the folder holds."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") and candidate.exists():
        return candidate
    path = Path(folder) / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in Path(folder).glob("*.yaml"))
        raise error(f"{path}: no such {what} '{name}' (known: {', '.join(known) or 'none'}).")
    return path


UNTESTED_KEYS = ("source", "result", "why")


def load_untested(path: str | Path = "config/untested.yaml") -> dict[str, list[dict]]:
    """The published results no experiment tests, per paper: ``{paper: [{source, result, why}]}``
    (an absent file: none)."""
    from simcore.experiments.papers import PAPER_TITLES

    path = Path(path)
    if not path.exists():
        return {}
    data = _read_yaml(path) or {}
    if not isinstance(data, dict):
        raise SpecError(f"{path}: must map paper ids to lists of untested results.")
    for paper, items in data.items():
        if paper not in PAPER_TITLES:
            raise SpecError(f"{path}: key '{paper}' is not a paper id (known: {', '.join(PAPER_TITLES)}).")
        if not isinstance(items, list):
            raise SpecError(f"{path}: key '{paper}' must be a list of results.")
        for i, item in enumerate(items):
            if not isinstance(item, dict) or set(item) != set(UNTESTED_KEYS):
                raise SpecError(f"{path}: key '{paper}.{i}' must have exactly the keys {', '.join(UNTESTED_KEYS)}.")
            for key in UNTESTED_KEYS:
                if not isinstance(item[key], str) or not item[key].strip():
                    raise SpecError(f"{path}: key '{paper}.{i}.{key}' must be a non-empty text.")
    return data


def load_config(path: str | Path = "config/config.yaml") -> dict:
    """The global configuration (root seed, default batch size)."""
    path = Path(path)
    data = _read_yaml(path)
    if not isinstance(data, dict) or not NONNEGATIVE_INTEGER.admits(data.get("seed")):
        raise SpecError(f"{path}: key 'seed' must be a non-negative integer.")
    return data


def _check_where(path, section: str, i: int, entry: dict, grid: dict) -> None:
    """A ``where`` names grid parameters; a claim's, values the grid holds (a published value may
    stand at a point the grid leaves out)."""
    for key, wanted in (entry.get("where") or {}).items():
        if key not in grid:
            raise SpecError(f"{path}: key '{section}.{i}.where.{key}': '{key}' is not a grid parameter.")
        for value in options(wanted) if section == "claims" else []:
            if value not in grid[key]:
                raise SpecError(f"{path}: key '{section}.{i}.where.{key}': {value!r} is not in the grid.")


def _overlap(a: dict | None, b: dict | None) -> bool:
    """Whether two ``where`` selections share a cell (a key one leaves open matches all)."""
    a, b = a or {}, b or {}
    return all(set(options(a[k])) & set(options(b[k])) for k in a.keys() & b.keys())


def judging_claims(entry: dict, data: dict) -> list[str]:
    """Ids of the claims that judge a published value: claims that state a magnitude on its
    metric, about its policy (and its 'than', for a published ratio), in cells it covers."""
    ids = []
    for claim in data.get("claims") or []:
        if claim["metric"] != entry["metric"] or "published_effect" not in claim:
            continue
        involved = (
            {claim["policy"]} if claim["kind"] == "value" else {claim["policy"], claim.get("than", data["baseline"])}
        )
        if entry.get("policy") in involved and entry.get("than", entry.get("policy")) in involved \
                and _overlap(claim.get("where"), entry.get("where")):
            ids.append(claim["id"])
    return ids


def _check_published_judged(path, data: dict) -> None:
    """Every published value is judged by a claim, or says why not ('untested'), not both."""
    for i, entry in enumerate(data.get("published") or []):
        judged = judging_claims(entry, data)
        if judged and entry.get("untested"):
            raise SpecError(f"{path}: key 'published.{i}.untested': the value is judged by claim '{judged[0]}'.")
        if not judged and not entry.get("untested"):
            raise SpecError(f"{path}: key 'published.{i}': no claim judges this value ({entry['metric']} of "
                            f"{entry.get('policy', 'the baseline')}); add one, or say why not under 'untested'.")


def _check_published_table(path, i: int, claim: dict, data: dict) -> None:
    """``published_effect: table`` needs a published value in every grid cell the claim names."""
    if claim.get("published_effect") != "table":
        return
    from simcore.stats.kinds import published_in_cell

    grid = data.get("grid") or {}
    names = list(grid)
    for combo in itertools.product(*(grid[n] for n in names)):
        values = dict(zip(names, combo))
        if not where_matches(claim.get("where"), values):
            continue
        full = {**claim, "than": claim.get("than", data["baseline"])}
        effect = published_in_cell(data.get("published") or [], full, values)
        key = f"{path}: key 'claims.{i}.published_effect'"
        if effect is None:
            raise SpecError(f"{key}: 'table', but 'published' gives no {claim['metric']} for this claim at "
                            f"{values or 'the only cell'}.")
        _check_side(key, claim, effect, f" (from 'published' at {values or 'the only cell'})")


def _check_published_effect(path, i: int, claim: dict, section: str = "claims") -> None:
    """A published effect is a value, a ratio or a difference on the side the claim states."""
    if "published_effect" not in claim:
        return
    from simcore.stats.kinds import STATISTIC

    kind, value = claim["kind"], claim["published_effect"]
    statistic = STATISTIC[kind]
    key = f"{path}: key '{section}.{i}.published_effect'"
    if statistic not in ("ratio", "difference", "value", "spread"):
        raise SpecError(
            f"{key}: only value, ratio, difference and spread claims state a published effect, not '{kind}'."
        )
    if value != "table":
        _check_side(key, claim, value)


def _check_side(key: str, claim: dict, value: float, where: str = "") -> None:
    """A published effect lies strictly on the side the claim states, beyond its threshold."""
    from simcore.stats.kinds import NULL, SIDE, STATISTIC

    kind = claim["kind"]
    statistic = STATISTIC[kind]
    if not math.isfinite(value) or (statistic == "ratio" and value <= 0):
        raise SpecError(f"{key}: {value}{where} is not a {'positive ' if statistic == 'ratio' else ''}finite number.")
    zero = float(claim.get("threshold", NULL[statistic]))
    if SIDE[kind] * (value - zero) <= 0:
        raise SpecError(f"{key}: {value}{where} is not on the side '{kind}' claims (beyond {zero:g}).")
