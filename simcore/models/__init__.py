"""Models (one folder each) and the policy registry.

A model module exposes ``PARAMETERS`` (name -> :class:`Parameter`), ``METRICS`` (name ->
:class:`Metric`) and ``run_replication(params, policies, streams) -> {policy: {metric: value}}``; every policy
of one call sees the same workload (common random numbers).
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

MODELS = {
    "cluster": "simcore.models.cluster",
    "numa": "simcore.models.numa",
}


@dataclass(frozen=True)
class Parameter:
    """A model parameter: its default and one line saying what it is."""

    default: Any
    doc: str


_IN_RANGE = {"real": lambda v: True, "nonnegative": lambda v: v >= 0, "positive": lambda v: v > 0,
             "share": lambda v: 0 <= v <= 1}
RANGES = tuple(_IN_RANGE)  # the values a metric can take


@dataclass(frozen=True)
class Metric:
    """A model metric: one line saying what it is, and the values it can take.

    ``range`` is 'positive' (> 0), 'nonnegative' (>= 0), 'share' (in [0, 1]) or 'real'; it picks
    the scale of the metric's confidence intervals (simcore.stats.intervals). ``part_of`` names
    a metric this one never exceeds in a run (failed attempts of all attempts), so that a spec's
    ``ratio: [this, part_of]`` is a share.
    """

    doc: str
    range: str
    part_of: str | None = None

    def __post_init__(self):
        if self.range not in RANGES:
            raise ValueError(f"metric range {self.range!r} is not one of {', '.join(RANGES)}")

    def admits(self, value: float) -> bool:
        """Whether ``value`` lies in the range."""
        return bool(_IN_RANGE[self.range](value))

    def describe(self) -> str:
        """'share', or 'nonnegative, part of lb_attempts'."""
        return self.range + (f", part of {self.part_of}" if self.part_of else "")


def with_defaults(model: str, parameters: dict[str, Parameter], params: dict) -> dict:
    """Every parameter's default, overridden by ``params``; an unknown name is bad input."""
    unknown = sorted(set(params) - set(parameters))
    if unknown:
        from simcore.errors import InputError

        raise InputError(f"unknown parameter(s) of model '{model}': {', '.join(unknown)}")
    return {**{k: copy.deepcopy(p.default) for k, p in parameters.items()}, **params}


def get_model(name: str) -> ModuleType:
    """Import the model module registered as ``name``."""
    if name not in MODELS:
        raise KeyError(name)
    return importlib.import_module(MODELS[name])
