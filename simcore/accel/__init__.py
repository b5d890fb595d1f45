"""Compiled pieces of a model, staged before they replace its pure-Python path.

A file here is used by no experiment: the workflow runs the models as their own packages define
them, and a model's results are fingerprinted by its own package (simcore/experiments/
fingerprint.py). A piece is developed and tested equal to the model's reference here, across
sessions if need be, and then moved into the model's package with one full-scale rerun of that
model's experiments (the committed reference must come from the code that runs).

- :mod:`numa_timing`: the NUMA balancer's timing (periodic attempts, sleeping domains, timers)
  over flat arrays, with the loop of a periodic attempt compiled (:mod:`numa_timing_kernels`).
"""
