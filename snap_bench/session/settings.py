"""The settings a session derives from its options, ini keys and config folder (validated once, at start).

They are read from an :class:`OptionSource`: pytest's config under the plugin, a :class:`CommandLine` (an argument
list parsed by argparse against the same declarations) when a session runs without pytest. A value that cannot be
used is a :class:`UsageProblem` naming the fix (the plugin makes it pytest's usage error).

Precedence, highest first: a test's marker > the command line > the ini file > the YAML files under
config/ > the packaged defaults (snap_bench/design/defaults/, file by file) > built-in defaults.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from snap_bench.asking.settings import AskingSettings
from snap_bench.design.config import ConfigFiles
from snap_bench.design.project import project_root, root_of_run_paths
from snap_bench.design.temperatures import DEFAULT
from snap_bench.history.address import StoreAddress, StoreAddressError, store_address
from snap_bench.history.database import INSTALL_DRIVER, postgres_driver_installed
from snap_bench.instruments import instrument_kinds, registered
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.judging.gate import Gate
from snap_bench.session.option_values import AUTO_RUNS, BATCH_MODES, comma_list, positive_float, positive_int


class UsageProblem(Exception):
    """A setting that cannot be used, with the fix in its message (pytest's usage error under the plugin)."""


class InvocationParams(Protocol):
    @property
    def dir(self) -> Path: ...


class OptionSource(Protocol):
    """Where the settings are read from: pytest's config has this shape, and so has a CommandLine."""

    @property
    def args(self) -> list[str]: ...

    @property
    def invocation_params(self) -> InvocationParams: ...

    @property
    def rootpath(self) -> Path: ...

    @property
    def inipath(self) -> Path | None: ...

    def getoption(self, name: str, default: Any = ...) -> Any: ...

    def getini(self, name: str) -> Any: ...


def instrument_option_values(config: OptionSource) -> dict[str, object]:
    """The values of the instruments' own switches, by flag (the instruments read them: Instrument.read_options)."""
    return {
        option.flag: config.getoption(option.dest, False)
        for kind in instrument_kinds().values()
        for option in kind.options
    }


@dataclass(frozen=True)
class SessionSettings(AskingSettings):
    """The session's settings, from the command line and the ini file: how it asks (the fields of
    AskingSettings, which the asking side is handed as they are) and the rest."""

    config_dir: Path
    benchmarks_dir: str
    models: list[str]
    mode: str
    items: list[str]
    temperatures: list[str]
    prompts: list[str]
    runs: int | None
    # --snap-runs=auto: the runs are planned from the baseline's answers at session start (runs is None until then)
    plan_runs: bool
    # the instruments whose follow-up stage was asked for (--snap-perturbation-phase2)
    follow_up: frozenset[str]
    dry_run: bool
    shard: tuple[int, int] | None
    top_logprobs: int | None
    baseline: str | None
    # False under --snap-no-analysis: the observations are written, nothing is analysed or judged.
    analyse: bool
    # What the exit status follows (--snap-gate), parsed once.
    gate: Gate
    save_baseline: str | None
    show_unscored: bool
    json_path: Path
    # The results store: a SQLite file or a PostgreSQL URL (holding no password).
    history: StoreAddress
    threshold_overrides: dict[str, tuple[float, float]]
    judge: str | None
    resamples: int
    seed: int
    explicit: bool  # a snap-bench option was given: the session is about benchmarks
    # The instruments' own switches, by flag (--snap-compass-per-prompt).
    instrument_options: Mapping[str, object] = field(default_factory=dict)
    # The serving factors' levels (--snap-providers, --snap-efforts); empty: each entry's own
    # (snap_bench.session.servings).
    providers: tuple[str, ...] = ()
    efforts: tuple[str, ...] = ()

    @property
    def config(self) -> ConfigFiles:
        """The project's config folder over the packaged defaults (a folder it lacks, or a file, is theirs)."""
        return ConfigFiles(self.config_dir)

    @classmethod
    def from_config(cls, config: OptionSource) -> SessionSettings:
        rootdir = project_folder(config)

        def folder(option: str, ini: str) -> Path:
            value = config.getoption(option) or config.getini(ini)
            path = Path(value)
            return path if path.is_absolute() else rootdir / path

        models = [name for value in config.getoption("model") for name in comma_list(value)]
        switches = instrument_option_values(config)
        explicit_values = [
            config.getoption(name)
            for name in (
                "snap_mode",
                "snap_items",
                "snap_temperatures",
                "snap_prompts",
                "snap_runs",
                "snap_record_mode",
                "snap_concurrency",
                "snap_shard",
                "snap_batch",
                "baseline",
                "snap_providers",
                "snap_efforts",
            )
        ]
        return cls(
            rootdir=rootdir,
            config_dir=folder("snap_config", "snap_config"),
            cassette_dir=folder("snap_cassettes", "snap_cassettes"),
            out_dir=folder("snap_out", "snap_out"),
            benchmarks_dir=str(config.getini("snap_benchmarks")),
            models=list(dict.fromkeys(models)),
            mode=config.getoption("snap_mode") or "full",
            items=config.getoption("snap_items") or [],
            temperatures=config.getoption("snap_temperatures") or [],
            prompts=config.getoption("snap_prompts") or [],
            runs=_runs(config),
            plan_runs=config.getoption("snap_runs") == AUTO_RUNS,
            follow_up=frozenset(name for name, kind in registered().items() if kind.follow_up_requested(switches)),
            dry_run=bool(config.getoption("snap_dry_run")),
            record_mode=config.getoption("snap_record_mode"),
            max_attempts=config.getoption("snap_max_attempts") or _ini_int(config, "snap_max_attempts"),
            timeout_s=config.getoption("snap_timeout") or _ini_seconds(config, "snap_timeout"),
            rate_limit_per_minute=config.getoption("snap_rate_limit"),
            concurrency=config.getoption("snap_concurrency"),
            adaptive_pace=config.getoption("snap_pace", "adaptive") != "fixed",
            shard=config.getoption("snap_shard"),
            max_requests=config.getoption("snap_max_requests"),
            max_cost_usd=config.getoption("snap_max_cost"),
            top_logprobs=config.getoption("snap_logprobs"),
            baseline=config.getoption("baseline"),
            analyse=not config.getoption("snap_no_analysis"),
            gate=_gate(config),
            save_baseline=config.getoption("snap_save_baseline"),
            show_unscored=bool(config.getoption("snap_show_unscored")),
            json_path=_json_path(config, folder("snap_out", "snap_out")),
            history=_history(config, rootdir, folder("snap_out", "snap_out")),
            # Precedence: the command line wins over the ini file, which wins over thresholds.yaml.
            threshold_overrides={
                **_threshold_overrides(config.getini("snap_thresholds"), "ini snap_thresholds"),
                **_threshold_overrides(config.getoption("snap_threshold"), "--snap-threshold"),
            },
            judge=config.getoption("snap_judge"),
            resamples=config.getoption("snap_resamples") or _ini_int(config, "snap_resamples"),
            seed=config.getoption("snap_seed")
            if config.getoption("snap_seed") is not None
            else _ini_int(config, "snap_seed"),
            batch=_batch(config),
            batch_poll_s=config.getoption("snap_batch_poll") or _ini_seconds(config, "snap_batch_poll"),
            batch_timeout_s=config.getoption("snap_batch_timeout") or _ini_seconds(config, "snap_batch_timeout"),
            explicit=bool(models)
            or config.getoption("snap_dry_run")
            or any(kind.follow_up_requested(switches) for kind in instrument_kinds().values())
            or any(v is not None for v in explicit_values),
            instrument_options=switches,
            providers=tuple(config.getoption("snap_providers", None) or ()),
            efforts=tuple(config.getoption("snap_efforts", None) or ()),
        )

    def selection(self, instrument: Instrument, others: Sequence[Instrument] = ()) -> Selection:
        """The --snap-items/--snap-temperatures/--snap-prompts subset, checked against the design.

        A value must be known to ``instrument`` or to one of the ``others`` in the session (else it
        is a typo and a usage error); a value only another instrument knows selects nothing of this
        one, so ``--snap-prompts=NEU`` runs the profile's NEU conditions and no perturbation.
        """
        levels = instrument.factor_levels
        chosen: dict[str, frozenset[str]] = {}

        def known(factor: str) -> list[str]:
            found = dict.fromkeys(levels.get(factor, []))
            for other in others:
                found.update(dict.fromkeys(other.factor_levels.get(factor, [])))
            return list(found)

        if DEFAULT in self.temperatures and self.temperatures != [DEFAULT]:
            raise UsageProblem(
                f"--snap-temperatures={','.join(self.temperatures)}: 'default' (the provider's own temperature) "
                "stands alone. Fix: --snap-temperatures=default, or list temperatures only"
            )
        if self.temperatures and self.temperatures != [DEFAULT]:
            # (--snap-temperatures=default asks every condition at the provider's default: no level to select)
            chosen["temperature"] = frozenset(
                _checked(
                    "--snap-temperatures",
                    [_temperature_level(t) for t in self.temperatures],
                    known("temperature"),
                )
            )
        if self.prompts:
            chosen["system_prompt"] = frozenset(_checked("--snap-prompts", self.prompts, known("system_prompt")))
        if self.items:
            everywhere = set(instrument.selectable_items).union(*(other.selectable_items for other in others))
            _checked("--snap-items", self.items, sorted(everywhere))
        return Selection(
            items=frozenset(self.items), levels=chosen, runs=self.runs, follow_up=instrument.name in self.follow_up
        )


def project_folder(config: OptionSource) -> Path:
    """The folder the relative snap-bench folders are read from: the nearest one holding ``snap-bench.toml``
    above the run's paths or the folder pytest was started in (snap_bench.design.project); else pytest's rootdir
    where the command line (``--rootdir``, ``-c``) or an ini file at or above the run fixed it; else the rootdir
    pytest's rule gives for the run's own paths. pytest chooses its rootdir before it loads this plugin, so it
    reads the value of ``--snap-out /a/folder`` (space form) as a run path; the run's paths (``config.args``)
    are parsed with the plugin's options known."""
    invoked = Path(config.invocation_params.dir)
    paths = [Path(argument.split("::")[0]) for argument in config.args]
    run_paths = [path if path.is_absolute() else invoked / path for path in paths]
    found = project_root([*run_paths, invoked])
    if found is not None:
        return found
    if config.getoption("rootdir", None) or config.getoption("inifilename", None):
        return Path(config.rootpath)
    inipath = config.inipath
    if inipath is not None and any(start.is_relative_to(inipath.parent) for start in [*run_paths, invoked]):
        return Path(config.rootpath)
    return root_of_run_paths(invoked, run_paths)


# Which option selects on which factor, for the message that names an instrument's legal values.
SELECTING_OPTIONS = {"temperature": "--snap-temperatures", "system_prompt": "--snap-prompts"}


def empty_selection(instrument: Instrument, selection: Selection) -> tuple[str, bool] | None:
    """Why ``selection`` leaves ``instrument`` no condition, and whether that is a mistake: None when it
    leaves some. A mistake is a level the instrument has the factor for but not that level (a temperature it is
    not asked at); a choice is an option that selects on something the instrument does not have (items of
    another instrument, system prompts of a task that has none): the instrument is then not asked."""
    if instrument.conditions(selection):
        return None
    levels = instrument.factor_levels
    for factor, wanted in sorted(selection.levels.items()):
        own = levels.get(factor, [])
        option = SELECTING_OPTIONS.get(factor, factor)
        if own and not wanted & set(own):
            legal = ", ".join(level.removeprefix("t") if factor == "temperature" else level for level in own)
            return (
                f"{option} selects no condition of {instrument.name}: it is asked at {factor.replace('_', ' ')} "
                f"{legal} only. Fix: choose among those, or run the instruments that have "
                f"{', '.join(sorted(wanted))} alone",
                True,
            )
    items = ", ".join(sorted(selection.items))
    why = [f"--snap-items={items} names none of its items" if selection.items else ""]
    why += [
        f"{SELECTING_OPTIONS.get(factor, factor)}: it has no {factor.replace('_', ' ')}"
        for factor in sorted(selection.levels)
        if not levels.get(factor)
    ]
    return (
        f"{instrument.name} was not asked: {'; '.join(w for w in why if w) or 'the selection leaves it nothing'}",
        False,
    )


def _temperature_level(value: str) -> str:
    try:
        return f"t{float(value):g}"
    except ValueError:
        raise UsageProblem(f"--snap-temperatures: {value!r} is not a number") from None


def _checked(option: str, wanted: list[str], known: list[str]) -> list[str]:
    unknown = [value for value in wanted if value not in known]
    if unknown:
        raise UsageProblem(f"{option}: unknown {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    return wanted


def _gate(config: OptionSource) -> Gate:
    gate: Gate | None = config.getoption("snap_gate")
    baseline = config.getoption("baseline")
    if gate is None:
        return Gate(thresholds=True, baseline=bool(baseline))
    if gate.needs_baseline and not baseline:
        raise UsageProblem(
            f"--snap-gate={gate.option_value()}: the exit status would follow a comparison with a baseline, but no "
            "--baseline was given. Fix: add --baseline=MODEL or --baseline=PATH, or use --snap-gate=thresholds."
        )
    return gate


def _runs(config: OptionSource) -> int | None:
    """--snap-runs as a number (None: each instrument's own, or planned later for ``auto``). ``auto`` plans from
    a baseline's answers, so it needs --baseline."""
    value: int | str | None = config.getoption("snap_runs")
    if value != AUTO_RUNS:
        return value if isinstance(value, int) else None
    if not config.getoption("baseline"):
        raise UsageProblem(
            "--snap-runs=auto plans the runs from a baseline's recorded answers, and no --baseline was given. "
            "Fix: add --baseline=MODEL (a model with recordings) or --baseline=PATH (a baseline file), or give a "
            "number: --snap-runs=3"
        )
    return None


def _batch(config: OptionSource) -> str | None:
    """--snap-batch, else ini snap_batch: "wait" or "submit", None for off. It cannot share a session with a
    request or cost budget: a batch is submitted whole, so neither could hold it to its limit."""
    value = config.getoption("snap_batch") or str(config.getini("snap_batch") or "off")
    if value not in BATCH_MODES:
        raise UsageProblem(f"ini snap_batch = {value!r} is not one of: {', '.join(BATCH_MODES)}")
    if value == "off":
        return None
    if config.getoption("snap_max_requests") or config.getoption("snap_max_cost"):
        raise UsageProblem(
            "--snap-batch with --snap-max-requests or --snap-max-cost: a batch is submitted whole, so a budget "
            "could not hold it. Fix: leave the budget out (check the price first with --snap-dry-run), or ask "
            "without --snap-batch"
        )
    return value


def _history(config: OptionSource, rootdir: Path, out_dir: Path) -> StoreAddress:
    """--snap-history, then ini snap_history (a path relative to rootdir), then <snap-out>/history.sqlite; a
    path or a postgresql:// URL. A misspelt scheme or a password in the URL is a usage error naming the fix."""
    # A command-line path is relative to where the session was started (pytest's invocation dir; run_session's root).
    invoked = Path(config.invocation_params.dir)
    value, source, base = config.getoption("snap_history"), "--snap-history", invoked
    if not value:
        value, source, base = str(config.getini("snap_history")), "ini snap_history", rootdir
    if not value:
        return StoreAddress(path=out_dir / "history.sqlite")
    try:
        address = store_address(value, base, source)
    except StoreAddressError as error:
        raise UsageProblem(str(error)) from None
    if address.is_postgres and not postgres_driver_installed():
        raise UsageProblem(
            f"{source}: {address} is a PostgreSQL store, and its driver (psycopg) is not installed. "
            f"Fix: {INSTALL_DRIVER}, or give a file path for a SQLite store"
        )
    return address


def _json_path(config: OptionSource, out_dir: Path) -> Path:
    value = config.getoption("snap_json")
    # relative to where the session was started, as every other path of its command line
    return (Path(config.invocation_params.dir) / value).resolve() if value else out_dir / "analysis.json"


def _threshold_overrides(values: list[str], source: str) -> dict[str, tuple[float, float]]:
    overrides: dict[str, tuple[float, float]] = {}
    for value in values:
        metric, _, bounds = value.partition("=")
        minimum, _, target = bounds.partition(":")
        try:
            overrides[metric.strip()] = (float(minimum), float(target))
        except ValueError:
            raise UsageProblem(f"{source}: {value!r} is not METRIC=MINIMUM:TARGET, e.g. icc2_1=0.5:0.7") from None
    return overrides


def _ini_seconds(config: OptionSource, name: str) -> float:
    value = str(config.getini(name))
    try:
        return positive_float(value)
    except argparse.ArgumentTypeError:
        raise UsageProblem(
            f"ini {name} = {value!r} is not a number of seconds > 0. Set it to the seconds one request may "
            f"take, e.g. `-o {name}=120` or `{name} = 120` under [pytest] in pytest.ini."
        ) from None


def check_out_dir(path: Path) -> None:
    """A usage error now, naming the fix, when the output folder cannot be created or written.

    Checked without creating anything: the nearest existing folder on the way must be a writable folder.
    """
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.is_dir() and os.access(existing, os.W_OK | os.X_OK):
        return
    why = "it is not a folder" if not existing.is_dir() else "it is not writable"
    raise UsageProblem(
        f"--snap-out / ini snap_out: the output folder {path} cannot be created ({existing}: {why}). "
        f"Choose another folder with --snap-out=DIR, or remove what is in the way."
    )


def _ini_int(config: OptionSource, name: str) -> int:
    value = str(config.getini(name))
    try:
        return positive_int(value)
    except argparse.ArgumentTypeError:
        raise UsageProblem(f"ini {name} = {value!r} is not a whole number >= 1") from None
