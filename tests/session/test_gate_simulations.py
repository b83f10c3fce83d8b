"""The upgrade gate on whole shipped designs: the small shipped model gated against the large one, and a replay of
the large one answering half its profile at random.

Here and not in tests/unit: each judges every condition of a shipped model (2,268 of the profile alone) with the
fixed design's REML refits at every temperature, a minute or more of refits apiece (92 % of the time in
dependability's refits), which is a session's judgement of its gate rather than a unit's.
"""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.judging.comparison import NOT_COMPARED, REGRESSION, UNDECIDED
from snap_bench.judging.pairing_methods import FIXED_DESIGN, FIXED_DESIGN_RATE, NO_REPEATED_CELL, REFITS
from tests.unit.judging.test_comparison import gate, renamed, shipped


def test_the_per_temperature_figures_catch_a_model_answering_at_random_where_an_unchanged_one_passes() -> None:
    """The judged figures of the validity work are compared per temperature: a replay of the same model
    (answers redrawn from each cell's own runs) passes them, the same model answering half its profile
    questions at random loses dependability beyond the margin."""
    from bench.gate import pools, replay

    profile = [o for o in shipped("qwen2.5-coder-1.5b") if o.instrument == "profile"]
    pool = pools(profile)
    rng = np.random.default_rng(7)
    old = replay(profile, pool, "old", rng)
    # only the figure the test reads: dependability (the other metrics' comparisons are computed apart)
    only = {"profile": ("dependability",)}
    unchanged = gate(replay(profile, pool, "new", rng), old, only)
    degraded = gate(replay(profile, pool, "new", rng, degrade=0.5), old, only, at=(0.0,))
    for level in ("t0", "t0.5", "t1"):
        assert unchanged[f"profile.dependability[{level}]"].outcome == "non-inferior", level
        assert unchanged[f"profile.dependability[{level}]"].method == f"{FIXED_DESIGN} ({REFITS} refits a model)"
    # at temperature 0 the model is most dependable, so half its answers at random cost the most there
    worse = degraded["profile.dependability[t0]"]
    # never a pass: a regression shown, or an interval that reaches past the margin (undecided)
    assert worse.outcome in (REGRESSION, UNDECIDED), worse.message
    assert worse.difference is not None
    assert worse.difference < -0.05


def test_a_much_worse_model_fails_with_the_reason_first_and_a_minority_of_the_design_shows_nothing() -> None:
    """One test for one judgement (the small shipped model against the large one: a minute of refits), which two
    tests would each compute under xdist.

    A much worse model fails with the reason first. And SmolLM2 leaves three quarters of its profile answers
    unscored: on the few cells both models answered in full its test-retest r is as high as Qwen's, which says
    nothing of the rest. As for a verdict, a minority of the design is insufficient data (not compared, never a
    pass); a regression found on it would still stand."""
    comparisons = gate(renamed(shipped("smollm2-135m"), "new"), renamed(shipped("qwen2.5-coder-1.5b"), "old"))
    for name in ("profile.unscored_rate", "perturbation.custom_accuracy", "perturbation.consistency"):
        comparison = comparisons[name]
        assert comparison.outcome == REGRESSION, comparison.message
        assert comparison.regressed
        assert comparison.message.startswith("REGRESSION: worse than the baseline by more than the margin")
    unscored = comparisons["profile.unscored_rate"]
    assert unscored.new_value == pytest.approx(0.743, abs=0.001)
    # three runs a cell: each model's run-to-run variance; the perturbation asks each cell once: items resampled
    assert unscored.method == FIXED_DESIGN_RATE
    assert comparisons["perturbation.custom_accuracy"].method == f"paired bootstrap over items ({NO_REPEATED_CELL})"
    # the minority of the design
    thin = [c for c in comparisons.values() if c.designed and c.compared / c.designed < 0.5]
    assert {"profile.test_retest_r", "profile.contradiction_rate[t0]"} <= {f"{c.instrument}.{c.metric}" for c in thin}
    for comparison in thin:
        assert comparison.outcome != "non-inferior", comparison.message
        if comparison.outcome == NOT_COMPARED and comparison.compared:
            # the few cells are the reason, unless no interval can be had on them at all (the BFI-25's
            # run-to-run r on SmolLM2's 11 of 200 complete cells; its inter-paraphrase r, one paraphrase)
            reasons = ("insufficient data: compared on", "no interval on the ")
            assert comparison.reason.startswith(reasons), comparison.message
    retest = comparisons["profile.test_retest_r"]
    assert retest.outcome == NOT_COMPARED
    assert (retest.compared, retest.designed) == (62, 756)
