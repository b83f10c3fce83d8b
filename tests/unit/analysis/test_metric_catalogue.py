"""What a metric is, read from the catalogue a session builds from its instruments (no registry of metrics)."""

from __future__ import annotations

from snap_bench.analysis.metric_specs import SHARED_METRICS, MetricCatalogue, MetricSpec
from snap_bench.instruments import CompassInstrument, ProfileInstrument, metric_catalogue


def test_an_instruments_own_spec_wins_then_the_shared_then_the_first_instrument_that_has_it() -> None:
    mine = MetricSpec("mine's own unscored rate", unit="share", better="lower")
    other = MetricSpec("other's figure")
    catalogue = MetricCatalogue({"first": {"figure": MetricSpec("first's figure")}, "mine": {"unscored_rate": mine}})
    catalogue = MetricCatalogue({**catalogue.instruments, "other": {"figure": other}})
    assert catalogue.spec("unscored_rate", "mine") is mine
    assert catalogue.spec("unscored_rate", "other") is SHARED_METRICS["unscored_rate"]
    assert catalogue.spec("unscored_rate") is SHARED_METRICS["unscored_rate"]
    assert catalogue.spec("figure", "other") is other
    assert catalogue.spec("figure") is not None
    assert catalogue.spec("figure").label == "first's figure"  # type: ignore[union-attr]
    assert catalogue.spec("nothing") is None


def test_the_registrys_catalogue_holds_what_each_registered_instrument_reports() -> None:
    catalogue = metric_catalogue()
    assert catalogue.spec("cronbach_alpha_moral", "profile") is ProfileInstrument.metrics["cronbach_alpha_moral"]
    assert catalogue.spec("no_opinion_rate", "compass") is CompassInstrument.metrics["no_opinion_rate"]
    # a session's own catalogue knows only its instruments: nothing is left over from another session
    assert MetricCatalogue({}).spec("cronbach_alpha_moral") is None
