"""The instrument of a classification task asked through rewordings (:func:`task_kind` makes one per task file;
the shipped prompt-perturbation study, benchmarks/perturbation.yaml, is 5-class sentiment through 16).

Design: sample x variant (one level of each rewording dimension; the study's formality x phrasing x order x
synonyms, 2 x 2 x 2 x 2) x temperature x run. Phase 2 (``--snap-perturbation-phase2``) asks each model's best
baseline variant again with labelled examples before (``pre``) or after (``suf``) the prompt.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.design.config import ConfigError, ConfigFiles, Node
from snap_bench.design.temperatures import temperature_level
from snap_bench.instruments.base import Instrument, InstrumentKind, InstrumentOption, Selection
from snap_bench.instruments.design import overlaid_thresholds, selected
from snap_bench.instruments.task.few_shot import (
    EXAMPLE_POSITIONS,
    EXAMPLES_FACTOR,
    BestVariant,
    answered_accuracy,
    diverse_examples,
    seeded_order,
    variant_index,
)
from snap_bench.instruments.task.labelled_data import Sample, gold_construct
from snap_bench.instruments.task.labels import parse_label
from snap_bench.instruments.task.metrics import METRICS
from snap_bench.instruments.task.prompt_variants import Variant
from snap_bench.instruments.task.task import TaskDesign, read_task
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.report.context import ReportContext

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
    from snap_bench.recordings.state import Recordings

# The thresholds.yaml section a task file's own `thresholds:` is laid over: the sentiment study's.
DEFAULT_THRESHOLDS = "perturbation"
PHASE2_OPTION = "--snap-perturbation-phase2"
# The same option under a name for any task (the sentiment study's name is kept: scripts and docs use it).
PHASE2_OPTION_ALIAS = "--snap-task-phase2"


class TaskInstrument(Instrument):
    """A classification task's instrument, from its design (read from its file)."""

    name = "task"
    title = "classification task"
    metrics = METRICS

    def __init__(self, config: ConfigFiles, task: TaskDesign) -> None:
        self.name = task.name
        self.title = task.title
        self.config = config
        self.task = task
        self.label_set = task.label_set
        self.data_spec = task.data_spec
        self.samples = task.samples
        self.example_pool = task.example_pool
        self.runs = task.runs
        self.max_tokens = task.max_tokens
        self.temperatures = task.temperatures
        self.design = task.prompts
        self.examples_per_label = task.few_shot.examples_per_label
        self.example_format = task.few_shot.example_format
        self.examples_header = task.few_shot.examples_header
        self.example_order_seed = task.few_shot.example_order_seed
        self.best_variant_rule = task.few_shot.best_variant_by
        self._examples: list[Sample] | None = None
        self._best: dict[str, BestVariant] = {}

    def thresholds_section(self) -> Node | None:
        """A task file's own `thresholds:` laid over the defaults for a task (the sentiment study's section of
        thresholds.yaml, `perturbation`)."""
        if self.config is None:
            return None
        own = self.task.thresholds or Node({}, self.task.files[0], "thresholds")
        merged = overlaid_thresholds(self.config, DEFAULT_THRESHOLDS, own)
        if not self.label_set.weighted and "drift_margin" not in own.mapping():
            # The drift is read on the labels' weights; topics in a list have no axis to drift along.
            merged.pop("drift_margin", None)
        return Node(merged, own.path, own.key)

    # -- the design ---------------------------------------------------------------------------

    @property
    def source_files(self) -> list[Path]:
        return list(self.task.files)

    @property
    def factor_levels(self) -> dict[str, list[str]]:
        """Every factor's levels, in design order (the examples factor only in phase 2)."""
        return {**self.design.levels(), "temperature": [temperature_level(t) for t in self.temperatures]}

    @property
    def selectable_items(self) -> list[str]:
        """What --snap-items may name: sample ids."""
        return sorted(self.samples)

    def variants(self) -> list[Variant]:
        return self.design.variants()

    def conditions(self, selection: Selection) -> list[Condition]:
        """The baseline: every variant of every sample, sample by sample, so that a recording cut
        short leaves whole samples (each asked through all variants) rather than whole variants."""
        return [
            condition
            for sample in self.samples.values()
            if not selection.items or sample.id in selection.items
            for variant in self.variants()
            for condition in self._conditions(sample, variant.levels, selection)
            if self._kept(condition, selection)
        ]

    def conditions_for(self, model: str, selection: Selection, recordings: Recordings) -> list[Condition]:
        conditions = self.conditions(selection)
        if not selection.follow_up:
            return conditions
        best = self.best_variant(model, recordings)
        for position in EXAMPLE_POSITIONS:
            levels = (*best.variant.levels, (EXAMPLES_FACTOR, position))
            conditions += [
                condition
                for sample in self.samples.values()
                if not selection.items or sample.id in selection.items
                for condition in self._conditions(sample, levels, selection)
                if self._kept(condition, selection)
            ]
        return conditions

    def _conditions(self, sample: Sample, levels: tuple[tuple[str, str], ...], selection: Selection) -> list[Condition]:
        runs = selection.runs or self.runs
        many_temperatures = len(self.temperatures) > 1
        conditions: list[Condition] = []
        for temperature in self.temperatures:
            # A single temperature stays out of the id (S017-formal-imp-task-syn1-r1).
            own = (("temperature", temperature_level(temperature)),) if many_temperatures else ()
            conditions += [
                Condition(self.name, sample.id, (*levels, *own), temperature, run) for run in range(1, runs + 1)
            ]
        return conditions

    @staticmethod
    def _kept(condition: Condition, selection: Selection) -> bool:
        levels = dict(condition.levels)
        levels.setdefault("temperature", temperature_level(condition.temperature))
        return selected(selection, levels.items())

    # -- phase 2 ------------------------------------------------------------------------------

    def examples(self) -> list[Sample]:
        """The few-shot examples in the prompt's order: chosen once from the pool (:func:`diverse_examples`),
        then shown in the order ``example_order_seed`` fixes (:func:`seeded_order`)."""
        if self._examples is None:
            if not self.example_pool:
                raise ConfigError(
                    self.task.files[0],
                    "data.examples",
                    "phase 2 needs a pool of labelled examples",
                    "name a CSV or JSONL file disjoint from the test samples",
                )
            try:
                chosen = diverse_examples(self.example_pool, self.examples_per_label)
            except ValueError as error:  # too few examples of a label in the pool
                raise ConfigError(
                    self.task.files[0],
                    "phase2.examples_per_label",
                    str(error),
                    "add labelled examples to the pool, or ask for fewer per label",
                ) from None
            self._examples = seeded_order(chosen, self.example_order_seed)
        return self._examples

    def best_variant(self, model: str, recordings: Recordings) -> BestVariant:
        if model not in self._best:
            self._best[model] = best_variant_from_recordings(self, model, recordings, self.best_variant_rule)
        return self._best[model]

    def audit(self, models: list[str], selection: Selection, recordings: Recordings) -> dict[str, Any] | None:
        if not selection.follow_up:
            return None
        return {
            "instrument": self.name,
            "rule": (
                f"best variant per model by {self.best_variant_rule} on its baseline recordings; "
                f"{self.examples_per_label} examples per label present in the pool, chosen by "
                "few_shot.diverse_examples (greedy farthest point on TF-IDF cosine distance and length), "
                f"listed here in the prompt's order (few_shot.seeded_order, seed {self.example_order_seed})"
            ),
            "best_variants": {model: self.best_variant(model, recordings).to_json() for model in models},
            "examples": [
                {"id": s.id, "label": s.gold, "raw_label": s.raw_label, "chars": len(s.text), "text": s.text}
                for s in self.examples()
            ],
            "test_ids": sorted(self.samples),
            "split": self._split(),
        }

    def _split(self) -> dict[str, Any]:
        from snap_bench.instruments.task.few_shot import SPLIT_SEED, split_samples

        selection, held_out = split_samples(sorted(self.samples))
        return {
            "seed": SPLIT_SEED,
            "rule": "few_shot.split_samples: a seeded shuffle of the test ids, halved; the analysis picks "
            "the best variant on the selection half and measures the few-shot gain on the held-out half",
            "selection": selection,
            "held_out": held_out,
        }

    # -- asking and scoring -------------------------------------------------------------------

    def prompt(self, condition: Condition) -> str:
        variant = Variant(tuple((f, level) for f, level in condition.levels if f in self.design.factors))
        prompt = self.design.render(variant, self.samples[condition.item].text)
        position = dict(condition.levels).get(EXAMPLES_FACTOR)
        if position is None:
            return prompt
        block = "\n\n".join(
            [self.examples_header]
            + [self.example_format.replace("{label}", s.gold).replace("{text}", s.text) for s in self.examples()]
        )
        return f"{block}\n\n{prompt}" if position == "pre" else f"{prompt}\n\n{block}"

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt(condition)}]

    @property
    def keyed_range(self) -> tuple[float, float] | None:
        values = self.label_set.encoding.values()
        return float(min(values)), float(max(values))

    def score(self, condition: Condition, answer: str) -> Scored:
        parsed = parse_label(answer, self.label_set.labels)
        construct = self.construct(condition)
        if parsed.label is None:
            return Scored(None, None, parsed.code, parsed.reason, construct)
        value = self.label_set.encoding[parsed.label]
        return Scored(value, float(value), None, parsed.reason, construct)

    def construct(self, condition: Condition) -> str | None:
        """The sample's gold label (the analysis reads it back with :func:`read_gold`)."""
        return gold_construct(self.samples[condition.item], self.data_spec.gold_kind)

    options = (
        InstrumentOption(
            PHASE2_OPTION,
            aliases=(PHASE2_OPTION_ALIAS,),
            help="a task (the perturbation study among them): also ask each model's best baseline variant with "
            "few-shot examples before and after the prompt (needs the model's whole baseline recorded). Same as "
            f"{PHASE2_OPTION_ALIAS}. Default: False.",
        ),
    )

    @classmethod
    def follow_up_requested(cls, values: Mapping[str, object]) -> bool:
        return bool(values.get(PHASE2_OPTION))

    def analyse(self, model: str, observations: Sequence[Observation], settings: AnalysisSettings) -> ModelAnalysis:
        from snap_bench.instruments.task.analysis import analyse_perturbation

        return analyse_perturbation(model, self.name, observations, settings, self.label_set, list(self.design.factors))

    def report_section(self, context: ReportContext) -> str:
        from snap_bench.instruments.task.report import perturbation_section

        return perturbation_section(context.models, context.observations, context.catalogue)


def best_variant_from_recordings(
    instrument: TaskInstrument, model: str, recordings: Recordings, rule: str
) -> BestVariant:
    """The baseline variant with the highest weighted index (or custom accuracy) in ``model``'s recordings.

    Within one model the weighted index is 0.7 x accuracy + a constant, so both rules rank the
    variants alike; ties go to the alphabetically first variant id. Every baseline condition
    must be recorded: choosing on part of the data would choose on chance.
    """
    import numpy as np

    # Imported here: the stats package loads scipy, which importing the instrument registry (at
    # plugin import, in every worker) must not pay for.
    from snap_bench.stats.categorical import modal_share, mse_accuracy

    conditions = instrument.conditions(Selection())
    answers: dict[str, str] = {}
    missing = 0
    for condition in conditions:
        text = recordings.answer(model, instrument.name, condition.id)
        if text is None:
            missing += 1
        else:
            answers[condition.id] = text
    if missing:
        raise ConfigError(
            recordings.folder(model, instrument.name),
            "",
            f"phase 2 needs {model}'s whole baseline, but {missing} of {len(conditions)} recordings are missing",
            f"record the baseline first (pytest benchmarks/test_perturbation.py --model={model}), "
            "then add --snap-perturbation-phase2",
        )
    variants = instrument.variants()
    gold_kind = instrument.data_spec.gold_kind
    label_set = instrument.label_set
    by_variant: dict[str, list[float]] = {variant.id: [] for variant in variants}
    asked: Counter[str] = Counter()
    labels: dict[str, dict[str, float]] = {}
    for condition in conditions:
        scored = instrument.score(condition, answers[condition.id])
        variant_id = "-".join(level for factor, level in condition.levels if factor in instrument.design.factors)
        asked[variant_id] += 1
        labels.setdefault(f"{condition.item}-{condition.run}-{condition.temperature}", {})[variant_id] = (
            math.nan if scored.keyed_score is None else scored.keyed_score
        )
        if scored.keyed_score is not None:
            low, high = label_set.gold_interval(gold_kind, instrument.samples[condition.item].gold)
            by_variant[variant_id].append(float(label_set.errors([scored.keyed_score], [low], [high])[0]))
    matrix = np.array([[row.get(v.id, math.nan) for v in variants] for row in labels.values()])
    consistency = float(modal_share(matrix).mean())
    best: BestVariant | None = None
    best_key = -math.inf
    # Ties go to the alphabetically first variant id, the rule the analysis's report follows.
    for variant in sorted(variants, key=lambda v: v.id):
        errors = by_variant[variant.id]
        accuracy = mse_accuracy(errors, label_set.max_error(gold_kind)) if errors else None
        index = variant_index(accuracy, len(errors), asked[variant.id], consistency)
        key = index if rule == "weighted_index" else answered_accuracy(accuracy, len(errors), asked[variant.id])
        if best is None or key > best_key:
            best = BestVariant(variant, index, accuracy, consistency, len(errors), asked[variant.id])
            best_key = key
    assert best is not None  # a design has at least one variant
    return best


def task_kind(path: Path, config: ConfigFiles) -> InstrumentKind:
    """The instrument of the classification task written in ``path``, as the registry keeps instruments: named and
    titled from the file, built for a config (a mistake in it is a ConfigError now, at collection)."""
    task = read_task(path, config)

    def build(wanted: ConfigFiles) -> Instrument:
        # The design read above serves the same config: the file and its data are read once.
        return TaskInstrument(wanted, task if wanted == config else read_task(path, wanted))

    return InstrumentKind(task.name, task.title, TaskInstrument, build)
