"""Command-line options and ini keys, and the settings a session derives from them.

Precedence, highest first: a test's marker > the command line > the ini file (pytest.ini,
pyproject.toml [tool.pytest.ini_options]) > the YAML files under config/ > built-in defaults.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from snap_bench.instruments import registered
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.judging.exit_status import GATE_MODES
from snap_bench.recordings.cassettes import RecordMode

MODES = ("full", "pilot")


def comma_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def record_mode(value: str) -> RecordMode:
    try:
        return RecordMode(value)
    except ValueError:
        legal = ", ".join(mode.value for mode in RecordMode)
        raise argparse.ArgumentTypeError(f"{value!r} is not a record mode; use one of: {legal}") from None


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number >= 1")
    return number


def top_logprobs(value: str) -> int:
    number = positive_int(value)
    if number > 20:
        raise argparse.ArgumentTypeError(f"{value!r} is more than 20 (the most an OpenAI-compatible endpoint gives)")
    return number


def positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    # nan compares false with everything, so a nan limit would silently be no limit at all.
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a finite number > 0; give a positive number (leave the option out for no limit)"
        )
    return number


def shard(value: str) -> tuple[int, int]:
    """K/N with 1 <= K <= N: which part of the conditions to run."""
    part, _, count = value.partition("/")
    try:
        k, n = int(part), int(count)
    except ValueError:
        k, n = 0, 0
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{value!r} is not a part K/N with 1 <= K <= N; give e.g. 1/4")
    return k, n


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("snap-bench", "snap-bench: LLM consistency benchmark")
    group.addoption(
        "--model",
        action="append",
        default=[],
        metavar="NAME",
        help="model(s) from config/models.yaml; repeat or comma-separate. Default: the models that have recordings.",
    )
    group.addoption(
        "--snap-mode",
        choices=MODES,
        default=None,
        metavar="MODE",
        help="full: every configured model; pilot: the pilot models of models.yaml (when --model "
        "is not given). Default: full.",
    )
    group.addoption(
        "--snap-items",
        type=comma_list,
        default=None,
        metavar="IDS",
        help="only these item ids, constructs or banks, comma-separated (e.g. M01,P03 or moral). Default: all.",
    )
    group.addoption(
        "--snap-temperatures",
        type=comma_list,
        default=None,
        metavar="TEMPS",
        help="only these temperatures, comma-separated (e.g. 0,0.5). Default: all configured.",
    )
    group.addoption(
        "--snap-prompts",
        type=comma_list,
        default=None,
        metavar="PROMPTS",
        help="only these system prompts, comma-separated (e.g. NEU,DIR). Default: all configured.",
    )
    group.addoption(
        "--snap-runs",
        type=positive_int,
        default=None,
        metavar="N",
        help="repetitions per cell instead of experiment.yaml's runs. Default: %(default)r.",
    )
    group.addoption(
        "--snap-dry-run",
        action="store_true",
        default=False,
        help="print the conditions per model and in total (and an estimated cost), then stop. "
        "Needs neither a key nor recordings.",
    )
    group.addoption(
        "--snap-record-mode",
        type=record_mode,
        default=None,
        metavar="MODE",
        help="none | once | new_episodes | all. Default: once when the model can be asked "
        "(key set, or a local server), none otherwise.",
    )
    group.addoption(
        "--snap-out",
        default=None,
        metavar="DIR",
        help="folder for observations.jsonl/.csv and session.json. Default: ini snap_out or reports/.",
    )
    group.addoption(
        "--snap-config",
        default=None,
        metavar="DIR",
        help="folder holding models.yaml, experiment.yaml, items/, prompts/. Default: ini snap_config or config/.",
    )
    group.addoption(
        "--snap-cassettes",
        default=None,
        metavar="DIR",
        help="folder of recordings. Default: ini snap_cassettes or cassettes/.",
    )
    group.addoption(
        "--snap-max-attempts",
        type=positive_int,
        default=None,
        metavar="N",
        help="attempts per request before an API error (-3) is recorded. Default: ini or 5.",
    )
    group.addoption(
        "--snap-rate-limit",
        type=positive_float,
        default=None,
        metavar="RPM",
        help="requests per minute per model, shared by all workers; overrides models.yaml's "
        "rate_limit_per_minute. Default: %(default)r (no limit unless models.yaml sets one).",
    )
    group.addoption(
        "--snap-concurrency",
        type=positive_int,
        default=None,
        metavar="N",
        help="requests in flight at once per model, shared by all workers: each process asks ahead for the "
        "unrecorded conditions it is about to run; overrides models.yaml's concurrency. Default: one per process.",
    )
    group.addoption(
        "--snap-shard",
        type=shard,
        default=None,
        metavar="K/N",
        help="run only part K of N of each model's conditions (stable, disjoint parts by a hash of the test id), "
        "e.g. one job of a CI matrix each. Default: all.",
    )
    group.addoption(
        "--snap-max-requests",
        type=positive_int,
        default=None,
        metavar="N",
        help="stop asking (replay goes on) after N requests in this session. Default: no limit.",
    )
    group.addoption(
        "--snap-max-cost",
        type=positive_float,
        default=None,
        metavar="USD",
        help="stop asking after this many dollars, by models.yaml prices. Default: no limit.",
    )
    group.addoption(
        "--snap-logprobs",
        type=top_logprobs,
        default=None,
        metavar="N",
        help="ask every model for the N (1-20) most likely alternatives of each answer token, where the "
        "endpoint gives them; it changes the request, so recordings made without it are re-asked. "
        "Default: each entry's `logprobs` in models.yaml (off unless set).",
    )
    group.addoption(
        "--baseline",
        default=None,
        metavar="MODEL|FILE",
        help="gate against a baseline: a model with recordings (replayed and compared on the same "
        "conditions), a baseline file (--snap-save-baseline), or a saved analysis.json (PATH#MODEL picks one "
        "model of several). Default: no baseline.",
    )
    group.addoption(
        "--snap-gate",
        choices=GATE_MODES,
        default=None,
        metavar="WHAT",
        help="what the exit status follows: thresholds (thresholds.yaml), baseline (the comparison with "
        "--baseline) or both; checks outside it are reported as 'ungated'. Default: thresholds, "
        "both when --baseline is given.",
    )
    group.addoption(
        "--snap-save-baseline",
        default=None,
        metavar="PATH",
        help="write each model's per-condition results for every instrument to PATH (a model's name in "
        "it, {model}, makes one file per model), for a later --baseline=PATH. Default: not written.",
    )
    group.addoption(
        "--snap-show-unscored",
        action="store_true",
        default=False,
        help="list every unscored answer (condition, code, reason) in the terminal summary. Default: counted only.",
    )
    group.addoption(
        "--snap-no-analysis",
        action="store_true",
        default=False,
        help="record and write the observations, but skip the analysis and threshold checks "
        "(e.g. while recording a model in parts).",
    )
    group.addoption(
        "--snap-json",
        default=None,
        metavar="PATH",
        help="where to write analysis.json. Default: <snap-out>/analysis.json.",
    )
    group.addoption(
        "--snap-history",
        default=None,
        metavar="PATH",
        help="SQLite results store to which every session appends the results an instrument keeps over time. "
        "Default: ini snap_history or <snap-out>/history.sqlite.",
    )
    group.addoption(
        "--snap-threshold",
        action="append",
        default=[],
        metavar="METRIC=MIN:TARGET",
        help="override one threshold of thresholds.yaml, e.g. icc2_1=0.5:0.7 (repeatable).",
    )
    group.addoption(
        "--snap-judge",
        choices=("point", "ci"),
        default=None,
        metavar="RULE",
        help="judge the point estimate or the pessimistic 95%% interval bound. "
        "Default: thresholds.yaml's judge (point).",
    )
    group.addoption(
        "--snap-resamples",
        type=positive_int,
        default=None,
        metavar="N",
        help="bootstrap resamples per interval. Default: ini snap_resamples or 1000.",
    )
    group.addoption(
        "--snap-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed of the bootstrap, for reproducible intervals. Default: ini snap_seed.",
    )
    # Options of an instrument's own (--snap-perturbation-phase2, --snap-compass-per-prompt).
    for kind in registered().values():
        kind.add_options(group)
    parser.addini("snap_thresholds", "threshold overrides, one METRIC=MIN:TARGET per line", type="linelist", default=[])
    parser.addini("snap_resamples", "bootstrap resamples per interval", default="1000")
    parser.addini("snap_seed", "seed of the bootstrap", default="20261122")
    parser.addini("snap_config", "folder holding the YAML config (relative to rootdir)", default="config")
    parser.addini("snap_cassettes", "folder of recordings (relative to rootdir)", default="cassettes")
    parser.addini("snap_out", "folder for session outputs (relative to rootdir)", default="reports")
    parser.addini("snap_history", "SQLite results store kept across sessions (relative to rootdir)", default="")
    parser.addini(
        "snap_benchmarks", "folder of the benchmark tests; running it activates snap-bench", default="benchmarks"
    )
    parser.addini("snap_max_attempts", "attempts per request before an API error is recorded", default="5")
    parser.addini("snap_timeout", "seconds before one request times out", default="120")


@dataclass(frozen=True)
class SessionOptions:
    rootdir: Path
    config_dir: Path
    cassette_dir: Path
    out_dir: Path
    benchmarks_dir: str
    models: list[str]
    mode: str
    items: list[str]
    temperatures: list[str]
    prompts: list[str]
    runs: int | None
    # the instruments whose follow-up stage was asked for (--snap-perturbation-phase2)
    follow_up: frozenset[str]
    dry_run: bool
    record_mode: RecordMode | None
    max_attempts: int
    timeout_s: float
    rate_limit_per_minute: float | None
    concurrency: int | None
    shard: tuple[int, int] | None
    max_requests: int | None
    max_cost_usd: float | None
    top_logprobs: int | None
    baseline: str | None
    # False under --snap-no-analysis: the observations are written, nothing is analysed or judged.
    analyse: bool
    # What the exit status follows (--snap-gate): thresholds, baseline or both.
    gate: str
    save_baseline: str | None
    show_unscored: bool
    json_path: Path
    history_path: Path
    threshold_overrides: dict[str, tuple[float, float]]
    judge: str | None
    resamples: int
    seed: int
    explicit: bool  # a snap-bench option was given: the session is about benchmarks

    @classmethod
    def from_config(cls, config: pytest.Config) -> SessionOptions:
        rootdir = Path(config.rootpath)

        def folder(option: str, ini: str) -> Path:
            value = config.getoption(option) or config.getini(ini)
            path = Path(value)
            return path if path.is_absolute() else rootdir / path

        models = [name for value in config.getoption("model") for name in comma_list(value)]
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
                "baseline",
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
            runs=config.getoption("snap_runs"),
            follow_up=frozenset(name for name, kind in registered().items() if kind.follow_up_requested(config)),
            dry_run=bool(config.getoption("snap_dry_run")),
            record_mode=config.getoption("snap_record_mode"),
            max_attempts=config.getoption("snap_max_attempts") or _ini_int(config, "snap_max_attempts"),
            timeout_s=_ini_seconds(config, "snap_timeout"),
            rate_limit_per_minute=config.getoption("snap_rate_limit"),
            concurrency=config.getoption("snap_concurrency"),
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
            history_path=_history_path(config, rootdir, folder("snap_out", "snap_out")),
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
            explicit=bool(models)
            or config.getoption("snap_dry_run")
            or any(kind.follow_up_requested(config) for kind in registered().values())
            or any(v is not None for v in explicit_values),
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

        if self.temperatures:
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


def _temperature_level(value: str) -> str:
    try:
        return f"t{float(value):g}"
    except ValueError:
        raise pytest.UsageError(f"--snap-temperatures: {value!r} is not a number") from None


def _checked(option: str, wanted: list[str], known: list[str]) -> list[str]:
    unknown = [value for value in wanted if value not in known]
    if unknown:
        raise pytest.UsageError(f"{option}: unknown {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    return wanted


def _gate(config: pytest.Config) -> str:
    mode: str | None = config.getoption("snap_gate")
    baseline = config.getoption("baseline")
    if mode is None:
        return "both" if baseline else "thresholds"
    if mode != "thresholds" and not baseline:
        raise pytest.UsageError(
            f"--snap-gate={mode}: the exit status would follow a comparison with a baseline, but no --baseline "
            "was given. Fix: add --baseline=MODEL or --baseline=PATH, or use --snap-gate=thresholds."
        )
    return mode


def _history_path(config: pytest.Config, rootdir: Path, out_dir: Path) -> Path:
    """--snap-history, then ini snap_history (relative to rootdir), then <snap-out>/history.sqlite."""
    value = config.getoption("snap_history")
    if value:
        return Path(value).resolve()
    ini = str(config.getini("snap_history"))
    return (rootdir / ini).resolve() if ini else out_dir / "history.sqlite"


def _json_path(config: pytest.Config, out_dir: Path) -> Path:
    value = config.getoption("snap_json")
    return Path(value).resolve() if value else out_dir / "analysis.json"


def _threshold_overrides(values: list[str], source: str) -> dict[str, tuple[float, float]]:
    overrides: dict[str, tuple[float, float]] = {}
    for value in values:
        metric, _, bounds = value.partition("=")
        minimum, _, target = bounds.partition(":")
        try:
            overrides[metric.strip()] = (float(minimum), float(target))
        except ValueError:
            raise pytest.UsageError(f"{source}: {value!r} is not METRIC=MINIMUM:TARGET, e.g. icc2_1=0.5:0.7") from None
    return overrides


def _ini_seconds(config: pytest.Config, name: str) -> float:
    value = str(config.getini(name))
    try:
        return positive_float(value)
    except argparse.ArgumentTypeError:
        raise pytest.UsageError(
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
    raise pytest.UsageError(
        f"--snap-out / ini snap_out: the output folder {path} cannot be created ({existing}: {why}). "
        f"Choose another folder with --snap-out=DIR, or remove what is in the way."
    )


def _ini_int(config: pytest.Config, name: str) -> int:
    value = str(config.getini(name))
    try:
        return positive_int(value)
    except argparse.ArgumentTypeError:
        raise pytest.UsageError(f"ini {name} = {value!r} is not a whole number >= 1") from None
