"""session.json and the report list the instruments that ran, not every one the session built
(snap_bench.session.outputs.instruments_run)."""

from __future__ import annotations

from snap_bench.session.outputs import instruments_run
from tests.unit.report.fake_data import fake_observations


def test_only_the_instruments_that_answered_are_listed_as_run() -> None:
    # Offline, a team's run builds the profile and the compass of its benchmarks/ (to find that they have no
    # recording) and asks only its questionnaire.
    observations = [o for o in fake_observations() if o.instrument == "profile"]
    built = {"compass": "c0ffee", "profile": "abc123", "perturbation": "beef01"}
    assert instruments_run(built, observations) == {"profile": "abc123"}
    assert instruments_run(built, []) == {}
