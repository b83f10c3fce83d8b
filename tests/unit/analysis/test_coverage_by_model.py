"""Coverage: every condition of a model's design without an observation is counted with its reason."""

from __future__ import annotations

from snap_bench.analysis.coverage import ERRORED, NO_REPORT, STOPPED, Coverage, coverage_by_model, incomplete_models
from snap_bench.asking.stops import NOT_ASKED
from snap_bench.observations.observation import Observation


def _observation(model: str, condition: str, reason: str = "score 4") -> Observation:
    return Observation(model, "snap", condition, condition, "M01", {}, 0.0, 1, [], "4", 4, 4.0, None, reason)


def test_every_condition_without_an_observation_is_counted_with_its_reason() -> None:
    ids = [f"b.py::t[gpt-5.2-M01-r{run}]" for run in range(6)] + ["b.py::t[gpt-5.2-mini-M01-r0]"]
    observations = [_observation("gpt-5.2", "M01-r0"), _observation("gpt-5.2", "M01-r1", NOT_ASKED + "stopped")]
    coverage = coverage_by_model(
        ["gpt-5.2", "gpt-5.2-mini"],
        ids,
        observed=[ids[0], ids[1], ids[6]],
        not_measured={ids[2]: "budget spent"},
        missing_reports=[ids[3]],
        observations=observations,
    )
    assert coverage["gpt-5.2"] == Coverage("gpt-5.2", 6, 1, {"budget spent": 1, NO_REPORT: 1, ERRORED: 2, STOPPED: 1})
    assert not coverage["gpt-5.2"].complete
    # The longest model name owns its ids: gpt-5.2-mini's condition is not gpt-5.2's.
    assert coverage["gpt-5.2-mini"] == Coverage("gpt-5.2-mini", 1, 1, {})
    assert coverage["gpt-5.2-mini"].complete
    document = {name: entry.to_json() for name, entry in coverage.items()}
    assert [entry.model for entry in incomplete_models(document)] == ["gpt-5.2"]
    assert coverage["gpt-5.2"].describe().startswith("1/6 conditions answered (")
