"""The outcomes of a check (a comparison with the baseline, a threshold not computed), in a module of their own
so that what only names them (the terminal, the CI summary) imports no statistics at plugin import."""

from __future__ import annotations

from typing import Any

# One rule across the checks: intersection-union. The gate passes only when *every* check shows
# non-inferiority, each with its own 95 % interval (one-sided 2.5 %): the claim "no worse on any metric"
# is the intersection of the per-metric claims, so wrongly passing a regressed model is bounded by the
# largest per-check error (2.5 %) without splitting alpha (Berger 1982). What the rule does not bound,
# failing an unchanged model, is held down by the margins, chosen from the noise of a replayed model and
# measured over all checks together by ``python -m bench.gate``.
NON_INFERIOR = "non-inferior"
# The interval straddles the margin: non-inferiority neither shown nor refuted. Never a pass, and not a shown
# regression either: it has an exit status of its own and says how many runs would decide it
# (snap_bench.judging.deciding).
UNDECIDED = "undecided"
REGRESSION = "REGRESSION"
# A metric that cannot be compared (no margin, no pairing, no shared condition, undefined on one side) is
# an outcome of its own: it never passes, and the gate is then incomplete.
NOT_COMPARED = "not compared"
# The metric name of a comparison that stands for a whole instrument that the baseline holds and the run did
# not measure, or the reverse (snap_bench.judging.baseline_scope).
MEASURED = "measured"
# A model that did not cover its design: its checks are not judged (snap_bench.analysis.coverage.NOT_JUDGED).
COVERAGE_NOT_JUDGED = "not judged"


# A threshold check whose figure was not computed: undefined on these data, resting on too little of its
# design, or a model that did not cover its design. It is never a pass (the gate fails closed).
UNCOMPUTED = (COVERAGE_NOT_JUDGED, "undefined", "insufficient data")


def is_computed(check: Any, verdict: Any) -> bool:
    """Whether ``check`` was judged on a computed figure. An undefined correlation that the instrument's
    stand-in metric judged in its place (a constant answerer's retest r: its all-runs-agree rate) is
    accounted for by that stand-in's own check."""
    if check.status not in UNCOMPUTED:
        return True
    stand_in = getattr(verdict, "stand_in_metric", None)
    return check.status == "undefined" and stand_in is not None and any(c.metric == stand_in for c in verdict.checks)
