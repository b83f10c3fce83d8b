"""The command-line options and ini keys of snap-bench, in one group with one prefix, declared to anything with
argparse's ``addoption`` / ``addini`` shape: the plugin hands pytest's option group and parser over (nothing here
imports pytest). Precedence, highest first: a test's marker > the command line > the ini file (pytest.ini,
pyproject.toml [tool.pytest.ini_options]) > the YAML files under config/ > the packaged ones > built-in defaults
(the settings a session derives from them are in snap_bench.session.settings).
"""

from __future__ import annotations

from typing import Any, Protocol

from snap_bench.instruments import instrument_kinds
from snap_bench.judging.gate import GATE_VALUES
from snap_bench.session.option_values import (
    batch_mode,
    comma_list,
    effort_levels,
    gate_value,
    positive_float,
    positive_int,
    provider_levels,
    record_mode,
    runs_option,
    shard,
    top_logprobs,
)

MODES = ("full", "pilot")
PACES = ("adaptive", "fixed")


class OptionGroup(Protocol):
    """Where options are declared (pytest's option group has this shape, as argparse's parser has)."""

    def addoption(self, *flags: str, **attributes: Any) -> None: ...


class IniKeys(Protocol):
    """Where ini keys are declared (pytest's parser has this shape)."""

    def addini(self, name: str, help: str, type: Any = None, default: Any = None) -> None: ...


GROUP = ("snap-bench", "snap-bench: LLM consistency benchmark")


def declare_options(group: OptionGroup, ini: IniKeys) -> None:
    """Every option of snap-bench into ``group``, every ini key into ``ini``."""
    _design_options(group)
    _asking_options(group)
    _limit_options(group)
    _judging_options(group)
    # Options of an instrument's own (--snap-perturbation-phase2, --snap-compass-per-prompt): switches.
    declared: set[str] = set()
    for kind in instrument_kinds().values():
        for option in kind.options:
            if option.flag not in declared:
                declared.add(option.flag)
                group.addoption(
                    option.flag, *option.aliases, dest=option.dest, action="store_true", default=False, help=option.help
                )
    _ini_keys(ini)


def _design_options(group: OptionGroup) -> None:
    """Which models, and which part of the design."""
    group.addoption(
        "--model",
        action="append",
        default=[],
        metavar="NAME",
        help="model(s) of models.yaml (the packaged list and config/models.yaml); repeat or comma-separate. "
        "Default: the models that have recordings.",
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
        help="only these temperatures, comma-separated (e.g. 0,0.5), or 'default': no temperature sent, the "
        "provider's own (level tdefault). Default: all configured.",
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
        type=runs_option,
        default=None,
        metavar="N|auto",
        help="repetitions per cell instead of each instrument's own runs; 'auto' (with --baseline): the runs at "
        "which the gate passes an unchanged model 95%% of the time, simulated from the baseline's recorded answers "
        "(docs/gate.md). Default: %(default)r.",
    )
    group.addoption(
        "--snap-providers",
        type=provider_levels,
        default=None,
        metavar="PROVIDERS",
        help="ask each model through each of these providers in turn, comma-separated (OpenRouter's slugs or "
        "names, e.g. deepinfra,groq,together): each is pinned (provider.only, fallbacks off) and asked as a model "
        "of its own, MODEL@PROVIDER, with its own recordings; an answer another provider served is an API error "
        "(-3). OpenRouter entries only. Default: each entry's providers: (none: routed as OpenRouter likes).",
    )
    group.addoption(
        "--snap-efforts",
        type=effort_levels,
        default=None,
        metavar="EFFORTS",
        help="ask each model at each of these reasoning efforts, comma-separated (xhigh, high, medium, low, "
        "minimal, none), each asked as a model of its own, MODEL@effort-LEVEL (crossed with --snap-providers); "
        "for models that take an effort only. Default: each entry's reasoning_efforts: (none: its reasoning:).",
    )


def _asking_options(group: OptionGroup) -> None:
    """How the conditions are asked: the dry run, recordings, where things are read and written."""
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
        "--snap-batch",
        type=batch_mode,
        nargs="?",
        const="wait",
        default=None,
        metavar="MODE",
        help="ask every unrecorded condition of a model whose endpoint has a batch API (OpenAI, OpenRouter, "
        "Anthropic) through it, one batch per model, before any test asks, at the batch price; the batches are "
        "kept under cassettes/MODEL/.batches/ and any later run collects them. wait: wait until they end "
        "(--snap-batch-timeout); submit: submit and end (exit status 6 while they are pending); off. "
        "Default: ini snap_batch or off.",
    )
    group.addoption(
        "--snap-batch-poll",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="seconds between two looks at the pending batches. Default: ini snap_batch_poll or 30.",
    )
    group.addoption(
        "--snap-batch-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="the most --snap-batch waits for its batches; then the run goes on without what is pending "
        "(exit status 6) and a later run collects it. Default: ini snap_batch_timeout or 86400 (24 h).",
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
        help="the project's config folder: a file in it (a questionnaire's file, thresholds.yaml, prompts/, data/) "
        "replaces the packaged one, its models.yaml extends the packaged list. Default: ini snap_config or config/.",
    )
    group.addoption(
        "--snap-cassettes",
        default=None,
        metavar="DIR",
        help="folder of recordings. Default: ini snap_cassettes or cassettes/.",
    )


def _limit_options(group: OptionGroup) -> None:
    """How hard the endpoints are asked: attempts, rate, concurrency, shards, budgets, log-probabilities."""
    group.addoption(
        "--snap-max-attempts",
        type=positive_int,
        default=None,
        metavar="N",
        help="attempts per request before an API error (-3) is recorded (with --snap-pace=adaptive, up to 5 "
        "refusals at the rate limit, 429, are not counted). Default: ini or 5.",
    )
    group.addoption(
        "--snap-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="seconds one request may take before it times out and is asked again (like a 5xx, within "
        "--snap-max-attempts). Default: ini snap_timeout or 120.",
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
        "--snap-pace",
        choices=PACES,
        default="adaptive",
        metavar="PACE",
        help="adaptive: each model's request pace and in-flight window follow the provider's rate-limit headers "
        "and 429s, within --snap-concurrency and --snap-rate-limit; fixed: --snap-concurrency requests in flight "
        "and only --snap-rate-limit's pace. Default: %(default)r.",
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


def _judging_options(group: OptionGroup) -> None:
    """What is judged and against what: the baseline, the gate, thresholds, the bootstrap, the outputs."""
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
        type=gate_value,
        default=None,
        metavar="WHAT",
        help="what the exit status follows, a comma list of: thresholds (thresholds.yaml), baseline (the "
        "comparison with --baseline), both, drift (whether a construct's position moved from the baseline's) and "
        "items (whether an item's answers moved beyond the run-to-run noise); checks outside it are reported as "
        f"'ungated'. E.g. {', '.join(GATE_VALUES)}. Default: thresholds, both when --baseline is given.",
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
        metavar="PATH_OR_URL",
        help="the results store every session appends its judged figures to: a SQLite file, or a PostgreSQL "
        "database as postgresql://USER@HOST:PORT/DATABASE (the password from PGPASSWORD, ~/.pgpass or "
        "?password_env=VARIABLE, never in the URL; pip install 'snap-bench[postgres]'). "
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


def _ini_keys(parser: IniKeys) -> None:
    # "The project root": the nearest folder holding snap-bench.toml above the run's paths, else pytest's rootdir
    # (snap_bench.design.project).
    parser.addini("snap_thresholds", "threshold overrides, one METRIC=MIN:TARGET per line", type="linelist", default=[])
    parser.addini("snap_resamples", "bootstrap resamples per interval", default="1000")
    parser.addini("snap_seed", "seed of the bootstrap", default="20261122")
    parser.addini(
        "snap_config",
        "the project's config folder, over the packaged defaults (relative to the project root)",
        default="config",
    )
    parser.addini("snap_cassettes", "folder of recordings (relative to the project root)", default="cassettes")
    parser.addini("snap_out", "folder for session outputs (relative to the project root)", default="reports")
    parser.addini(
        "snap_history",
        "results store kept across sessions: a SQLite file (relative to the project root) or a postgresql:// URL",
        default="",
    )
    parser.addini(
        "snap_benchmarks", "folder of the benchmark tests; running it activates snap-bench", default="benchmarks"
    )
    parser.addini("snap_max_attempts", "attempts per request before an API error is recorded", default="5")
    parser.addini("snap_timeout", "seconds before one request times out", default="120")
    parser.addini("snap_batch", "ask unrecorded conditions through batch APIs: wait, submit or off", default="off")
    parser.addini("snap_batch_poll", "seconds between two looks at pending batches", default="30")
    parser.addini("snap_batch_timeout", "the most seconds --snap-batch waits for its batches", default="86400")
