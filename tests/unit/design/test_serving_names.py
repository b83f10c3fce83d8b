"""A serving's name spells its base model and levels, and reads back to the same serving."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snap_bench.design.serving import Serving, is_provider_level, serving_of
from snap_bench.providers.openrouter import same_provider

_NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)
_PROVIDER = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._]{0,10}(/[a-z0-9]{1,6})?", fullmatch=True)
_EFFORT = st.sampled_from(["low", "medium", "high", "minimal", "none", "xhigh"])


@given(_NAME, st.none() | _PROVIDER, st.none() | _EFFORT)
def test_a_servings_name_reads_back_to_it(base: str, provider: str | None, effort: str | None) -> None:
    serving = Serving(base, provider, effort)
    read = serving_of(serving.name)
    if provider is None and effort is None:
        assert read is None  # a plain model
    else:
        assert read == serving


def test_names_spell_the_levels_a_folder_can_hold() -> None:
    assert Serving("gpt-oss-120b", "deepinfra/turbo", "high").name == "gpt-oss-120b@deepinfra--turbo@effort-high"
    assert Serving("o4-mini", effort="low").levels == {"effort": "low"}


@pytest.mark.parametrize("name", ["plain", "@groq", "m@", "m@effort-", "m@effort-low@groq", "m@a@b", "m@a@effort-x@y"])
def test_names_no_serving_has_are_not_read_as_one(name: str) -> None:
    assert serving_of(name) is None


def test_the_provider_a_response_names_is_matched_to_the_slug_pinned() -> None:
    assert same_provider("deepinfra/turbo", "DeepInfra")
    assert same_provider("google-vertex", "Google Vertex")
    assert not same_provider("groq", "DeepInfra")
    assert is_provider_level("deepinfra/turbo")
    assert not is_provider_level("a b")


@pytest.mark.parametrize(
    ("pinned", "served"),
    [("google-vertex", "Google"), ("google-vertex/europe", "Google"), ("amazon-bedrock", "Amazon Bedrock")],
)
def test_a_slug_whose_display_name_is_another_word_is_its_providers(pinned: str, served: str) -> None:
    # OpenRouter's provider list names google-vertex "Google" (its responses say so): a pinned Vertex's own
    # answers are not another provider's.
    assert same_provider(pinned, served)


def test_the_providers_a_display_name_could_be_confused_with_are_told_apart() -> None:
    assert not same_provider("google-ai-studio", "Google")
    assert not same_provider("google-vertex", "Google AI Studio")
