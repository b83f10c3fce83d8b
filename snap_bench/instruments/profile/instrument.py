"""The psychometric-profile instrument (SNAP): moral and Big Five Likert items.

Design: item x paraphrase x system prompt x temperature x context x run, where an item bank lists
the contexts that apply to it (the moral dilemma context is for moral items only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING

from snap_bench.design.config import ConfigFiles, Node, load_yaml
from snap_bench.design.temperatures import temperature_level, temperatures
from snap_bench.instruments.base import Instrument, Scored, Selection
from snap_bench.instruments.design import item_id, paraphrases, selectable_names, selected, texts_by_level
from snap_bench.instruments.profile.metrics import METRICS
from snap_bench.observations.observation import Condition, Observation
from snap_bench.observations.parsing import LikertScale, parse_likert
from snap_bench.report.context import ReportContext

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
    from snap_bench.analysis.stability import StabilityDesign

EXPERIMENT_FILE = "experiment.yaml"
SECTION = "profile"


@dataclass(frozen=True)
class LikertItem:
    id: str
    bank: str
    construct: str
    reverse_scored: bool
    paraphrases: dict[str, str]
    contexts: tuple[str, ...]


class ProfileInstrument(Instrument):
    name = "profile"
    title = "psychometric profile"
    benchmark_doc = (
        "The psychometric profile: one test per model and condition (item x paraphrase x system prompt x\n"
        "temperature x context x run).\n"
        "An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a\n"
        "failure."
    )
    benchmark_test = "test_likert"
    metrics = METRICS

    def __init__(self, config: ConfigFiles) -> None:
        self.config = config
        self._files = [config.path(EXPERIMENT_FILE)]
        section = load_yaml(self._files[0]).get(SECTION)
        points = section.get("likert_points", 5).integer(5, 7)
        if points not in (5, 7):
            raise section.get("likert_points").error(f"{points} points has no scale labels", "use 5 or 7")
        self.scale = LikertScale.agreement(points)
        self.runs = section.get("runs").integer(1, 100)
        self.max_tokens = section.get("max_tokens").integer(1, 4096)
        self.temperatures = temperatures(section.get("temperatures"))
        self.system_prompts = texts_by_level(section.get("system_prompts"), config, self._files)
        self.contexts = texts_by_level(section.get("contexts"), config, self._files)
        instruction = section.get("answer_instruction")
        if "{statement}" not in instruction.text():
            raise instruction.error("no {statement} placeholder", "put {statement} where the item text goes")
        self.answer_instruction = instruction.text()
        self.items = self._items(section.get("item_banks"), config)

    def _items(self, banks: Node, config: ConfigFiles) -> dict[str, LikertItem]:
        items: dict[str, LikertItem] = {}
        paraphrase_levels: list[str] | None = None
        for bank_node in banks.elements():
            path = config.path(bank_node.text())
            self._files.append(path)
            bank = load_yaml(path)
            bank_name = bank.get("bank").text()
            contexts_node = bank.get("contexts")
            contexts = tuple(contexts_node.unique_texts())
            for element, level in zip(contexts_node.elements(), contexts, strict=True):
                if level not in self.contexts:
                    raise element.error(
                        f"unknown context {level!r}",
                        f"use a context defined in {EXPERIMENT_FILE}: {', '.join(self.contexts)}",
                    )
            for item_node in bank.get("items").elements():
                item = item_id(item_node.get("id"), items, "M06")
                texts = paraphrases(item_node.get("paraphrases"), paraphrase_levels)
                paraphrase_levels = list(texts)
                items[item] = LikertItem(
                    id=item,
                    bank=bank_name,
                    construct=item_node.get("construct").text(),
                    reverse_scored=item_node.get("reverse_scored").boolean(),
                    paraphrases=texts,
                    contexts=contexts,
                )
        if not items:
            raise banks.error("no items", "list at least one item bank with items")
        return items

    @property
    def source_files(self) -> list[Path]:
        return list(self._files)

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
            "context": list(self.contexts),
        }

    def conditions(self, selection: Selection) -> list[Condition]:
        runs = selection.runs or self.runs
        conditions: list[Condition] = []
        for item in self.items.values():
            if (
                selection.items
                and item.id not in selection.items
                and item.construct not in selection.items
                and item.bank not in selection.items
            ):
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
                    ("context", context),
                )
                if not selected(selection, levels):
                    continue
                conditions.extend(Condition(self.name, item.id, levels, temperature, run) for run in range(1, runs + 1))
        return conditions

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        item = self.items[condition.item]
        statement = item.paraphrases[condition.level("paraphrase")]
        question = self.answer_instruction.format(points=self.scale.high, statement=statement)
        context = self.contexts[condition.level("context")]
        user = f"{context}\n\n{question}" if context else question
        system = self.system_prompts[condition.level("system_prompt")]
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": user})
        return messages

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
        from snap_bench.instruments.profile.analysis import analyse_profile

        banks = {item.id: item.bank for item in self.items.values()}
        reverse = {item.id: item.reverse_scored for item in self.items.values()}
        return analyse_profile(model, self.name, observations, settings, banks, reverse)

    @property
    def stability(self) -> StabilityDesign:
        from snap_bench.instruments.profile.analysis import STABILITY

        return STABILITY

    def report_section(self, context: ReportContext) -> str:
        from snap_bench.instruments.profile.report import profile_section

        return profile_section(context)
