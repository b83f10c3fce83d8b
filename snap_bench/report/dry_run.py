"""``--snap-dry-run``: what the run would ask and what it may cost, from the conditions pytest collected.

The plan is the collected tests themselves (a file path, ``-k``, ``--snap-items`` and the rest limit it as they
limit a run), each model's conditions at the temperatures it will really be asked at. Two prices per model and
in total, each with its assumption stated: a worst case (every answer writes its whole output budget, the bound
``--snap-max-cost`` holds requests to) and an expected cost (the model's measured tokens per answer where it has
recordings, else a stated assumption for its reasoning effort).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from snap_bench.asking.replay import recorded_output_tokens
from snap_bench.design.entry_values import REASONING_OFF

if TYPE_CHECKING:
    from snap_bench.analysis.planner import Planned

    class Priced(Planned, Protocol):
        """What the dry run asks of an instrument: what the planner does (its messages, answer budget, scoring
        and analysis) and its version."""

        @property
        def version(self) -> str: ...

    from pathlib import Path

    from snap_bench.design.models import ModelSpec
    from snap_bench.judging.gate import Gate
    from snap_bench.judging.run_planner import GatePlan
    from snap_bench.observations.case import Case
    from snap_bench.observations.observation import Condition

# Rough size of a token in characters, for cost estimates only (OpenAI's rule of thumb for English).
CHARS_PER_TOKEN = 4
# Output tokens of one answer (reasoning included) assumed for a model without recordings, by reasoning effort:
# a short answer without reasoning; with it, what the effort typically spends on a one-line question. Capped at
# the answer's budget. An effort is assumed only where the entry sets one: an entry's own max_tokens is no sign
# of reasoning (Anthropic's Messages API needs one, and thinking there is off unless asked for), and taking it
# as medium priced a budget model above a flagship that sets none.
ASSUMED_TOKENS = {"none": 16, "minimal": 64, "low": 256, "medium": 1024, "high": 2048, "xhigh": 4096}


class RecordingSettings(Protocol):
    """What the dry run reads of the session's settings: where the recordings are, and the gate."""

    @property
    def cassette_dir(self) -> Path: ...

    @property
    def gate(self) -> Gate: ...


class DryRunView(Protocol):
    """What the dry run reads of a session (the plugin's session provides it)."""

    @property
    def options(self) -> RecordingSettings: ...

    def gate_plan(self) -> GatePlan | None: ...

    models: list[ModelSpec]

    def instrument(self, name: str) -> Priced: ...

    def at_provider_default(self, model: str) -> bool: ...

    def price_source(self, model: str) -> str: ...


@dataclass
class Cost:
    conditions: int = 0
    worst: float | None = 0.0
    expected: float | None = 0.0

    def add(self, other: Cost) -> None:
        self.conditions += other.conditions
        self.worst = None if self.worst is None or other.worst is None else self.worst + other.worst
        self.expected = None if self.expected is None or other.expected is None else self.expected + other.expected

    def dollars(self) -> str:
        if self.worst is None or self.expected is None:
            return "no price in models.yaml or the endpoint's catalogue"
        return f"cost <= ${self.worst:,.2f} worst case, ~${self.expected:,.2f} expected"


def effort(model: ModelSpec) -> str:
    """The entry's reasoning effort (``off`` is none); none where it sets no effort."""
    if model.reasoning is None or model.reasoning == REASONING_OFF:
        return "none"
    return model.reasoning


def dry_run_lines(session: DryRunView, cases: Sequence[Case]) -> list[str]:
    by_instrument: dict[str, dict[str, list[Condition]]] = defaultdict(lambda: defaultdict(list))
    for case in cases:
        by_instrument[case.instrument][case.model].append(case.condition)
    lines = ["snap-bench dry run: the conditions this run collected, and their cost (nothing is asked)"]
    per_model = {model.name: Cost() for model in session.models}
    for name, by_model in by_instrument.items():
        instrument = session.instrument(name)
        conditions = [condition for asked in by_model.values() for condition in asked]
        items = len({condition.item for condition in conditions})
        lines.append(f"instrument {name} (version {instrument.version}): {items} items")
        levels: dict[str, dict[str, None]] = defaultdict(dict)
        for condition in conditions:
            for factor, level in condition.levels:
                levels[factor][level] = None
        lines.extend(f"  {factor}: {', '.join(values)}" for factor, values in levels.items())
        for model in session.models:
            if model.name in by_model:
                line, cost = _model_line(session, model, instrument, by_model[model.name])
                lines.append(line)
                per_model[model.name].add(cost)
        for model in session.models:
            # with a pilot's recordings, how many repetitions reach a target (snap_bench.analysis.planner)
            if model.name in by_model and (session.options.cassette_dir / model.name / name).is_dir():
                from snap_bench.analysis.planner import planner_lines

                lines.extend(planner_lines(instrument, model.name, by_model[model.name], session.options.cassette_dir))
    found = session.gate_plan()
    if found is not None:
        # Before anything is paid for: whether the design decides the gate against an unchanged model.
        from snap_bench.report.gate_plan import gate_plan_lines

        new = [name for name in per_model if name != found.baseline]
        lines.extend(gate_plan_lines(found, session.options.gate, new))
    total, unpriced = Cost(), []
    lines.append("per model:")
    for name, cost in per_model.items():
        lines.append(f"  {name}: {cost.conditions:,} conditions; {cost.dollars()}")
        if cost.worst is None:
            unpriced.append(name)
            total.conditions += cost.conditions
        else:
            total.add(cost)
    without = f" (no price for {', '.join(unpriced)}: not counted)" if unpriced else ""
    priced = total.dollars() + without if len(unpriced) < len(per_model) else "no model has a price"
    lines.append(f"total: {total.conditions} conditions for {len(per_model)} model(s); {priced}")
    lines.append(
        "worst case: every answer writes its whole output budget (the model's max_tokens in models.yaml, else the "
        "instrument's). expected: the model's measured output tokens per answer where it has recordings, else "
        f"assumed for its reasoning effort ({', '.join(f'{e} {n:,}' for e, n in ASSUMED_TOKENS.items())}; "
        "at most the budget). Input tokens: characters / 4."
    )
    return lines


def _model_line(
    session: DryRunView, model: ModelSpec, instrument: Priced, conditions: list[Condition]
) -> tuple[str, Cost]:
    count = len(conditions)
    input_tokens = sum(
        sum(len(message["content"]) for message in instrument.messages(condition)) // CHARS_PER_TOKEN
        for condition in conditions
    )
    budget = model.max_tokens or instrument.max_tokens
    measured = recorded_output_tokens(
        session.options.cassette_dir / model.name / instrument.name, dialect=model.dialect
    )
    if measured is not None:
        per_answer = measured[0]
        why = f"measured over {measured[1]} of its recorded answers"
    else:
        assumed = ASSUMED_TOKENS[effort(model)]
        per_answer = min(assumed, budget)
        why = f"assumed for reasoning effort {effort(model)}: no recordings of it"
        if assumed > budget and effort(model) != "none":
            # A serving at a higher effort keeps its entry's budget: reasoning tokens count toward it, so answers
            # would be cut (code -4) before anything is said.
            why += (
                f"; effort {effort(model)} typically spends ~{assumed:,}, more than the budget: its answers may be "
                "cut before they say anything (raise the entry's max_tokens in models.yaml)"
            )
    temperature = " at the provider's default temperature" if session.at_provider_default(model.name) else ""
    head = (
        f"  {model.name}: {count:,} conditions{temperature}; ~{input_tokens:,} input tokens; output tokens per "
        f"answer <= {budget:,}, expected ~{per_answer:,.0f} ({why})"
    )
    if model.price is None:
        return f"{head}; no price in models.yaml or the endpoint's catalogue", Cost(count, None, None)
    input_cost = input_tokens * model.price.input_per_million / 1e6
    worst = input_cost + budget * count * model.price.output_per_million / 1e6
    expected = input_cost + per_answer * count * model.price.output_per_million / 1e6
    cost = Cost(count, worst, expected)
    return f"{head}; {cost.dollars()} (price from {session.price_source(model.name)})", cost
