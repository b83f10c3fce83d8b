"""Observations -> each model's figures: metric specs, stability, coverage, contradictions, the planner."""
