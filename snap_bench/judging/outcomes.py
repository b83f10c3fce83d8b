"""The outcomes of a comparison with the baseline, in a module of their own so that what only names them (the
terminal, the CI summary) imports no statistics at plugin import."""

# One rule across the checks: intersection-union. The gate passes only when *every* check shows
# non-inferiority, each with its own 95 % interval (one-sided 2.5 %): the claim "no worse on any metric"
# is the intersection of the per-metric claims, so wrongly passing a regressed model is bounded by the
# largest per-check error (2.5 %) without splitting alpha (Berger 1982). What the rule does not bound,
# failing an unchanged model, is held down by the margins, chosen from the noise of a replayed model and
# measured over all checks together by ``python -m bench.gate``.
NON_INFERIOR = "non-inferior"
INCONCLUSIVE = "inconclusive"
REGRESSION = "REGRESSION"
# A metric that cannot be compared (no margin, no pairing, no shared condition, undefined on one side) is
# an outcome of its own: it never passes, and the gate is then incomplete.
NOT_COMPARED = "not compared"
