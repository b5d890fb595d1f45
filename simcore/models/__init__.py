"""Models (one folder each) and the policy registry.

A model module exposes ``PARAMETERS`` (name -> :class:`Parameter`), ``METRICS`` (name -> doc)
and ``run_replication(params, policies, streams) -> {policy: {metric: value}}``; every policy
of one call sees the same workload (common random numbers).
"""

from __future__ import annotations

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


def get_model(name: str) -> ModuleType:
    """Import the model module registered as ``name``."""
    if name not in MODELS:
        raise KeyError(name)
    return importlib.import_module(MODELS[name])
