"""The shipped recordings cover the shipped design, and nothing else: the offline command replays every
condition, and no recording ships that no condition asks for.

A prompt, template, item or parameter changed in ``config/`` without recording again leaves conditions
whose cassettes are missing or hold another request (stale); ``make benchmark`` would fail them. This
checks every condition of every instrument, for each model with recordings, the way a session does
before it decides whether a local server is needed (``LocalServers._needs_recording``). The
perturbation's phase 2 is included: its conditions depend on the model's best recorded variant.
"""

from __future__ import annotations

import pytest

from snap_bench.cassettes import CassetteState, cassette_path, cassette_state, recorded_models
from snap_bench.client import request_body
from snap_bench.instruments import Selection, load_instrument, registered
from snap_bench.local_servers import canonical_local_url
from snap_bench.models import load_models
from tests.conftest import REPO

CASSETTES = REPO / "cassettes"
CONFIG = REPO / "config"


@pytest.mark.parametrize("instrument_name", sorted(registered()))
@pytest.mark.parametrize("model_name", recorded_models(CASSETTES))
def test_every_condition_of_the_design_has_its_recording(model_name: str, instrument_name: str) -> None:
    instrument = load_instrument(instrument_name, CONFIG)
    (model,) = load_models(CONFIG).resolve([model_name])
    url = canonical_local_url(model.name) if model.is_local else model.base_url
    conditions = instrument.conditions_for(model.name, Selection(follow_up=True), CASSETTES)
    not_replayable: dict[str, list[str]] = {}
    for condition in conditions:
        body = request_body(
            model.provider_id, instrument.messages(condition), condition.temperature, instrument.max_tokens
        )
        path = cassette_path(CASSETTES, model.name, instrument_name, condition.id)
        state, _ = cassette_state(path, "POST", f"{url}/chat/completions", body)
        if state is not CassetteState.MATCHES:
            not_replayable.setdefault(state.value, []).append(condition.id)
    assert conditions
    assert not not_replayable, {state: (len(ids), ids[:5]) for state, ids in not_replayable.items()}


@pytest.mark.parametrize("instrument_name", sorted(registered()))
@pytest.mark.parametrize("model_name", recorded_models(CASSETTES))
def test_every_shipped_recording_belongs_to_a_condition_of_the_design(model_name: str, instrument_name: str) -> None:
    # A recording that no condition asks for (a removed sample, phase 2 of a variant that is no longer the
    # model's best) is never replayed, but it ships, and a reader of cassettes/ would take it for data.
    instrument = load_instrument(instrument_name, CONFIG)
    conditions = instrument.conditions_for(model_name, Selection(follow_up=True), CASSETTES)
    expected = {cassette_path(CASSETTES, model_name, instrument_name, c.id) for c in conditions}
    shipped = set((CASSETTES / model_name / instrument_name).glob("*.json"))
    orphans = sorted(path.name for path in shipped - expected)
    assert not orphans, (len(orphans), orphans[:5])
