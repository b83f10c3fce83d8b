"""A session's models expanded into their servings (snap_bench.design.serving): each selected model asked at the
providers of ``--snap-providers`` (else its entry's ``providers:``) crossed with the efforts of ``--snap-efforts``
(else its entry's ``reasoning_efforts:``), each crossing a model of its own; the model itself is then not asked.
Called once, by snap_bench.session.plan.resolve_models.

An option replaces its factor's entry key for every model (``--snap-providers`` the entries' ``providers:``); the
other factor's key still applies. The model a ``--baseline`` replays is never expanded: it is added after the
expansion, as its entry stands, the one reference every serving is compared with (``--model=m --baseline=m
--snap-efforts=high`` compares m at effort high with m's own recordings). A model named as a serving already
(``--model=m@groq``, or a serving's recordings) is asked as it is named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snap_bench.asking.model_facts import ModelFacts
from snap_bench.design.models import OPENROUTER, ModelRegistry, ModelSpec, host_of
from snap_bench.design.serving import serving_of
from snap_bench.design.serving_entries import EFFORT_PARAMETERS, serving_entry, servings, takes_effort
from snap_bench.session.settings import SessionSettings, UsageProblem


def expanded(models: Sequence[ModelSpec], options: SessionSettings) -> list[ModelSpec]:
    """``models`` with each one that has provider or effort levels replaced by its servings, in order."""
    found: list[ModelSpec] = []
    for model in models:
        if serving_of(model.name) is not None:
            found.append(model)
            continue
        providers = list(options.providers) or list(model.providers)
        efforts = list(options.efforts) or list(model.reasoning_efforts)
        if providers:
            check_routed(model, "--snap-providers" if options.providers else "its entry's providers:")
        levels = servings(model, providers, efforts)
        if levels:
            found.extend(serving_entry(model, serving) for serving in levels)
        else:
            found.append(model)
    # A serving the recordings named and an expansion made again is one model.
    return list({model.name: model for model in reversed(found)}.values())[::-1]


def serving_model(registry: ModelRegistry, name: str) -> ModelSpec | None:
    """The entry of a model named as a serving (``m@groq``, ``m@effort-high``) whose base models.yaml knows, or
    None for any other name."""
    serving = serving_of(name)
    if serving is None or serving.base not in registry.models:
        return None
    base = registry.resolve([serving.base])[0]
    if serving.provider is not None:
        check_routed(base, f"the model {name}")
    return serving_entry(base, serving)


def check_routed(model: ModelSpec, source: str) -> None:
    """A provider level pins a provider through OpenRouter's routing: a usage problem for any other endpoint."""
    if model.dialect == OPENROUTER:
        return
    where = f"{host_of(model.base_url)}" if model.base_url else "a local server"
    raise UsageProblem(
        f"{model.name}: {source} asks it through pinned providers, and pinning a provider is OpenRouter's provider "
        f"routing; {model.name} goes to {where} in the {model.dialect!r} dialect, which routes to no provider. Fix: "
        f"compare providers on an entry with dialect: {OPENROUTER} (an OpenRouter base_url), or leave "
        f"{model.name} out of the run (--model)"
    )


def check_efforts(
    models: Sequence[ModelSpec], registry: ModelRegistry, facts: Mapping[str, ModelFacts], options: SessionSettings
) -> None:
    """A serving at an effort of a model that takes none is a usage problem naming it (its entry sets no
    ``reasoning:``, and its catalogue entry, where read or recorded, lists no effort parameter)."""
    for model in models:
        serving = serving_of(model.name)
        if serving is None or serving.effort is None:
            continue
        base = registry.models.get(serving.base)
        fact = facts.get(model.name)
        supported = fact.entry.supported_parameters if fact is not None and fact.entry is not None else None
        if base is None or takes_effort(base, supported):
            continue
        source = (
            "--snap-efforts"
            if options.efforts
            else "its entry's reasoning_efforts:"
            if base.reasoning_efforts
            else f"the model name {model.name}"
        )
        listed = "its catalogue entry lists none of " if supported is not None else "no catalogue says it takes "
        raise UsageProblem(
            f"{base.name} does not take a reasoning effort, and {source} asks it at effort {serving.effort}: its "
            f"models.yaml entry sets no reasoning:, and {listed}{', '.join(EFFORT_PARAMETERS)}. "
            f"Fix: leave {base.name} out of a run with --snap-efforts (--model), or, if it is a reasoning model, "
            f"say so in its entry (reasoning: medium)"
        )
