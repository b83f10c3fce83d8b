"""A Likert questionnaire as an instrument: one test per item x paraphrase x system prompt x temperature x
context x run, judged on the G study per temperature and the contradiction rate of each construct's
forward and reverse items.

The registry (:mod:`snap_bench.instruments`) makes the instrument of a questionnaire written in YAML; the
psychometric profile and the political compass are the packaged questionnaire files profile.yaml and
compass.yaml, read by the same reader (:func:`packaged_design`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from snap_bench.analysis.metric_specs import MetricSpec
from snap_bench.design.config import ConfigError, ConfigFiles, Node
from snap_bench.design.temperatures import temperature_level
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.instruments.design import overlaid_thresholds, selectable_names, selected
from snap_bench.instruments.questionnaire.design import QuestionnaireDesign
from snap_bench.instruments.questionnaire.metrics import METRICS
from snap_bench.instruments.questionnaire.reader import read_questionnaire
from snap_bench.instruments.questionnaire.retired import refuse_retired_files
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.observations.parsing import parse_likert
from snap_bench.report.context import ReportContext

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
    from snap_bench.analysis.stability import StabilityDesign

# The thresholds.yaml section a questionnaire's own `thresholds:` is laid over.
DEFAULT_THRESHOLDS = "questionnaire"


class QuestionnaireInstrument(Instrument):
    """A questionnaire's instrument, from its design."""

    name = "questionnaire"
    title = "questionnaire"
    metrics: ClassVar[Mapping[str, MetricSpec]] = METRICS
    # How its report section's element ids start (default: snap-NAME).
    anchor: ClassVar[str] = ""
    # The name of the factor whose levels precede the question (the compass's answer instruction: choice).
    context_factor: ClassVar[str] = "context"

    def __init__(self, config: ConfigFiles, design: QuestionnaireDesign, *, from_file: bool = True) -> None:
        """The instrument of ``design``; ``from_file``: read from a questionnaire file of the run (its thresholds
        are its own `thresholds:` over the defaults for a questionnaire), not a packaged one."""
        self.from_file = from_file
        self._use(design, config)

    def _use(self, design: QuestionnaireDesign, config: ConfigFiles) -> None:
        if design.context_factor != self.context_factor:
            raise ConfigError(
                design.files[0],
                "choices",
                f"a questionnaire of kind {design.kind} asks through `instruction` and `contexts`, not `choices`",
                "drop `choices`, or name the kind that asks through them",
            )
        self.config = config
        self.name = design.name
        self.title = design.title
        self.design = design
        self.scale = design.scale
        self.items = design.items
        self.runs = design.runs
        self.max_tokens = design.max_tokens
        self.temperatures = design.temperatures
        self.system_prompts = design.system_prompts
        self.contexts = design.contexts
        self.answer_instruction = design.instruction

    @property
    def source_files(self) -> list[Path]:
        return list(self.design.files)

    @property
    def selectable_items(self) -> list[str]:
        return selectable_names(self.items.values())

    @property
    def factor_levels(self) -> dict[str, list[str]]:
        """Every factor's levels, in design order; used for --snap-* option validation and dry runs."""
        first = next(iter(self.items.values()))
        return {
            "paraphrase": list(first.paraphrases),
            "system_prompt": list(self.system_prompts),
            "temperature": [temperature_level(t) for t in self.temperatures],
            self.context_factor: list(self.contexts),
        }

    def thresholds_section(self) -> Node | None:
        """A questionnaire file's own `thresholds:` laid over the defaults for a questionnaire; a packaged one
        (the profile, the compass) has its name's section of thresholds.yaml, with its file's own `thresholds:`
        laid over it where it has one."""
        if self.config is None or (not self.from_file and self.design.thresholds is None):
            return None
        own = self.design.thresholds or Node({}, self.design.files[0], "thresholds")
        merged = overlaid_thresholds(self.config, DEFAULT_THRESHOLDS if self.from_file else self.name, own)
        if len(self.factor_levels["paraphrase"]) < 2 and "inter_paraphrase_r" not in own.mapping().get(
            "non_inferiority", {}
        ):
            # One text per item has no inter-paraphrase r to compare: a default margin for it would leave every
            # gate of the questionnaire "not compared", so incomplete.
            merged["non_inferiority"] = {
                k: v for k, v in merged.get("non_inferiority", {}).items() if k != "inter_paraphrase_r"
            }
        return Node(merged, own.path, own.key)

    def conditions(self, selection: Selection) -> list[Condition]:
        runs = selection.runs or self.runs
        conditions: list[Condition] = []
        for item in self.items.values():
            if selection.items and not {item.id, item.construct, item.bank} & selection.items:
                continue
            # Asked with the context outside the temperature: conditions that send the same prompt
            # (every temperature and run of a cell) follow each other, so a llama.cpp server reuses
            # its prompt cache. The id keeps the design's factor order.
            for paraphrase, prompt, context, temperature in product(
                item.paraphrases, self.system_prompts, item.contexts, self.temperatures
            ):
                levels = (
                    ("paraphrase", paraphrase),
                    ("system_prompt", prompt),
                    ("temperature", temperature_level(temperature)),
                    (self.context_factor, context),
                )
                if not selected(selection, levels):
                    continue
                conditions.extend(Condition(self.name, item.id, levels, temperature, run) for run in range(1, runs + 1))
        return conditions

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        system = self.system_prompts[condition.level("system_prompt")]
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": self.user_message(condition)})
        return messages

    def user_message(self, condition: Condition) -> str:
        """The context (where the condition has one) and the instruction around the item's text."""
        statement = self.items[condition.item].paraphrases[condition.level("paraphrase")]
        question = self.answer_instruction.format(points=self.scale.high, statement=statement)
        context = self.contexts[condition.level(self.context_factor)]
        return f"{context}\n\n{question}" if context else question

    @property
    def keyed_range(self) -> tuple[float, float] | None:
        # A reversed item keys low + high - score and a signed one -score: both stay inside the scale
        # (the compass's is symmetric about 0).
        return float(self.scale.low), float(self.scale.high)

    def score(self, condition: Condition, answer: str) -> Scored:
        item = self.items[condition.item]
        parsed = parse_likert(answer, self.scale)
        keyed: float | None = None
        if parsed.score is not None:
            keyed = (
                float(self.scale.low + self.scale.high - parsed.score) if item.reverse_scored else float(parsed.score)
            )
        return Scored(parsed.score, keyed, parsed.code, parsed.reason, item.construct)

    def question(self, condition: Condition) -> str:
        return self.items[condition.item].paraphrases[condition.level("paraphrase")]

    def construct(self, condition: Condition) -> str | None:
        return self.items[condition.item].construct

    def analyse(self, model: str, observations: Sequence[Observation], settings: AnalysisSettings) -> ModelAnalysis:
        from snap_bench.instruments.questionnaire.analysis import analyse_questionnaire

        banks = {item.id: item.bank for item in self.items.values() if item.bank}
        reverse = {item.id: item.reverse_scored for item in self.items.values()}
        return analyse_questionnaire(model, self.name, observations, settings, banks, reverse, self.design.norms)

    @property
    def stability(self) -> StabilityDesign:
        from snap_bench.instruments.questionnaire.analysis import STABILITY

        return STABILITY

    def report_section(self, context: ReportContext) -> str:
        from snap_bench.instruments.questionnaire.report import questionnaire_section

        return questionnaire_section(context, self.anchor or f"snap-{self.name}")

    def terminal_lines(self, analysis: ModelAnalysis) -> list[str]:
        from snap_bench.instruments.questionnaire.norms import norms_lines

        return norms_lines(analysis.details.get("norms"))


def packaged_design(
    config: ConfigFiles, file: str, name: str, kind: str, retired_banks: Sequence[str]
) -> QuestionnaireDesign:
    """The design of a packaged questionnaire (profile.yaml, compass.yaml: a project's config/ copy replaces it),
    which must keep its name and kind; a project's copy of a file it was once read from (experiment.yaml, its
    ``retired_banks``) is refused by name."""
    refuse_retired_files(config, name, retired_banks)
    path = config.path(file)
    design = read_questionnaire(path, config)
    if design.name != name:
        raise ConfigError(path, "questionnaire", f"{file} names {design.name!r}", f"write questionnaire: {name}")
    if design.kind != kind:
        raise ConfigError(path, "kind", f"the {name} is of kind {kind}, not {design.kind}", f"write kind: {kind}")
    return design
