"""The psychometric-profile instrument (SNAP): moral and Big Five Likert items, a questionnaire whose
design is read from experiment.yaml and its item banks.

Design: item x paraphrase x system prompt x temperature x context x run, where an item bank lists
the contexts that apply to it (the moral dilemma context is for moral items only).
"""

from __future__ import annotations

from snap_bench.design.config import ConfigFiles, Node, load_yaml
from snap_bench.design.temperatures import temperatures
from snap_bench.instruments.design import item_id, paraphrases, texts_by_level
from snap_bench.instruments.profile.metrics import METRICS
from snap_bench.instruments.questionnaire.design import LikertItem, QuestionnaireDesign
from snap_bench.instruments.questionnaire.instrument import QuestionnaireInstrument
from snap_bench.observations.parsing import LikertScale

EXPERIMENT_FILE = "experiment.yaml"
SECTION = "profile"


class ProfileInstrument(QuestionnaireInstrument):
    name = "profile"
    title = "psychometric profile"
    benchmark_doc = (
        "The psychometric profile: one test per model and condition (item x paraphrase x system prompt x\n"
        "temperature x context x run).\n"
        "An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a\n"
        "failure."
    )
    benchmark_test = "test_likert"
    anchor = "snap"  # the report's ids as they were before the profile shared its section with questionnaires
    metrics = METRICS

    def __init__(self, config: ConfigFiles) -> None:
        self._files = [config.path(EXPERIMENT_FILE)]
        section = load_yaml(self._files[0]).get(SECTION)
        points = section.get("likert_points", 5).integer(5, 7)
        if points not in (5, 7):
            raise section.get("likert_points").error(f"{points} points has no scale labels", "use 5 or 7")
        system_prompts = texts_by_level(section.get("system_prompts"), config, self._files)
        self.contexts = texts_by_level(section.get("contexts"), config, self._files)
        instruction = section.get("answer_instruction")
        if "{statement}" not in instruction.text():
            raise instruction.error("no {statement} placeholder", "put {statement} where the item text goes")
        design = QuestionnaireDesign(
            name=self.name,
            title=self.title,
            scale=LikertScale.agreement(points),
            instruction=instruction.text(),
            items=self._items(section.get("item_banks"), config),
            system_prompts=system_prompts,
            contexts=self.contexts,
            temperatures=temperatures(section.get("temperatures")),
            runs=section.get("runs").integer(1, 100),
            max_tokens=section.get("max_tokens").integer(1, 4096),
            files=self._files,
        )
        self._use(design, config)

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
