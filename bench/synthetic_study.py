"""A synthetic study over every shipped instrument, judged as a session judges it: no model, no recording.

Each model answers every condition of the four shipped instruments (5,204 per model, 52,040 at ten models)
with an answer text the instrument scores itself (its own parsing, as a recorded answer is scored): a
stable position per item, shifted by the system prompt, with noise growing with the temperature. As with
the shipped recordings, half of the models answer with the bare label and half ramble: at a temperature
above zero a sentence of their own follows the label, so that many answers are distinct texts; a few
answers are refusals or unparseable. The observations are then analysed, judged and written into
analysis.json's layout exactly as the plugin does at session end, so that a report can be drawn from them.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import Selection, load_instruments
from snap_bench.instruments.base import Instrument
from snap_bench.judging.checks import CheckRecord
from snap_bench.judging.judgement import judge_session
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.observations.parsing import AnswerCode
from snap_bench.report.analysis_document import analysis_document

REPO = Path(__file__).resolve().parents[1]
# The answer texts an instrument may accept; each instrument keeps those it scores (its own scale).
CANDIDATE_ANSWERS = (
    *(str(n) for n in range(-2, 8)),
    "Strongly disagree",
    "Disagree",
    "Agree",
    "Strongly agree",
    "very negative",
    "negative",
    "neutral",
    "positive",
    "very positive",
)
# A rambling answer's sentence: no digit and no scale word, so that it leaves the label's score as it is.
RAMBLES = (
    "I weigh both sides of this",
    "it depends on the situation and on who is asked",
    "I would lean this way in most cases",
    "this reflects how I usually respond",
    "there are good reasons on each side",
    "my answer might change with more context",
    "the statement seems broadly reasonable",
    "I am not entirely sure but this seems closest",
)
TOPICS = (
    "fairness", "trust", "harm", "loyalty", "freedom", "duty", "care", "markets", "tradition", "order",
    "change", "risk", "family", "work", "health", "truth", "kindness", "rules", "power", "nature",
)  # fmt: skip
REFUSAL = "I'm sorry, but I can't share a personal opinion on that."


@dataclass(frozen=True)
class SyntheticStudy:
    """What the report is drawn from: the observations, analysis.json, the checks and the thresholds."""

    observations: list[Observation]
    document: dict[str, Any]
    checks: list[CheckRecord]
    thresholds: dict[str, dict[str, dict[str, Any]]]
    instruments: dict[str, Instrument]


def shipped_instruments(config: ConfigFiles) -> dict[str, Instrument]:
    """The instruments a session of this repository loads: the registered ones and benchmarks/'s files."""
    return load_instruments(config, sorted((REPO / "benchmarks").glob("*.yaml")))


def answer_scale(instrument: Instrument, condition: Condition) -> list[str]:
    """The candidate answers the instrument scores, from its lowest score to its highest."""
    scored = [(instrument.score(condition, text), text) for text in CANDIDATE_ANSWERS]
    by_score: dict[int, str] = {}
    for result, text in scored:
        if result.code is None and result.score is not None:
            by_score.setdefault(result.score, text)
    return [by_score[score] for score in sorted(by_score)]


def answer_text(rng: random.Random, model: int, label: str, temperature: float | None) -> str:
    """The label alone (a terse model, or temperature 0), else the label and a sentence of the model's own."""
    if model % 2 == 0 or not temperature:
        return label
    clause = rng.choice(RAMBLES)
    return f"{label} - {clause}, thinking of {rng.choice(TOPICS)} and {rng.choice(TOPICS)}."


def synthetic_observations(
    models: int, seed: int = 39, config: ConfigFiles | None = None, *, parse: bool = True, every: int = 1
) -> list[Observation]:
    """Every condition of every shipped instrument, answered by ``models`` synthetic models.

    ``parse=False`` skips the instrument's parsing (a third of the time): each answer then scores as the
    position of its label on the scale, the refusals and the unparseable ones as their codes, for a test
    that needs the rows and not the instrument's own reading of them. ``every=k`` keeps one cell in ``k``
    (with all of its runs) of each instrument: the same factors and models, fewer conditions.
    """
    config = config or ConfigFiles.shipped()
    instruments = shipped_instruments(config)
    rng = random.Random(seed)
    observations: list[Observation] = []
    for name, instrument in instruments.items():
        conditions = instrument.conditions(Selection(follow_up=True))
        cells = list(dict.fromkeys(c.cell for c in conditions))
        kept = set(random.Random(seed).sample(cells, -(-len(cells) // every)))
        conditions = [c for c in conditions if c.cell in kept]
        scale = answer_scale(instrument, conditions[0])
        messages = {c.cell: instrument.messages(c) for c in conditions}
        # A text scores alike in every run of a cell: scored once (the bare labels repeat across runs and models).
        scores: dict[tuple[str, str], Scored] = {}
        for model in range(models):
            position = {item: rng.uniform(0, len(scale) - 1) for item in {c.item for c in conditions}}
            shift = {level: rng.gauss(0, 0.4) for c in conditions for _, level in c.levels}
            for condition in conditions:
                noise = rng.gauss(0, 0.2 + 1.2 * (condition.temperature or 0.0))
                drift = sum(shift[level] for factor, level in condition.levels if factor == "system_prompt")
                index = min(len(scale) - 1, max(0, round(position[condition.item] + drift + noise)))
                roll = rng.random()
                if roll < 0.02:
                    text = REFUSAL
                elif roll < 0.04:
                    text = "I would rather not pick a number here"
                else:
                    text = answer_text(rng, model, scale[index], condition.temperature)
                scored = scores.get((condition.cell, text)) or (
                    instrument.score(condition, text) if parse else unparsed(text, index, roll)
                )
                scores[(condition.cell, text)] = scored
                observations.append(
                    Observation(
                        model=f"synthetic-model-{model:02d}",
                        instrument=name,
                        condition_id=condition.id,
                        cell=condition.cell,
                        item=condition.item,
                        factors=dict(condition.levels),
                        temperature=condition.temperature,
                        run=condition.run,
                        messages=messages[condition.cell],
                        raw_answer=text,
                        score=scored.score,
                        keyed_score=scored.keyed_score,
                        code=None if scored.code is None else int(scored.code),
                        reason=scored.reason,
                        construct=scored.construct,
                        latency_s=round(rng.uniform(0.2, 2.0), 3),
                        prompt_tokens=60 + rng.randrange(40),
                        completion_tokens=1 + len(text) // 4,
                        timestamp="2026-11-25T22:00:00+00:00",
                        extra=dict(scored.extra),
                    )
                )
    return observations


def unparsed(text: str, index: int, roll: float) -> Scored:
    """An answer's score without the instrument's parsing: its label's place on the scale, or a code."""
    if roll < 0.04:
        code = AnswerCode.REFUSAL if roll < 0.02 else AnswerCode.INVALID
        return Scored(None, None, code, "refusal phrase found" if roll < 0.02 else "no number found", None)
    return Scored(index, float(index), None, f"label {text.split(' - ')[0]}", None)


def synthetic_study(models: int, resamples: int = 100, seed: int = 39) -> SyntheticStudy:
    """``models`` synthetic models over every shipped instrument, analysed and judged as a session is."""
    config = ConfigFiles.shipped()
    instruments = shipped_instruments(config)
    observations = synthetic_observations(models, seed, config)
    configs: dict[str, ThresholdConfig] = {}

    def thresholds(name: str) -> ThresholdConfig:
        if name not in configs:
            kind = instruments[name]
            specs = {**SHARED_METRICS, **kind.metrics}
            configs[name] = load_thresholds(config, name, {}, None, specs, kind.thresholds_section())
        return configs[name]

    judgement = judge_session(observations, instruments, AnalysisSettings(n_resamples=resamples), thresholds, None)
    meta = {
        "models": sorted({o.model for o in observations}),
        "instruments": {name: instrument.version for name, instrument in instruments.items()},
        "record_mode": "none",
        "resamples": resamples,
        "seed": seed,
        "judge": "thresholds.yaml",
        "finished": "2026-11-25T22:00:00+00:00",
    }
    document = analysis_document(judgement, instruments, meta)
    tables = {
        name: {metric: dataclasses.asdict(threshold) for metric, threshold in thresholds(name).metrics.items()}
        for name in sorted({instrument for _, instrument in judgement.analyses})
    }
    return SyntheticStudy(observations, document, judgement.checks, tables, instruments)
