"""Figures -> verdicts against thresholds, baseline comparisons and the exit status."""
