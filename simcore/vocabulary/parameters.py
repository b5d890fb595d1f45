"""Parameters, constraints and metrics: how a model declares what it takes and what it reports.

A model's ``PARAMETERS`` map names to :class:`Parameter` (a default, one line of meaning, a
domain from :mod:`simcore.vocabulary.domains`), its ``CONSTRAINTS`` relate parameters, and its
``METRICS`` map names to :class:`Metric` (one line and the range of values, which picks the scale
of their intervals). :func:`with_defaults` and :func:`select` refuse a value outside its domain
with an :class:`~simcore.errors.InputError` before anything runs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

from simcore.errors import InputError
from simcore.vocabulary.domains import Domain, show


@dataclass(frozen=True)
class Parameter:
    """A model parameter: its default, one line saying what it is, and the values it may take."""

    default: Any
    doc: str
    domain: Domain

    def check(self, value: Any, where: str) -> None:
        """Raise an InputError '<where> = <value> is not ...' unless ``value`` lies in the domain."""
        problem = self.domain.problem(value)
        if problem:
            raise InputError(f"{where} = {show(value)} {problem}.")


@dataclass(frozen=True)
class Constraint:
    """A relation between parameters, e.g. ``Constraint(("nice_min", "nice_max"), "nice_min <= nice_max",
    lambda p: p["nice_min"] <= p["nice_max"])``; ``holds`` sees every parameter's value."""

    names: tuple[str, ...]
    text: str
    holds: Callable[[dict], bool]

    def check(self, params: dict, where: str) -> None:
        if not self.holds(params):
            values = ", ".join(f"{n} = {show(params[n])}" for n in self.names)
            raise InputError(f"{where}: {self.text} does not hold ({values}).")


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


def with_defaults(model: str, parameters: dict[str, Parameter], params: dict,
                  constraints: tuple[Constraint, ...] = ()) -> dict:
    """Every parameter's default, overridden by ``params``; an unknown name, a value outside its
    domain or a broken constraint is bad input."""
    unknown = sorted(set(params) - set(parameters), key=str)
    if unknown:
        raise InputError(f"unknown parameter(s) of model '{model}': {', '.join(map(str, unknown))}")
    for name, value in params.items():
        parameters[name].check(value, f"model '{model}': parameter {name}")
    full = {**{k: copy.deepcopy(p.default) for k, p in parameters.items()}, **params}
    for constraint in constraints:
        constraint.check(full, f"model '{model}'")
    return full


def select(owner: str, declared: dict[str, Parameter], params: dict) -> dict:
    """The values of the ``declared`` parameters in ``params`` (their default where absent), each
    checked against its domain; other names in ``params`` are ignored (a policy's view)."""
    out = {}
    for name, p in declared.items():
        value = params.get(name, p.default)
        p.check(value, f"{owner}: parameter {name}")
        out[name] = value
    return out
