"""What every instrument provides; everything else in snap-bench is shared and instrument-agnostic.

An instrument lives in ``snap_bench/instruments/<name>/``: its design (items, factors, rendering,
parsing), its metrics (a :class:`~snap_bench.analysis.metric_specs.MetricSpec` each), its analysis, its report
section and anything else only it needs. The core calls it only through the hooks declared here, and names
what each stage asks of it as a protocol of that stage's own (the wire's ``Asked``, the asking's ``Answered``,
the analysis' ``Analyser``, the judging's ``Compared``, the report's ``Titled``, ``Sectioned`` and ``Narrated``):
no stage below the instruments imports them, not even for typing, so the contract is read where it is used.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from snap_bench.analysis.metric_specs import MetricSpec
from snap_bench.design.config import ConfigFiles, Node
from snap_bench.observations.observation import Condition, Observation, Scored
from snap_bench.report.context import ReportContext

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
    from snap_bench.analysis.stability import StabilityDesign
    from snap_bench.history.database import Store
    from snap_bench.recordings.state import Recordings

# The thin test module that runs an instrument (benchmarks/test_<name>.py; `snap-bench init` writes it).
BENCHMARK_MODULE = '''"""{doc}"""

import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("{name}")


def {test}(case: Case, ask: Ask) -> None:
    ask(case)
'''


@dataclass(frozen=True)
class InstrumentOption:
    """A command-line switch (on or off) of an instrument's own; its value is read by its flag."""

    flag: str  # "--snap-compass-per-prompt"
    help: str
    aliases: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        """The attribute pytest keeps the value under (``snap_compass_per_prompt``)."""
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Selection:
    """A subset of the design asked for on the command line; empty means everything.

    ``levels`` maps a factor name to the level labels to keep (``{"system_prompt": {"NEU"}}``).
    """

    items: frozenset[str] = frozenset()
    levels: dict[str, frozenset[str]] = field(default_factory=dict)
    runs: int | None = None
    # Ask the stage of the design that depends on each model's recorded answers as well
    # (perturbation: the few-shot phase 2 on the model's best baseline variant).
    follow_up: bool = False


class Instrument(ABC):
    """An instrument knows its items and factors, renders a condition, scores an answer, analyses a
    model's observations and draws its own part of the report."""

    # The name of the `instrument` marker, the cassette folder, the thresholds.yaml section and the key of
    # analysis.json's `instruments` (a class's own, or an instance's: one built from a file is named by it).
    name: str
    # How the report and the terminal title it ("psychometric profile").
    title: str
    # Every metric the instrument reports under a name of its own; shared ones come from metric_specs.
    metrics: ClassVar[Mapping[str, MetricSpec]] = {}
    max_tokens: int
    # Its test module's docstring and test function (BENCHMARK_MODULE); by default the title and test_<name>.
    benchmark_doc: ClassVar[str] = ""
    benchmark_test: ClassVar[str] = ""
    # The config the design was read from, where the instrument keeps it: the version then orders its files
    # by their place in the design, so that a project's copy of a packaged file changes nothing but content.
    config: ConfigFiles | None = None

    @abstractmethod
    def __init__(self, config: ConfigFiles) -> None:
        """Read the design from ``config`` (``config.path("profile.yaml")``: the project's file, else the
        packaged one); a problem is a ConfigError naming file, key and fix."""

    @classmethod
    def benchmark_module(cls) -> str:
        """The text of the test module in benchmarks/ that runs this instrument, one test per condition."""
        doc = cls.benchmark_doc or f"{cls.title[:1].upper()}{cls.title[1:]}: one test per model and condition."
        return BENCHMARK_MODULE.format(doc=doc, name=cls.name, test=cls.benchmark_test or f"test_{cls.name}")

    # -- options -----------------------------------------------------------------------------------

    # Switches of this instrument's own (``--snap-<name>-...``), declared as values: the plugin turns them into
    # pytest options, and a session run without pytest hands their values over as a mapping (flag -> value).
    options: ClassVar[tuple[InstrumentOption, ...]] = ()

    def read_options(self, values: Mapping[str, object]) -> None:
        """Take this instrument's own option values (flag -> value; called once per session)."""
        return None

    @classmethod
    def follow_up_requested(cls, values: Mapping[str, object]) -> bool:
        """Whether the stage of the design that depends on each model's recorded answers is asked for
        (such an option also activates the plugin, as any snap-bench option does)."""
        return False

    def thresholds_section(self) -> Node | None:
        """The instrument's thresholds where they are not its name's section of thresholds.yaml (a
        questionnaire file carries its own); None: that section."""
        return None

    # -- analysis and report -------------------------------------------------------------------------

    @abstractmethod
    def analyse(self, model: str, observations: Sequence[Observation], settings: AnalysisSettings) -> ModelAnalysis:
        """One model's figures (imported on use: pandas and the stats load on the controller at session end)."""

    @property
    def stability(self) -> StabilityDesign | None:
        """The G study design of the judged ``dependability`` (None: the instrument reports none); the
        gate refits it on each model's answers (imported on use, as the analysis is)."""
        return None

    def report_section(self, context: ReportContext) -> str:
        """The instrument's own HTML after the shared verdict and metric tables (escape every string)."""
        return ""

    def terminal_lines(self, analysis: ModelAnalysis) -> list[str]:
        """Lines under the model's verdict at the end of a run (e.g. where the model stands)."""
        return []

    def keep_history(
        self,
        store: Store,
        analysis: ModelAnalysis,
        observations: Sequence[Observation],
        session_meta: Mapping[str, Any],
    ) -> str | None:
        """Append the analysis to the results store (SQLite or PostgreSQL, ``store.session`` the session's id);
        a problem (:class:`~snap_bench.history.database.StoreError`) is returned as a line, not raised."""
        return None

    @abstractmethod
    def conditions(self, selection: Selection) -> list[Condition]:
        """The conditions of the design in a stable order, restricted to ``selection``."""

    def conditions_for(self, model: str, selection: Selection, recordings: Recordings) -> list[Condition]:
        """The conditions asked of ``model``: the same for every model, unless a stage of the design
        depends on the model's earlier answers (read from ``recordings``)."""
        return self.conditions(selection)

    def audit(self, models: list[str], selection: Selection, recordings: Recordings) -> dict[str, Any] | None:
        """What the instrument chose from the data while building the conditions (JSON), or None.

        Written to <out>/<instrument>-audit.json at the end of a session, so a reader can check it."""
        return None

    @property
    def factor_levels(self) -> dict[str, list[str]]:
        """Every factor's levels in design order, for the option checks and the dry run; none by default."""
        return {}

    @property
    def selectable_items(self) -> list[str]:
        """What --snap-items may name for this instrument (item ids, and constructs or banks if it has any)."""
        return []

    @abstractmethod
    def messages(self, condition: Condition) -> list[dict[str, str]]:
        """The chat messages that ask ``condition``."""

    @abstractmethod
    def score(self, condition: Condition, answer: str) -> Scored:
        """Parse ``answer`` to a score (or a code) for ``condition``."""

    def question(self, condition: Condition) -> str:
        """The part of the prompt that is this condition's own (the item's text); the report shows it per row."""
        return self.messages(condition)[-1]["content"]

    @abstractmethod
    def construct(self, condition: Condition) -> str | None:
        """The construct the condition's item measures, where the instrument has constructs."""

    @property
    def keyed_range(self) -> tuple[float, float] | None:
        """The lowest and highest keyed score an answer can have, where the instrument knows them: no mean
        difference of keyed scores (drift) can leave +-(high - low). None where it does not."""
        return None

    @property
    @abstractmethod
    def source_files(self) -> list[Path]:
        """The files the design is read from; their digest is the instrument's version."""

    @property
    def version(self) -> str:
        """A short digest of the design's files (each instrument's own, so editing one instrument leaves the
        others' versions alone), recorded with every run."""
        digest = hashlib.sha256()
        config = self.config
        for path in sorted(self.source_files, key=config.relative if config is not None else None):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()[:12]


@dataclass(frozen=True)
class InstrumentKind:
    """One entry of the instrument registry: what is known of an instrument before it is built (its name and
    title, and the class whose class-level hooks it has: its metrics, its own options, its follow-up stage,
    its test module) and the factory that builds it from a config (``kind(config)``). A registered class is its
    own factory; an instrument file's factory builds the class's instance from the design read from the file."""

    name: str
    title: str
    hooks: type[Instrument]
    build: Callable[[ConfigFiles], Instrument]

    @classmethod
    def of_class(cls, instrument: type[Instrument]) -> InstrumentKind:
        return cls(instrument.name, instrument.title, instrument, instrument)

    def __call__(self, config: ConfigFiles) -> Instrument:
        return self.build(config)

    @property
    def metrics(self) -> Mapping[str, MetricSpec]:
        return self.hooks.metrics

    @property
    def options(self) -> tuple[InstrumentOption, ...]:
        return self.hooks.options

    def follow_up_requested(self, values: Mapping[str, object]) -> bool:
        return self.hooks.follow_up_requested(values)

    def benchmark_module(self) -> str:
        return self.hooks.benchmark_module()
