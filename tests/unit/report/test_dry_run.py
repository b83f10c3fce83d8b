"""The dry run's expected cost assumes a reasoning effort only where the models.yaml entry sets one
(snap_bench.report.dry_run): an entry's own max_tokens is room for an answer, not a sign that it reasons."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

from snap_bench.design.models import ANTHROPIC, OPENROUTER, ModelSpec, Price
from snap_bench.observations.case import Case
from snap_bench.observations.observation import Condition
from snap_bench.report.dry_run import dry_run_lines

# Anthropic's Messages API needs a max_tokens, so a direct entry carries one; the OpenRouter entry does not.
HAIKU = ModelSpec(
    "claude-haiku", "Claude Haiku", "claude-haiku-4-5", "budget", "https://api.anthropic.com/v1",
    "ANTHROPIC_API_KEY", Price(1.0, 5.0), None, max_tokens=256, dialect=ANTHROPIC,
)  # fmt: skip
OPUS = ModelSpec(
    "claude-opus", "Claude Opus", "anthropic/claude-opus-4.6", "flagship", "https://openrouter.ai/api/v1",
    "OPENROUTER_API_KEY", Price(5.0, 25.0), None, dialect=OPENROUTER,
)  # fmt: skip


class Questionnaire:
    name = "questionnaire"
    version = "1"
    max_tokens = 24

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"How much do you agree with {condition.item}? Answer 1-5."}]


def _lines(tmp_path: Path, models: list[ModelSpec]) -> list[str]:
    questionnaire = Questionnaire()
    session = SimpleNamespace(
        options=SimpleNamespace(cassette_dir=tmp_path / "cassettes"),  # no recordings: the assumption is used
        models=models,
        instrument=lambda name: questionnaire,
        at_provider_default=lambda model: False,
        price_source=lambda model: "models.yaml",
        gate_plan=lambda: None,  # no baseline: no gate to plan
    )
    conditions = [Condition("questionnaire", f"Q{i}", (("t", "t0"),), 0.0, 1) for i in range(100)]
    cases = [Case(model.name, "questionnaire", condition) for model in models for condition in conditions]
    return dry_run_lines(session, cases)  # type: ignore[arg-type]


def _expected_dollars(lines: list[str], model: str) -> float:
    line = next(line for line in lines if line.startswith(f"  {model}: ") and "worst case" in line)
    return float(line.rpartition("~$")[2].split()[0].replace(",", ""))


def test_an_entry_without_reasoning_is_not_assumed_to_reason_for_its_max_tokens(tmp_path: Path) -> None:
    lines = _lines(tmp_path, [HAIKU, OPUS])
    haiku = next(line for line in lines if line.startswith("  claude-haiku: ") and "expected ~" in line)
    assert "effort none" in haiku
    # Haiku costs a fifth of Opus per token in both directions: so does its expected run.
    assert _expected_dollars(lines, "claude-haiku") < _expected_dollars(lines, "claude-opus")


def test_an_entry_with_reasoning_is_assumed_its_effort(tmp_path: Path) -> None:
    thinking = dataclasses.replace(HAIKU, reasoning="low", max_tokens=2048)
    line = next(line for line in _lines(tmp_path, [thinking]) if "expected ~" in line)
    assert "expected ~256 (assumed for reasoning effort low" in line
