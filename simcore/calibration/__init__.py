"""Calibrate a paper's control: fit the open quantities of a model on the baseline's published
points within declared ranges, hold parts out, and record the fit (``simcore calibrate``)."""
