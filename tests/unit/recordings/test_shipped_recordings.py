"""The shipped recordings cover the shipped design, and nothing else: the offline command replays every
condition, and no recording ships that no condition asks for.

A prompt, template, item or parameter changed in the packaged design (``snap_bench/design/defaults/``)
without recording again leaves conditions whose cassettes are missing or hold another request (stale);
``make benchmark`` would fail them. This checks every condition of every instrument (the registered ones and
the YAML files of benchmarks/), for each model with recordings, the way a session does before it decides
whether a local server is needed: the request built by the one function the asker sends with, looked up byte
for byte through the same :class:`Recordings` object, and its recorded answer read as the asker reads it.
The perturbation's phase 2 is included: its conditions depend on the model's best recorded variant.
"""

from __future__ import annotations

import pytest

from snap_bench.asking.endpoints import canonical_local_url
from snap_bench.asking.replay import replay
from snap_bench.design.models import load_models
from snap_bench.instruments import Selection
from snap_bench.recordings.cassettes import cassette_path, recorded_models
from snap_bench.recordings.state import Recordings
from snap_bench.wire.request import condition_request
from tests.conftest import REPO, SHIPPED, shipped_instruments

CASSETTES = REPO / "cassettes"
RECORDINGS = Recordings(CASSETTES)
CONFIG = SHIPPED


@pytest.mark.parametrize("instrument_name", sorted(shipped_instruments()))
@pytest.mark.parametrize("model_name", recorded_models(CASSETTES))
def test_every_condition_of_the_design_has_its_recording(model_name: str, instrument_name: str) -> None:
    instrument = shipped_instruments()[instrument_name]
    (model,) = load_models(CONFIG).resolve([model_name])
    url = canonical_local_url(model.name) if model.is_local else model.base_url
    conditions = instrument.conditions_for(model.name, Selection(follow_up=True), RECORDINGS)
    not_replayable: dict[str, list[str]] = {}
    for condition in conditions:
        recorded = replay(RECORDINGS.check(condition_request(model, url, instrument, condition)))
        if recorded.reply is None:
            not_replayable.setdefault(recorded.state.value, []).append(condition.id)
    assert conditions
    assert not not_replayable, {state: (len(ids), ids[:5]) for state, ids in not_replayable.items()}


@pytest.mark.parametrize("instrument_name", sorted(shipped_instruments()))
@pytest.mark.parametrize("model_name", recorded_models(CASSETTES))
def test_every_shipped_recording_belongs_to_a_condition_of_the_design(model_name: str, instrument_name: str) -> None:
    # A recording that no condition asks for (a removed sample, phase 2 of a variant that is no longer the
    # model's best) is never replayed, but it ships, and a reader of cassettes/ would take it for data.
    instrument = shipped_instruments()[instrument_name]
    conditions = instrument.conditions_for(model_name, Selection(follow_up=True), RECORDINGS)
    expected = {cassette_path(CASSETTES, model_name, instrument_name, c.id) for c in conditions}
    shipped = set((CASSETTES / model_name / instrument_name).glob("*.json"))
    orphans = sorted(path.name for path in shipped - expected)
    assert not orphans, (len(orphans), orphans[:5])
