"""Figures, LaTeX tables and report inputs (macros, scorecard, provenance) from aggregated results.

``figures`` imports matplotlib; the other modules do not, so ``simcore table`` and
``simcore report-macros`` stay light.
"""
