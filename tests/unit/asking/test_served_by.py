"""An answer served by another provider than the one pinned is an API error naming both, never scored as the pinned
provider's (snap_bench.asking.observing.observation_of, which a replayed answer goes through too)."""

from __future__ import annotations

import pytest

from snap_bench.asking.client import ChatReply
from snap_bench.asking.observing import observation_of
from snap_bench.design.config import ConfigFiles
from snap_bench.design.models import OPENROUTER, ModelSpec
from snap_bench.design.serving import Serving
from snap_bench.design.serving_entries import serving_entry
from snap_bench.instruments import registered
from snap_bench.instruments.base import Selection
from snap_bench.observations.parsing import AnswerCode

BASE = ModelSpec("m", "M", "vendor/m", "t", "https://openrouter.ai/api/v1", None, None, None, dialect=OPENROUTER)
PINNED = serving_entry(BASE, Serving("m", "deepinfra/turbo"))


def _observed(spec: ModelSpec, provider: str | None, *, replayed: bool = False) -> tuple[int | None, str, object]:
    instrument = registered()["profile"](ConfigFiles.shipped())
    condition = instrument.conditions(Selection(items=frozenset({"M01"}), runs=1))[0]
    reply = ChatReply("4", None, 200, 0.1, 1, provider=provider)
    observed = observation_of(spec.name, instrument, condition, [], reply, replayed, spec)
    return observed.code, observed.reason, observed.score


@pytest.mark.parametrize("replayed", [False, True])
def test_another_providers_answer_is_an_api_error_naming_both(replayed: bool) -> None:
    code, reason, score = _observed(PINNED, "Groq", replayed=replayed)
    assert (code, score) == (int(AnswerCode.API_ERROR), None)
    assert reason.startswith("served by Groq, not by deepinfra/turbo, the provider pinned")


@pytest.mark.parametrize(("spec", "provider"), [(PINNED, "DeepInfra"), (PINNED, None), (BASE, "Groq")])
def test_the_pinned_providers_answer_or_an_unpinned_models_is_scored(spec: ModelSpec, provider: str | None) -> None:
    code, _, score = _observed(spec, provider)
    assert (code, score) == (None, 4)
