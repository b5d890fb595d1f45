"""The vocabulary every layer shares: the domains of parameter values, how models declare
parameters, constraints and metrics, and how a spec's ``where`` selects grid cells. It imports
nothing of simcore but :mod:`simcore.errors`, so statistics, topologies, models and experiments
can all read it.
"""
