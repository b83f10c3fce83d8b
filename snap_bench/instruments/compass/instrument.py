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
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments.base import InstrumentOption
from snap_bench.instruments.compass.factors import AXES
from snap_bench.instruments.compass.metrics import METRICS
from snap_bench.instruments.questionnaire.design import LikertItem, QuestionnaireDesign
from snap_bench.instruments.questionnaire.instrument import QuestionnaireInstrument, packaged_design
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.observations.parsing import parse_likert
from snap_bench.report.context import ReportContext

COMPASS_FILE = "compass.yaml"
# The kind of questionnaire a compass file names (kind: compass).
COMPASS = "compass"
# Where the compass's items were once read from (a project's own copy is refused, naming where they go now).
RETIRED_BANKS = ("items/compass.yaml",)
CHOICES = ("forced", "unforced")
PER_PROMPT_OPTION = "--snap-compass-per-prompt"

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
    from snap_bench.analysis.stability import StabilityDesign
    from snap_bench.history.database import Store
    from snap_bench.history.session_coverage import StoredCoverage
    from snap_bench.history.session_subset import StoredSubset

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

    def __init__(
        self, config: ConfigFiles, design: QuestionnaireDesign | None = None, *, from_file: bool = True
    ) -> None:
        """The packaged compass (compass.yaml), or the one ``design`` a questionnaire file of kind compass holds."""
        if design is None:
            design, from_file = packaged_design(config, COMPASS_FILE, "compass", COMPASS, RETIRED_BANKS), False
        super().__init__(config, design, from_file=from_file)

    def _use(self, design: QuestionnaireDesign, config: ConfigFiles) -> None:
        """A compass's design: its answer instructions (the choice factor) and its two axes."""
        where = design.files[0]
        unknown = sorted(set(design.contexts) - set(CHOICES))
        if unknown:
            raise ConfigError(where, "choices", f"unknown choice level {unknown[0]!r}", f"use {' and '.join(CHOICES)}")
        for item in design.items.values():
            if item.construct not in AXES:
                raise ConfigError(
                    where,
                    f"items[{item.id}].construct",
                    f"{item.construct!r} is not an axis",
                    f"use {' or '.join(AXES)}",
                )
        for axis in AXES:
            if not any(item.construct == axis for item in design.items.values()):
                raise ConfigError(where, "items", f"no items on the {axis} axis", f"add items with construct: {axis}")
        # The items form one bank named after the compass (--snap-items=compass names them all).
        items = {key: item if item.bank else replace(item, bank=design.name) for key, item in design.items.items()}
        super()._use(replace(design, items=items), config)
        self.choices: dict[str, str] = {level: str(text) for level, text in design.contexts.items()}

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

    options = (
        InstrumentOption(
            PER_PROMPT_OPTION,
            help="also draw each model's placement under every system prompt in the report's compass chart.",
        ),
    )

    def read_options(self, values: Mapping[str, object]) -> None:
        self.draw_per_prompt = bool(values.get(PER_PROMPT_OPTION))

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
            _subset(analysis.model, self.name, session_meta),
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


def _subset(model: str, instrument: str, session_meta: Mapping[str, Any]) -> StoredSubset:
    """What of the model's design the session set out to ask (session.json's ``subsets``), kept with its
    placements: a subset's placement is never charted as the whole design's."""
    from snap_bench.analysis.design_subset import subsets_of
    from snap_bench.history.session_subset import StoredSubset

    subsets = subsets_of(session_meta)
    return StoredSubset() if subsets is None else StoredSubset.of(subsets.get((model, instrument)))


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
