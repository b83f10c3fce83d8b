"""A FAKE OpenRouter serving one model through three providers, for the project's own tests of the serving factors:
it is the loopback fake of tests/fake_openrouter.py (it speaks to no network) with a script of answers that differ
by the provider that serves them and by the reasoning effort asked.

- ``ProviderA`` and ``ProviderB`` answer each profile item alike: a score of 2, 3 or 4 fixed per item (every
  paraphrase, system prompt, temperature and run of an item gets the same answer);
- ``ProviderC`` answers one point higher on half the items (the items at even places of the instrument's order);
- asked at reasoning effort ``high`` (the request's ``reasoning.effort``), a model answers one point higher on
  the same half of the items; at any other effort, or none, as A does (``open/thinking-model``, which ProviderA
  alone serves, differs by effort alone);
- an answer spends EFFORT_TOKENS reasoning tokens at its effort (counted in its completion tokens);
- ``serves_instead`` (of the underlying script) makes a provider's requests be served by another, named in the
  response's ``provider`` field: a provider that ignores the pin.

The routing is the fake's: a request's ``provider.only`` picks the provider (case-insensitively), the response names
it. ``serving_project`` writes a project whose models.yaml points an OpenRouter entry at the fake; a session then
compares the providers with ``--model=served --snap-providers=ProviderA,ProviderB,ProviderC`` (or the efforts with
``--model=thinker --snap-efforts=low,high``: ``thinker`` is a reasoning model ProviderA alone serves, so its answers
differ by effort alone)::

    with serving_openrouter() as fake:
        project = serving_project(tmp_path / "project", fake.base_url)
        monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
        result = project.session("--model=served", "--snap-providers=ProviderA,ProviderB,ProviderC", *design)
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import registered
from snap_bench.instruments.base import Selection
from tests.conftest import BenchProject
from tests.fake_openrouter import FakeModel, FakeOpenRouter, FakeProvider, OpenRouterScript, message_texts

MODEL_ID = "open/served-model"
PROVIDERS = ("ProviderA", "ProviderB", "ProviderC")
DIFFERING = "ProviderC"  # answers one point higher on half the items
HIGHER_EFFORT = "high"  # the effort that answers one point higher on half the items
# The model's catalogue entry takes a reasoning effort (OpenRouter's `reasoning`), so both factors apply to it.
SERVED = FakeModel(
    id=MODEL_ID,
    name="Open: Served Model",
    prompt_price=1e-7,
    completion_price=4e-7,
    supported_parameters=("max_tokens", "temperature", "top_p", "seed", "stop", "reasoning", "include_reasoning"),
    providers=tuple(FakeProvider(name, moderated=False) for name in PROVIDERS),
)
# A reasoning model one provider serves: its answers differ by the effort asked alone.
THINKING = FakeModel(
    id="open/thinking-model",
    prompt_price=1e-7,
    completion_price=4e-7,
    supported_parameters=SERVED.supported_parameters,
    providers=(FakeProvider(PROVIDERS[0], moderated=False),),
)
# A model without any effort parameter in its catalogue entry (a model that takes no effort).
NO_EFFORT = FakeModel(
    id="open/plain-model",
    supported_parameters=("max_tokens", "temperature", "top_p", "seed", "stop"),
    providers=tuple(FakeProvider(name, moderated=False) for name in PROVIDERS),
)


@functools.cache
def profile_items() -> dict[str, tuple[str, int]]:
    """The profile's last user message of every condition -> (its item, the item's place in the instrument's order):
    how the fake tells which item a request asks, whatever the paraphrase."""
    instrument = registered()["profile"](ConfigFiles.shipped())
    conditions = instrument.conditions(Selection(runs=1))
    order = {item: place for place, item in enumerate(dict.fromkeys(condition.item for condition in conditions))}
    found: dict[str, tuple[str, int]] = {}
    for condition in conditions:
        user = [message["content"] for message in instrument.messages(condition) if message["role"] == "user"]
        found[user[-1]] = (condition.item, order[condition.item])
    return found


def moved(item_place: int) -> bool:
    """Whether the differing provider (or the higher effort) answers this item one point higher: half the items."""
    return item_place % 2 == 0


def base_score(item_place: int) -> int:
    return 2 + item_place % 3


def answer(request: dict[str, Any], provider: str) -> str:
    """The script's answer: the item's score, one higher from ProviderC or at effort high on half the items."""
    texts = message_texts(request.get("messages"))
    found = profile_items().get(texts[-1]) if texts else None
    if found is None:
        return "3"
    place = found[1]
    effort = (request.get("reasoning") or {}).get("effort")
    higher = (provider == DIFFERING or effort == HIGHER_EFFORT) and moved(place)
    return str(base_score(place) + (1 if higher else 0))


# Reasoning tokens an answer spends at each effort: what the dry run measures from a serving's own recordings.
EFFORT_TOKENS = {"low": 40, "high": 400}


def serving_script() -> OpenRouterScript:
    return OpenRouterScript(models=(SERVED, THINKING, NO_EFFORT), answer=answer, effort_tokens=dict(EFFORT_TOKENS))


@contextmanager
def serving_openrouter() -> Iterator[FakeOpenRouter]:
    """The fake, started on loopback for the ``with`` block."""
    with FakeOpenRouter(serving_script()) as server:
        yield server


def serving_models_yaml(base_url: str) -> str:
    """OpenRouter entries for the model three providers serve (``served``), the reasoning model one provider serves
    (``thinker`` with the instruments' output budget; ``roomy`` with room for reasoning, its entry saying it
    reasons, so that it takes an effort where no catalogue is read), the model that takes no
    effort (``plain``), and a plain OpenAI-compatible entry (``elsewhere``) that routes to no provider."""
    return textwrap.dedent(f"""\
        defaults:
          base_url: {base_url}
          api_key_env: OPENROUTER_API_KEY
        models:
          served:
            id: {MODEL_ID}
            dialect: openrouter
          thinker:
            id: {THINKING.id}
            dialect: openrouter
          roomy:
            id: {THINKING.id}
            dialect: openrouter
            reasoning: low
            max_tokens: 4096
            price: {{input_per_million: 0.1, output_per_million: 0.4}}
          plain:
            id: {NO_EFFORT.id}
            dialect: openrouter
          elsewhere:
            id: {MODEL_ID}
            dialect: openai-compatible
        """)


def serving_project(root: Path, base_url: str) -> BenchProject:
    """A profile project in ``root`` (created) whose models.yaml is :func:`serving_models_yaml`; the session needs
    OPENROUTER_API_KEY set to tests.fake_openrouter.FAKE_OPENROUTER_KEY to record."""
    root.mkdir(parents=True)
    project = BenchProject(root, base_url)
    (project.root / "config" / "models.yaml").write_text(serving_models_yaml(base_url), encoding="utf-8")
    return project
