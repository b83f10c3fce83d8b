"""The controller's observations, built with their equal values shared (snap_bench.observations.shared_values),
are the observations a report's dict makes, and the session's judgement of them is the same, every figure."""

from __future__ import annotations

import json
import math

from bench.answer_sets import CONFIG, latent, observations
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.instruments import Selection, registered
from snap_bench.judging.judgement import judge_session
from snap_bench.judging.verdicts import load_thresholds
from snap_bench.observations.observation import Observation
from snap_bench.observations.shared_values import SharedValues
from snap_bench.report.analysis_document import analysis_document

SETTINGS = AnalysisSettings(n_resamples=20)


def _as_reports_carry_them(rows: list[Observation]) -> list[dict[str, object]]:
    """Each observation as the controller receives it: its dict, through JSON (as xdist sends a report)."""
    return [json.loads(json.dumps(row.to_dict())) for row in rows]


def _small_design() -> list[Observation]:
    """Two simulated models over four items each of the profile and the compass (a latent answerer each)."""
    rows: list[Observation] = []
    for name in ("profile", "compass"):
        instrument = registered()[name](CONFIG)
        selection = Selection(items=frozenset(sorted(getattr(instrument, "items", {}))[:4]))
        for number, model in enumerate(("model-a", "model-b")):
            answerer = latent(0.8, 0.3, 0.5 + number, seed=number + 1)
            rows += observations(instrument, answerer, seed=number + 7, model=model, selection=selection)
    return rows


def _document(rows: list[Observation]) -> dict[str, object]:
    instruments = {name: kind(CONFIG) for name, kind in registered().items()}

    def thresholds(name: str):  # type: ignore[no-untyped-def]
        kind = instruments[name]
        return load_thresholds(CONFIG, name, {}, None, {**SHARED_METRICS, **kind.metrics}, kind.thresholds_section())

    result = judge_session(rows, instruments, SETTINGS, thresholds, None, models=["model-a", "model-b"])
    document = analysis_document(result, instruments, {})
    return json.loads(json.dumps(document, default=str))


def test_shared_observations_equal_those_each_dict_makes() -> None:
    dicts = _as_reports_carry_them(_small_design())
    shared = SharedValues()
    built = [shared.observation(values) for values in dicts]
    assert built == [Observation.from_dict(values) for values in dicts]
    # equal values are one object: every run and temperature of a cell sends the same messages
    assert len({id(row.messages) for row in built}) < len(built) / 3
    assert len({id(row.factors) for row in built}) < len(built) / 3


def test_shared_values_keep_each_value_s_type() -> None:
    shared = SharedValues()
    first = shared.observation(_values(keyed_score=4.0, score=4, extra={"n": 1}))
    second = shared.observation(_values(keyed_score=4, score=4, extra={"n": 1.0}))
    third = shared.observation(_values(keyed_score=True, score=1, extra={"n": True}))
    assert [type(o.keyed_score) for o in (first, second, third)] == [float, int, bool]
    assert [type(o.extra["n"]) for o in (first, second, third)] == [int, float, bool]
    # NaN equals nothing, itself included: each is kept, and the value stays a NaN
    assert math.isnan(shared.observation(_values(keyed_score=float("nan"))).keyed_score or 0.0)


def test_the_judgement_of_shared_observations_is_the_same_in_every_figure() -> None:
    dicts = _as_reports_carry_them(_small_design())
    shared = SharedValues()
    each_its_own = _document([Observation.from_dict(values) for values in dicts])
    held_once = _document([shared.observation(values) for values in dicts])
    assert held_once == each_its_own
    assert each_its_own["instruments"]  # a judgement with figures in it, not two empty ones


def _values(**changes: object) -> dict[str, object]:
    values: dict[str, object] = {
        "model": "m",
        "instrument": "profile",
        "condition_id": "M01-P1-NEU-t0-C0-r1",
        "cell": "M01-P1-NEU-t0-C0",
        "item": "M01",
        "factors": {"paraphrase": "P1"},
        "temperature": 0.0,
        "run": 1,
        "messages": [{"role": "user", "content": "q"}],
        "raw_answer": "4",
        "score": 4,
        "keyed_score": 4.0,
        "code": None,
        "reason": "",
    }
    return values | changes
