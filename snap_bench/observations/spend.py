"""What a session spent per model, and who served its answers: read off the observations it asked.

The spend counts what was asked this session (a replayed answer cost nothing now): the billed usage.cost
where the endpoint reported it, else the price table's estimate. The serving path is counted per model:
a model whose answers came from more than one provider measured the routing as much as the model.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from snap_bench.observations.observation import Observation


def spend_by_model(observations: Sequence[Observation]) -> dict[str, dict[str, Any]]:
    """``{MODEL: {cost_usd, requests, prompt_tokens, completion_tokens, reasoning_tokens}}`` of what was
    asked this session."""
    spend: dict[str, dict[str, Any]] = {}
    for observation in observations:
        if observation.replayed or not observation.attempts:
            continue
        entry = spend.setdefault(
            observation.model,
            {"cost_usd": 0.0, "requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0},
        )
        entry["cost_usd"] += observation.cost_usd or 0.0
        # What was billed: the answered attempts, not those refused (a 429 is retried and costs nothing).
        billed = observation.billed_requests
        entry["requests"] += observation.attempts if billed is None else billed
        entry["prompt_tokens"] += observation.prompt_tokens or 0
        entry["completion_tokens"] += observation.completion_tokens or 0
        entry["reasoning_tokens"] += observation.reasoning_tokens or 0
    return spend


def serving_by_model(observations: Sequence[Observation]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per model that was served by more than one provider: per provider its share of the answers, their
    mean score and the share of them unscored."""
    answers: dict[str, list[Observation]] = defaultdict(list)
    for observation in observations:
        if observation.provider is not None:
            answers[observation.model].append(observation)
    serving: dict[str, dict[str, dict[str, Any]]] = {}
    for model, own in sorted(answers.items()):
        providers = Counter(o.provider for o in own)
        if len(providers) < 2:
            continue
        serving[model] = {}
        for provider, count in providers.most_common():
            served = [o for o in own if o.provider == provider]
            scores = [o.score for o in served if o.score is not None]
            serving[model][str(provider)] = {
                "answers": count,
                "share": count / len(own),
                "mean_score": sum(scores) / len(scores) if scores else None,
                "unscored_rate": sum(o.code is not None for o in served) / count,
            }
    return serving


def serving_notices(observations: Sequence[Observation]) -> list[str]:
    """One line per model whose answers came from several providers, and per model with cache hits."""
    lines = []
    for model, providers in serving_by_model(observations).items():
        shares = ", ".join(f"{name} {entry['share']:.0%}" for name, entry in providers.items())
        lines.append(
            f"{model}: answered by {len(providers)} providers ({shares}); their differences are in the figures as "
            "the G study's provider facet, not as run noise. Fix: pin one provider in the entry's routing block "
            "(provider: {order: [NAME], allow_fallbacks: false}) in models.yaml"
        )
    hits = Counter(o.model for o in observations if o.cache_hit)
    lines += [
        f"{model}: {count} answer(s) came from the endpoint's response cache: repetitions that were cache hits "
        "measured nothing and are left out of the run-to-run figures"
        for model, count in sorted(hits.items())
    ]
    return lines


def with_batch_spend(
    spend: dict[str, dict[str, Any]], batch: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``spend`` with what the batches collected this session cost (at the batch price), counted in each model's
    totals and named apart (``batch_requests``, ``batch_cost_usd``): their answers are replayed by the tests, so
    the observations count none of it."""
    merged = {model: dict(entry) for model, entry in spend.items()}
    for model, spent in batch.items():
        entry = merged.setdefault(
            model,
            {"cost_usd": 0.0, "requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0},
        )
        entry["cost_usd"] += spent["cost_usd"]
        entry["requests"] += spent["requests"]
        entry["prompt_tokens"] += spent["prompt_tokens"]
        entry["completion_tokens"] += spent["completion_tokens"]
        entry["batch_requests"] = spent["requests"]
        entry["batch_cost_usd"] = spent["cost_usd"]
    return merged
