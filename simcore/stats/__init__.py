"""Replication statistics: Student-t intervals, paired differences, ratios."""

from simcore.stats.intervals import (
    Estimate,
    Interval,
    mean_estimate,
    mean_interval,
    paired_difference,
    ratio_estimate,
    ratio_estimator,
    ratio_of_means,
    required_replications,
)

__all__ = [
    "Estimate",
    "Interval",
    "mean_estimate",
    "mean_interval",
    "paired_difference",
    "ratio_estimate",
    "ratio_estimator",
    "ratio_of_means",
    "required_replications",
]
