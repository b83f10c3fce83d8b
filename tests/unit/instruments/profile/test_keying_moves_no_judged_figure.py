"""Reverse keying cannot move a judged figure: the G study reads the raw answers (issue 15, item 6)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.answer_sets import CONFIG, latent, observations
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.instruments import registered
from snap_bench.judging.verdicts import judge, load_thresholds


def test_keying_every_item_the_other_way_leaves_the_judged_figures_alone() -> None:
    profile = registered()["profile"](CONFIG)
    answers = observations(profile, latent(1.0, 0.3, 0.5, seed=11), seed=11)
    # the same answers, every item keyed as if it were reverse-scored (6 - raw) instead of as shipped
    rekeyed = [replace(o, keyed_score=None if o.score is None else 6.0 - o.score) for o in answers]
    settings = AnalysisSettings(n_resamples=20)
    shipped, flipped = (profile.analyse("m", group, settings) for group in (answers, rekeyed))
    config = load_thresholds(CONFIG, "profile", {}, None, {**SHARED_METRICS, **profile.metrics})
    judged = [check.metric for check in judge(shipped, config).checks]
    assert judged
    for name in judged:
        assert flipped.metrics[name].value == pytest.approx(shipped.metrics[name].value), name
    # ... while the original design's CV, on keyed scores, moves (why it is no longer judged)
    assert flipped.metrics["cv_mean"].value != pytest.approx(shipped.metrics["cv_mean"].value)
