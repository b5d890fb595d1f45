"""Experiment specs: load, validate, enumerate cells, run batches of replications."""

from simcore.experiments.spec import Cell, Spec, SpecError, find_spec, load_config, load_spec

__all__ = ["Cell", "Spec", "SpecError", "find_spec", "load_config", "load_spec"]
