"""What a session asks: its models (with their catalogue facts, and a baseline's), its instruments, each one's
selection and conditions, and the runs that decide the gate; built once from the settings and the run's paths.

A problem the user can fix (an unknown model, a selection that leaves nothing, a config mistake) is a
:class:`~snap_bench.session.settings.UsageProblem` naming the fix, raised before anything is asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from snap_bench.asking import model_facts
from snap_bench.asking.endpoints import EndpointProblem, Endpoints, NotRecorded, not_recorded
from snap_bench.design.config import ConfigError
from snap_bench.design.models import ModelRegistry, ModelSpec, load_models
from snap_bench.design.serving import serving_of
from snap_bench.design.shards import in_shard
from snap_bench.design.temperatures import DEFAULT
from snap_bench.instruments import Instrument, Selection, registered
from snap_bench.judging.gate import Gate
from snap_bench.observations.case import Case
from snap_bench.observations.observation import Condition, at_provider_default
from snap_bench.recordings.state import Recordings
from snap_bench.session import servings
from snap_bench.session.scope import (
    InstrumentFiles,
    RunPaths,
    checked_other_yaml_files,
    instrument_file_paths,
    marked_instruments,
    not_asked_instruments,
)
from snap_bench.session.settings import SessionSettings, UsageProblem

if TYPE_CHECKING:
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.run_planner import GatePlan
    from snap_bench.judging.verdicts import ThresholdConfig


@dataclasses.dataclass(frozen=True)
class HandedOver:
    """What a process that runs a part of the session takes from the one that planned it (an xdist worker from the
    controller): the catalogue facts read once, and the runs planned once."""

    facts: Mapping[str, model_facts.ModelFacts] | None = None
    planned_runs: int | None = None


class SessionPlan:
    """The session's models, instruments and conditions (see the module's docstring)."""

    def __init__(self, options: SessionSettings) -> None:
        self.options = options
        self.active = False
        self.registry: ModelRegistry | None = None
        self.models: list[ModelSpec] = []
        self.facts: dict[str, model_facts.ModelFacts] = {}
        self.recordings = Recordings(options.cassette_dir)
        self.baseline: BaselineSpec | None = None
        self._instruments: dict[str, Instrument] = {}
        self.instrument_files = InstrumentFiles(options.config)  # written in YAML under the run's paths
        self._thresholds: dict[str, ThresholdConfig] = {}
        # Instruments of the run that the selection options leave no condition (by choice) -> why.
        self.not_asked: dict[str, str] = {}
        # YAML files under the run's paths that are no instrument file, named once in the summary.
        self.not_instrument_files: list[Path] = []
        self.in_run: dict[str, Path | None] = {}  # the run's instruments -> the file that runs each
        self.unrecorded: list[NotRecorded] = []  # offline, what a model has no recording of (not run)
        self._gate_plan: GatePlan | None = None  # the runs that decide the gate (snap_bench.judging.run_planner)

    def activate(
        self,
        paths: RunPaths,
        *,
        handed: HandedOver | None = None,
        runs_tests: bool = True,
        read_catalogues: bool = True,
    ) -> None:
        """Read the config and choose the models; a problem is a UsageProblem, not a traceback."""
        if self.active:
            return
        handed = handed or HandedOver()
        try:
            self.registry = load_models(self.options.config)
            for path in instrument_file_paths(paths, self.options.cassette_dir):
                self.instrument_files.add(path)
            follow_up = self.options.follow_up | self.instrument_files.follow_up(self.options.instrument_options)
            self.options = dataclasses.replace(self.options, follow_up=follow_up)
            resolved = resolve_models(self.registry, self.options, self.recordings, handed.facts, read_catalogues)
            self.models, self.facts, self.baseline = list(resolved.models), dict(resolved.facts), resolved.baseline
            for name in self.active_instruments():
                self.instrument(name)
            check_save_baseline(self.options.save_baseline, self.models)
        except (ConfigError, ValueError) as error:
            raise UsageProblem(str(error)) from None
        for name in self.active_instruments():
            self.selection(self.instrument(name))  # a typo in --snap-items is a usage error now
        self.not_asked = self._check_selection(paths)
        if self.options.plan_runs:  # --snap-runs=auto; a worker takes the controller's plan
            runs = handed.planned_runs or auto_runs(self)
            self.options = dataclasses.replace(self.options, runs=int(runs))
        if runs_tests:
            asked = {name: source for name, source in self.in_run.items() if name not in self.not_asked}
            plans = Endpoints(self.models, self.recordings, self.options).plans()
            try:
                self.unrecorded = not_recorded(self.models, plans, self.recordings, asked)
            except EndpointProblem as error:
                raise UsageProblem(str(error)) from None
        if self.options.follow_up:
            # A follow-up stage reads the recordings now, so a missing baseline is a usage error
            # before anything runs, not a collection error in every worker.
            for name in self.active_instruments():
                self.cases(name)
        self.active = True

    def gate_plan(self) -> GatePlan | None:
        """The runs that decide the gate against the baseline (None without one); planned once."""
        if self._gate_plan is None and self.baseline is not None:
            self._gate_plan = plan_gate(self, self.baseline)
        return self._gate_plan

    def _check_selection(self, paths: RunPaths) -> dict[str, str]:
        """What the run would silently not measure is a usage error; instruments left out by choice, named."""
        skip = self.options.cassette_dir
        self.not_instrument_files = checked_other_yaml_files(paths, skip)
        self.in_run = {**marked_instruments(paths, registered(), skip), **self.instrument_files.sources()}
        return not_asked_instruments(self.in_run, self.instrument, self.selection)

    def at_provider_default(self, model: str) -> bool:
        """Whether ``model`` is asked without a temperature: its endpoint would drop one, or
        --snap-temperatures=default asks every model so."""
        facts = self.facts.get(model)
        return self.options.temperatures == [DEFAULT] or (facts is not None and facts.temperature_ignored is not None)

    def price_source(self, model: str) -> str:
        """Where ``model``'s price comes from, for the dry run's estimate."""
        serving = serving_of(model)  # a serving is priced as its base's entry
        entry = serving.base if serving is not None else model
        configured = self.registry.models.get(entry) if self.registry is not None else None
        return model_facts.price_source(self.facts.get(model), configured)

    def active_instruments(self) -> list[str]:
        """The instruments this session may run: every registered one (a test module picks its own) and every
        instrument file (questionnaire or task) under the run's paths."""
        return [*registered(), *self.instrument_files.kinds]

    def instrument(self, name: str) -> Instrument:
        if name not in self._instruments:
            known = {**registered(), **self.instrument_files.kinds}
            if name not in known:
                raise UsageProblem(f"unknown instrument {name!r} in an `instrument` marker; known: {', '.join(known)}")
            try:
                instrument = known[name](self.options.config)
            except ConfigError as error:
                raise UsageProblem(str(error)) from None
            instrument.read_options(self.options.instrument_options)
            self._instruments[name] = instrument
        return self._instruments[name]

    def selection(self, instrument: Instrument) -> Selection:
        others = [self.instrument(name) for name in self.active_instruments() if name != instrument.name]
        return self.options.selection(instrument, others)

    def cases(self, instrument_name: str) -> list[Case]:
        instrument = self.instrument(instrument_name)
        selection = self.selection(instrument)
        unrecorded = {left.model for left in self.unrecorded if left.instrument == instrument_name}
        try:
            cases = [
                Case(model.name, instrument_name, condition)
                for model in self.models
                if model.name not in unrecorded
                for condition in self.model_conditions(instrument, model.name, selection)
            ]
            return [case for case in cases if in_shard(case.id, self.options.shard)]  # --snap-shard
        except ConfigError as error:
            raise UsageProblem(str(error)) from None

    def model_conditions(self, instrument: Instrument, model: str, selection: Selection) -> list[Condition]:
        conditions = instrument.conditions_for(model, selection, self.recordings)
        return at_provider_default(conditions) if self.at_provider_default(model) else conditions

    def conditions_of(self, model: str) -> Iterator[tuple[Instrument, Condition]]:
        """Every condition the session asks ``model``, with its instrument."""
        for name in self.active_instruments():
            instrument = self.instrument(name)
            yield from ((instrument, case.condition) for case in self.cases(name) if case.model == model)

    def thresholds(self, instrument: str) -> ThresholdConfig:
        if instrument not in self._thresholds:
            self._thresholds[instrument] = thresholds_of(self.instrument(instrument), self.options)
        return self._thresholds[instrument]

    @property
    def instruments(self) -> dict[str, Instrument]:
        """The instruments built so far (each on first use), by name."""
        return dict(self._instruments)


@dataclasses.dataclass(frozen=True)
class ResolvedModels:
    """The session's models, each entry as it is asked (--snap-logprobs and the catalogue's price applied, once),
    the catalogue facts they were resolved with, and the baseline (a replayed baseline model is one of the models)."""

    models: tuple[ModelSpec, ...]
    facts: Mapping[str, model_facts.ModelFacts]
    baseline: BaselineSpec | None


def resolve_models(
    registry: ModelRegistry,
    options: SessionSettings,
    recordings: Recordings,
    handed: Mapping[str, model_facts.ModelFacts] | None = None,
    read_catalogues: bool = True,
) -> ResolvedModels:
    """The one place a session's models are resolved: --model's (or the pilot's, or every recorded model), and the
    model --baseline replays, looked up in ``registry``; their catalogue facts (``handed`` by the process that read
    them, else read where ``read_catalogues`` and a key allow, else recorded beside the cassettes); each entry
    built once from them. Nothing changes an entry after this."""
    # Each model with provider or effort levels becomes its servings, before the baseline model is added: that one
    # is replayed as its entry stands, the one reference of every serving. Their facts are read per serving, so
    # each serving's recordings keep the catalogue entry they were asked with.
    chosen = servings.expanded(choose_models(registry, options, recordings), options)
    baseline = None
    if options.baseline:
        known = (registry, recordings, chosen, options.rootdir, options.gate)
        baseline, chosen = baseline_of(options.baseline, *known)
    if handed is not None:
        facts = dict(handed)
    else:
        facts = model_facts.gather_facts(chosen, options.rootdir, options.cassette_dir, read=read_catalogues)
    servings.check_efforts(chosen, registry, facts, options)
    logprobs = options.top_logprobs  # --snap-logprobs wins over each entry's `logprobs`
    models = tuple(
        model_facts.with_catalogue_price(
            dataclasses.replace(model, top_logprobs=logprobs) if logprobs else model, facts.get(model.name)
        )
        for model in chosen
    )
    return ResolvedModels(models, facts, baseline)


def choose_models(registry: ModelRegistry, options: SessionSettings, recordings: Recordings) -> list[ModelSpec]:
    """--model's models, the pilot's under --snap-mode=pilot, else every model with recordings (a serving of a
    models.yaml entry, ``m@groq``, is known by its base's entry)."""
    if options.models:
        return _resolve(registry, options.models)
    if options.mode == "pilot":
        if not registry.pilot:
            raise ConfigError(registry.source, "pilot", "no pilot models", "list model names under pilot:")
        return registry.resolve(list(registry.pilot))
    known = [name for name in recordings.models() if name in registry.models or servings.serving_model(registry, name)]
    if not known:
        raise UsageProblem(
            f"no --model given and no recordings under {options.cassette_dir}: "
            f"name a model with --model (known: {', '.join(sorted(registry.models))})"
        )
    return _resolve(registry, known)


def _resolve(registry: ModelRegistry, names: list[str]) -> list[ModelSpec]:
    """``names`` looked up in ``registry``, a serving's by its base's entry."""
    found = {name: servings.serving_model(registry, name) for name in names}
    entries = iter(registry.resolve([name for name in names if found[name] is None]))
    return [found[name] or next(entries) for name in names]


def baseline_of(
    value: str, registry: ModelRegistry, recordings: Recordings, models: list[ModelSpec], root: Path, gate: Gate
) -> tuple[BaselineSpec, list[ModelSpec]]:
    """--baseline parsed (a relative path below the project ``root``), and the run's models with a baseline
    model that is replayed from its recordings appended, like any other model; a ValueError where ``gate``
    follows checks the baseline cannot give."""
    from snap_bench.judging.baseline import parse_baseline

    baseline = parse_baseline(value, sorted(registry.models), recordings.models(), root)
    if baseline.saved is not None and (gate.drift or gate.items):
        # Drift and item changes pair each condition's answers; a saved analysis holds figures only, so the
        # gate would follow checks that are never made.
        raise ValueError(
            f"--snap-gate={gate.option_value()} with --baseline={value}: drift and items compare each condition's "
            "answers, which a saved analysis.json does not hold. Fix: gate against a baseline file "
            "(--snap-save-baseline) or a model with recordings, or leave drift and items out of --snap-gate"
        )
    replayed = baseline.saved is None and not baseline.observations
    if replayed and baseline.model not in [m.name for m in models]:
        return baseline, [*models, registry.models[baseline.model]]
    return baseline, models


def thresholds_of(instrument: Instrument, options: SessionSettings) -> ThresholdConfig:
    """The instrument's thresholds: thresholds.yaml's section, its own file's, the options' overrides; a
    problem is a usage error."""
    from snap_bench.analysis.metric_specs import SHARED_METRICS
    from snap_bench.judging.verdicts import load_thresholds

    try:
        specs = {**SHARED_METRICS, **instrument.metrics}
        overrides, own = options.threshold_overrides, instrument.thresholds_section()
        return load_thresholds(options.config, instrument.name, overrides, options.judge, specs, own)
    except ConfigError as error:
        raise UsageProblem(str(error)) from None


def check_save_baseline(save: str | None, models: list[ModelSpec]) -> None:
    """A baseline file holds one model: a path without {model} for several is a ValueError naming the fix."""
    if save and "{model}" not in save and len(models) > 1:
        raise ValueError(
            f"--snap-save-baseline={save}: a baseline file holds one model, and this session runs "
            f"{len(models)} ({', '.join(m.name for m in models)}). Fix: put {{model}} in the path "
            "(e.g. baselines/{model}.json) or choose one --model"
        )


def plan_gate(session: SessionPlan, baseline: BaselineSpec) -> GatePlan:
    """The runs that decide the gate against ``baseline`` for an unchanged model (snap_bench.judging.run_planner),
    from its answers to the cells the run asks: a baseline file's rows, or every recorded run of a replayed model."""
    from snap_bench.analysis.planner import recorded_runs_of
    from snap_bench.judging.run_planner import gate_plan, planned_runs

    new = [model.name for model in session.models if model.name != baseline.model]
    asked: dict[str, list[Condition]] = {}
    for name in session.in_run:
        if new and name not in session.not_asked:
            instrument = session.instrument(name)
            asked[name] = session.model_conditions(instrument, new[0], session.selection(instrument))
    if baseline.observations:
        cells = {(name, condition.cell) for name, conditions in asked.items() for condition in conditions}
        answers = [row for row in baseline.observations if (row.instrument, row.cell) in cells]
    else:

        def at_runs(name: str, runs: int) -> list[Condition]:
            instrument = session.instrument(name)
            selection = dataclasses.replace(session.selection(instrument), runs=runs)
            return session.model_conditions(instrument, baseline.model, selection)

        instruments = {name: session.instrument(name) for name in asked}
        answers = recorded_runs_of(baseline.model, asked, instruments, at_runs, session.options.cassette_dir)
    options = session.options
    planned = planned_runs([condition for conditions in asked.values() for condition in conditions])
    judged = {name: session.instrument(name) for name in asked}
    return gate_plan(baseline, answers, judged, session.thresholds, options.gate, planned, options.seed)


def auto_runs(session: SessionPlan) -> int:
    """--snap-runs=auto: the runs the plan names, or a usage problem naming why no number decides the gate."""
    from snap_bench.judging.run_planner import auto_runs as planned

    found = session.gate_plan()
    if found is None:
        raise UsageProblem("--snap-runs=auto needs --baseline: nothing to plan from")
    runs, problem = planned(found)
    if runs is None:
        raise UsageProblem(problem)
    return runs
