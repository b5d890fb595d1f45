"""Models (one folder each) and the policy registry.

A model module exposes ``PARAMETERS`` (name -> :class:`Parameter`), ``METRICS`` (name ->
:class:`Metric`) and ``run_replication(params, policies, streams) -> {policy: {metric: value}}``; every policy
of one call sees the same workload (common random numbers). It may add ``CONSTRAINTS``
(:class:`Constraint`), relations between parameters that every run must satisfy.

Parameters, constraints and metrics are declared with :mod:`simcore.vocabulary.parameters`; every
parameter's domain (:mod:`simcore.vocabulary.domains`) is checked before anything runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# the model interface, declared in the vocabulary layer (stats and topology read it too)
from simcore.vocabulary.parameters import RANGES, Constraint, Metric, Parameter, select, with_defaults

__all__ = ["MODELS", "RANGES", "Constraint", "Metric", "Parameter", "get_model", "select", "with_defaults"]

MODELS = {
    "cluster": "simcore.models.cluster",
    "cosched": "simcore.models.cosched",
    "numa": "simcore.models.numa",
    "pools": "simcore.models.pools",
    "pvm": "simcore.models.pvm",
}


def get_model(name: str) -> ModuleType:
    """Import the model module registered as ``name`` (and the policies other packages register)."""
    if name not in MODELS:
        raise KeyError(name)
    module = importlib.import_module(MODELS[name])
    from simcore.models.registry import policy_names

    policy_names(name)  # loads the entry points: their hyperparameters join the model's parameters
    return module
