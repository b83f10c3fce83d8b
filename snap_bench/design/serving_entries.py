"""A serving's models.yaml entry: its base entry with one provider pinned through OpenRouter's provider routing
and/or a reasoning effort set (snap_bench.design.serving names the servings), and the provider an entry pins.

The session expands its models into servings in one place (snap_bench.session.servings, called by
snap_bench.session.plan.resolve_models); the asker reads the provider pinned to tell an answer served by
another provider (snap_bench.asking.observing.observation_of).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from snap_bench.design.models import OPENROUTER, ModelSpec
from snap_bench.design.serving import Serving

# What a catalogue's supported parameters list for a model that takes a reasoning effort: OpenRouter's
# `reasoning` object and OpenAI's `reasoning_effort`. `include_reasoning` alone is not enough: it only says the
# model can hand back its thinking, not that an effort changes it.
EFFORT_PARAMETERS = ("reasoning", "reasoning_effort")
# The routing keys a pinned provider replaces: an order or an exclusion list would contradict `only`.
_DROPPED_ROUTING = ("order", "ignore", "only", "allow_fallbacks")


def serving_entry(base: ModelSpec, serving: Serving) -> ModelSpec:
    """``base`` asked as ``serving``: named by it, its provider pinned (``only`` that one, fallbacks off: OpenRouter
    then answers from it or not at all), its reasoning effort set. A serving is never expanded again."""
    routing = base.routing
    if serving.provider is not None:
        kept = {key: value for key, value in (base.routing or {}).items() if key not in _DROPPED_ROUTING}
        routing = {**kept, "only": [serving.provider], "allow_fallbacks": False}
    levels = ", ".join(f"{factor} {level}" for factor, level in serving.levels.items())
    return dataclasses.replace(
        base,
        name=serving.name,
        label=f"{base.label} ({levels})",
        routing=routing,
        reasoning=serving.effort if serving.effort is not None else base.reasoning,
        providers=(),
        reasoning_efforts=(),
    )


def servings(base: ModelSpec, providers: Sequence[str], efforts: Sequence[str]) -> list[Serving]:
    """The servings of ``base`` at ``providers`` x ``efforts`` (crossed; a factor without levels is not varied);
    none when neither has levels."""
    if not providers and not efforts:
        return []
    provider_levels: list[str | None] = [*providers] or [None]
    effort_levels: list[str | None] = [*efforts] or [None]
    return [Serving(base.name, provider, effort) for provider in provider_levels for effort in effort_levels]


def pinned_provider(model: ModelSpec) -> str | None:
    """The one provider ``model``'s routing lets serve it (``only: [X]`` with ``allow_fallbacks: false``), or None
    where OpenRouter may route elsewhere (then no answer is another provider's)."""
    routing = model.routing or {}
    only = routing.get("only")
    if model.dialect != OPENROUTER or routing.get("allow_fallbacks") is not False or not isinstance(only, list):
        return None
    return only[0] if len(only) == 1 and isinstance(only[0], str) and only[0] else None


def takes_effort(base: ModelSpec, supported_parameters: Sequence[str] | None) -> bool:
    """Whether ``base`` takes a reasoning effort: its entry sets one (``reasoning:``, ``off`` included: that turns
    reasoning off on a model that has it), or its catalogue entry lists an effort among its parameters."""
    if base.reasoning is not None:
        return True
    return supported_parameters is not None and any(name in supported_parameters for name in EFFORT_PARAMETERS)
