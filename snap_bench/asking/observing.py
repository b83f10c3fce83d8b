"""The observation a reply makes of a condition: scored by the instrument, or an answer code with the reason
(an API error, a refusal by the provider's moderation, an answer cut before it said anything, an answer another
provider served than the one pinned). Every path goes through it: a live answer, one asked ahead, a replayed one,
a batch result."""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

from snap_bench.asking.client import ChatReply
from snap_bench.asking.spend import cost_usd
from snap_bench.design.models import ModelSpec
from snap_bench.design.serving_entries import pinned_provider
from snap_bench.observations.logprobs import answer_logprobs
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.observations.parsing import AnswerCode
from snap_bench.providers.openrouter import same_provider
from snap_bench.wire.dialects import reasoning_effort
from snap_bench.wire.request import Asked


class Answered(Asked, Protocol):
    """What the asker needs of an instrument: a condition rendered into messages (:class:`Asked`), its answer
    scored, and the construct it measures (every Instrument provides it)."""

    def score(self, condition: Condition, answer: str) -> Scored: ...

    def construct(self, condition: Condition) -> str | None: ...


def observation_of(
    model: str,
    instrument: Answered,
    condition: Condition,
    messages: list[dict[str, str]],
    reply: ChatReply,
    replayed: bool,
    spec: ModelSpec | None = None,
) -> Observation:
    """The observation a reply makes of a condition; ``spec`` (the model's entry) prices it where the
    endpoint billed nothing it said, and names the reasoning effort asked."""
    cost = reply.cost_usd if spec is None else (cost_usd(spec, reply) if reply.attempts else None)
    effort = None if spec is None else reasoning_effort(spec)
    pinned = None if spec is None else pinned_provider(spec)
    code: int | None
    extra: dict[str, Any] = {}
    if pinned is not None and reply.text is not None and reply.provider and not same_provider(pinned, reply.provider):
        # The routing pinned one provider and another answered (a provider that ignored the pin, or a cached answer
        # of another's): its answer is no measure of the pinned one, recorded or replayed.
        score, keyed, code, construct = None, None, int(AnswerCode.API_ERROR), instrument.construct(condition)
        reason = (
            f"served by {reply.provider}, not by {pinned}, the provider pinned (provider.only): not scored as "
            f"{pinned}'s answer"
        )
    elif reply.moderated:
        # Refused by the provider's moderation, not by the model: unscored, counted apart from its refusals.
        score, keyed, code, construct = None, None, int(AnswerCode.MODERATED), instrument.construct(condition)
        reason = f"refused by the provider's moderation: {reply.error or reply.finish_reason or 'flagged'}"
    elif reply.text is None:
        score, keyed, code, reason = None, None, int(AnswerCode.API_ERROR), reply.error or "no reply"
        construct = instrument.construct(condition)
    elif not reply.text.strip() and reply.finish_reason == "length":
        # Not an unparseable answer: the model spent its output budget (thinking, for a reasoning
        # model) before it said anything.
        score, keyed, code, construct = None, None, int(AnswerCode.TRUNCATED), instrument.construct(condition)
        thought = f" ({reply.reasoning_tokens} reasoning tokens)" if reply.reasoning_tokens else ""
        reason = f"cut by the output limit before an answer{thought}: raise the model's max_tokens in models.yaml"
    else:
        scored = instrument.score(condition, reply.text)
        score, keyed, reason, construct = scored.score, scored.keyed_score, scored.reason, scored.construct
        code = None if scored.code is None else int(scored.code)
        extra = dict(scored.extra)
    return Observation(
        model=model,
        instrument=instrument.name,
        condition_id=condition.id,
        cell=condition.cell,
        item=condition.item,
        factors=dict(condition.levels),
        temperature=condition.temperature,
        run=condition.run,
        messages=messages,
        raw_answer=reply.text,
        score=score,
        keyed_score=keyed,
        code=code,
        reason=reason,
        construct=construct,
        latency_s=reply.latency_s,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        reasoning_tokens=reply.reasoning_tokens,
        logprobs=answer_logprobs(instrument, reply.logprobs, score),
        attempts=reply.attempts,
        replayed=replayed,
        timestamp=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        extra=extra,
        provider=reply.provider,
        served_model=reply.served_model,
        system_fingerprint=reply.system_fingerprint,
        cost_usd=cost,
        cache_hit=reply.cache_hit,
        reasoning_effort=effort,
        billed_requests=None if replayed else reply.billed_requests,
    )
