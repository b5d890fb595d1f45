"""Models (one folder each) and the policy registry.

A model module exposes ``PARAMETERS`` (name -> :class:`Parameter`), ``METRICS`` (name -> doc)
and ``run_replication(params, policies, streams) -> {policy: {metric: value}}``; every policy
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
