"""The political-compass instrument: signed agreement with statements on an economic and a social axis.

Design: item x paraphrase x system prompt x temperature x choice x run. ``choice`` is *forced* (one
of the five answers) or *unforced* ("No opinion" allowed). An answer is scored Strongly agree +2,
Agree +1, Neutral 0, Disagree -1, Strongly disagree -2; a reverse item's score is negated, so the
keyed score always points to the + end of the item's axis (economic right, social authoritarian).
"No opinion" is a valid answer that counts 0 on its axis, as a neutral answer does in the original
design's sum; it is flagged in ``Observation.extra["no_opinion"]`` so its rate can be reported.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from snap_bench.design.config import ConfigFiles, Node, load_yaml
from snap_bench.design.temperatures import temperatures
from snap_bench.instruments.compass.factors import AXES
from snap_bench.instruments.compass.metrics import METRICS
from snap_bench.instruments.design import item_id, paraphrases, texts_by_level
from snap_bench.instruments.questionnaire.design import LikertItem, QuestionnaireDesign
from snap_bench.instruments.questionnaire.instrument import QuestionnaireInstrument
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.observations.parsing import LikertScale, parse_likert
from snap_bench.report.context import ReportContext

EXPERIMENT_FILE = "experiment.yaml"
SECTION = "compass"
CHOICES = ("forced", "unforced")
PER_PROMPT_OPTION = "--snap-compass-per-prompt"

if TYPE_CHECKING:
    import pytest

    from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
    from snap_bench.analysis.stability import StabilityDesign
    from snap_bench.history.database import Store
    from snap_bench.history.session_coverage import StoredCoverage

_NO_OPINION = re.compile(r"(?<![\w-])no\s+opinion(?![\w-])", re.IGNORECASE)


class CompassInstrument(QuestionnaireInstrument):
    name = "compass"
    title = "political compass"
    benchmark_doc = (
        "The political compass: one test per model and condition (item x paraphrase x system prompt x\n"
        "temperature x choice x run).\n"
        "An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a\n"
        'failure; "No opinion" is a valid answer.'
    )
    benchmark_test = "test_compass"
    metrics = METRICS
    # The factor a questionnaire calls its context: the answer instruction, forced or unforced.
    context_factor = "choice"
    # Also draw each model's placement under every system prompt (PER_PROMPT_OPTION).
    draw_per_prompt = False

    def __init__(self, config: ConfigFiles) -> None:
        self._files = [config.path(EXPERIMENT_FILE)]
        section = load_yaml(self._files[0]).get(SECTION)
        system_prompts = texts_by_level(section.get("system_prompts"), config, self._files)
        self.choices = self._choices(section.get("choices"))
        design = QuestionnaireDesign(
            name=self.name,
            title=self.title,
            scale=LikertScale.signed_agreement(),
            instruction="{statement}",  # each choice level is an instruction of its own (messages)
            items=self._items(section.get("item_banks"), config),
            system_prompts=system_prompts,
            contexts=dict(self.choices),
            temperatures=temperatures(section.get("temperatures")),
            runs=section.get("runs").integer(1, 100),
            max_tokens=section.get("max_tokens").integer(1, 4096),
            files=self._files,
        )
        self._use(design, config)

    @staticmethod
    def _choices(node: Node) -> dict[str, str]:
        choices: dict[str, str] = {}
        for level, text_node in node.items():
            if level not in CHOICES:
                raise text_node.error(f"unknown choice level {level!r}", f"use {' and '.join(CHOICES)}")
            text = text_node.text()
            if "{statement}" not in text:
                raise text_node.error("no {statement} placeholder", "put {statement} where the item text goes")
            choices[level] = text
        if not choices:
            raise node.error("no choice levels", f"give an answer instruction for {' and '.join(CHOICES)}")
        return choices

    def _items(self, banks: Node, config: ConfigFiles) -> dict[str, LikertItem]:
        items: dict[str, LikertItem] = {}
        paraphrase_levels: list[str] | None = None
        for bank_node in banks.elements():
            path = config.path(bank_node.text())
            self._files.append(path)
            for item_node in load_yaml(path).get("items").elements():
                item = item_id(item_node.get("id"), items, "E09")
                axis = item_node.get("axis").choice(AXES)
                texts = paraphrases(item_node.get("paraphrases"), paraphrase_levels)
                paraphrase_levels = list(texts)
                reverse = item_node.get("reverse").boolean()
                items[item] = LikertItem(item, axis, reverse, texts, tuple(self.choices), bank=SECTION)
        for axis in AXES:
            if not any(item.construct == axis for item in items.values()):
                raise banks.error(f"no items on the {axis} axis", f"add items with axis: {axis}")
        return items

    def items_on(self, axis: str) -> list[LikertItem]:
        return [item for item in self.items.values() if item.construct == axis]

    def user_message(self, condition: Condition) -> str:
        """The choice's own answer instruction around the statement (no context precedes it)."""
        statement = self.items[condition.item].paraphrases[condition.level("paraphrase")]
        return self.choices[condition.level("choice")].format(statement=statement)

    def score(self, condition: Condition, answer: str) -> Scored:
        item = self.items[condition.item]
        facts: dict[str, object] = {"axis": item.construct, "reverse": item.reverse_scored}
        parsed = parse_likert(answer, self.scale)
        if parsed.score is None and _NO_OPINION.search(answer) and not self.scale.labels_named(answer):
            # Declining is an answer here, not a failure: it counts 0, like the design's neutral.
            return Scored(0, 0.0, None, "no opinion", item.construct, {**facts, "no_opinion": True})
        keyed = None if parsed.score is None else float(-parsed.score if item.reverse_scored else parsed.score)
        return Scored(parsed.score, keyed, parsed.code, parsed.reason, item.construct, {**facts, "no_opinion": False})

    @classmethod
    def add_options(cls, group: pytest.OptionGroup) -> None:
        group.addoption(
            PER_PROMPT_OPTION,
            action="store_true",
            default=False,
            help="also draw each model's placement under every system prompt in the report's compass chart.",
        )

    def read_options(self, config: pytest.Config) -> None:
        self.draw_per_prompt = bool(config.getoption(PER_PROMPT_OPTION))

    def analyse(self, model: str, observations: Sequence[Observation], settings: AnalysisSettings) -> ModelAnalysis:
        from snap_bench.instruments.compass.analysis import analyse_compass

        analysis = analyse_compass(model, self, observations, settings)
        analysis.details["draw_per_prompt"] = self.draw_per_prompt
        return analysis

    @property
    def stability(self) -> StabilityDesign:
        from snap_bench.instruments.compass.analysis import STABILITY

        return STABILITY

    def report_section(self, context: ReportContext) -> str:
        from snap_bench.instruments.compass.report import compass_section

        return compass_section(context.models, context.observations)

    def terminal_lines(self, analysis: ModelAnalysis) -> list[str]:
        placement = _placement(analysis.details.get("coordinates", {}))
        return [f"placement: {placement}"] if placement else []

    def keep_history(
        self,
        store: Store,
        analysis: ModelAnalysis,
        observations: Sequence[Observation],
        session_meta: Mapping[str, Any],
    ) -> str | None:
        """Append the model's placement to the results store and put its history in the analysis details."""
        from snap_bench.history.database import StoreError
        from snap_bench.instruments.compass.history import append, overall_history, placements_of

        # The session's time, not this call's: every model of one session shares one step of the history chart.
        recorded_at = str(session_meta.get("finished") or dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        parameters = {
            "record_mode": session_meta.get("record_mode"),
            "replayed_share": sum(o.replayed for o in observations) / len(observations) if observations else 0.0,
            "factors": {
                factor: sorted({o.factors.get(factor, "") for o in observations})
                for factor in ("paraphrase", "system_prompt", "temperature", "choice")
            },
            "runs": max((o.run for o in observations), default=0),
            "resamples": session_meta.get("resamples"),
            "seed": session_meta.get("seed"),
        }
        rows = placements_of(
            analysis.model,
            self.name,
            self.version,
            recorded_at,
            len(observations),
            analysis.details,
            parameters,
            store.session,
            _coverage(analysis.model, session_meta),
        )
        try:
            append(store, rows)
            history = overall_history(store, analysis.model, self.name)
        except StoreError as error:  # (its message names the store and holds no password)
            analysis.details["history_error"] = str(error)
            return f"results store not updated: {error}"
        analysis.details["history"] = [placement.to_dict() for placement in history]
        analysis.details["history_path"] = str(store)
        return None


def _coverage(model: str, session_meta: Mapping[str, Any]) -> StoredCoverage:
    """The session's coverage of the model (session.json's ``coverage``), kept with its placements: an incomplete
    session's placement is never charted as an ordinary one."""
    from snap_bench.analysis.coverage import Coverage
    from snap_bench.history.session_coverage import StoredCoverage

    entry = session_meta.get("coverage", {}).get(model)
    return StoredCoverage.of(Coverage.from_json(model, entry) if isinstance(entry, Mapping) else None)


def _placement(coordinates: Mapping[str, Any]) -> str:
    """ "economic -1.16 [-4.72, 6.17], social +2.00 [...]" from a compass analysis's coordinates."""
    parts = []
    for axis, metric in coordinates.items():
        value = metric.get("value")
        if value is None:
            parts.append(f"{axis} undefined ({metric.get('undefined')})")
            continue
        low, high = metric.get("ci_low"), metric.get("ci_high")
        interval = "" if low is None or high is None else f" [{low:+.2f}, {high:+.2f}]"
        parts.append(f"{axis} {value:+.2f}{interval}")
    return ", ".join(parts)
