"""The values the command-line options take, each parsed by a ``type=`` function that names the legal values
(an argparse error: pytest's usage error; snap_bench.session.options declares the options)."""

from __future__ import annotations

import argparse
import math

from snap_bench.design.entry_values import REASONING_EFFORTS
from snap_bench.design.serving import is_provider_level
from snap_bench.judging.gate import Gate
from snap_bench.recordings.cassettes import RecordMode


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


# --snap-runs=auto: the runs the planner finds from the baseline's answers (snap_bench.judging.run_planner).
AUTO_RUNS = "auto"


def runs_option(value: str) -> int | str:
    """--snap-runs: a whole number >= 1, or ``auto``."""
    if value.strip().lower() == AUTO_RUNS:
        return AUTO_RUNS
    try:
        return positive_int(value)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is neither a whole number >= 1 nor 'auto' (the runs that decide the gate, with --baseline)"
        ) from None


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


BATCH_MODES = ("wait", "submit", "off")


def batch_mode(value: str) -> str:
    """--snap-batch's value: wait (the default when given bare), submit, or off."""
    if value not in BATCH_MODES:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a batch mode; use one of: {', '.join(BATCH_MODES)} (write --snap-batch=submit; a "
            "path right after a bare --snap-batch is read as its value: put the path first)"
        )
    return value


def gate_value(value: str) -> Gate:
    try:
        return Gate.parse(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def provider_levels(value: str) -> list[str]:
    """--snap-providers: provider names as OpenRouter writes them (a slug, its variant, or a name), each once."""
    levels = list(dict.fromkeys(comma_list(value)))
    wrong = [level for level in levels if not is_provider_level(level)]
    if wrong or not levels:
        raise argparse.ArgumentTypeError(
            f"{', '.join(map(repr, wrong or [value]))} is not a provider's name. Fix: name providers as OpenRouter "
            "does, by slug (deepinfra, deepinfra/turbo) or name (DeepInfra), comma-separated"
        )
    return levels


def effort_levels(value: str) -> list[str]:
    """--snap-efforts: reasoning efforts as OpenRouter names them, each once."""
    levels = list(dict.fromkeys(comma_list(value)))
    wrong = [level for level in levels if level not in REASONING_EFFORTS]
    if wrong or not levels:
        raise argparse.ArgumentTypeError(
            f"{', '.join(map(repr, wrong or [value]))} is not a reasoning effort. Fix: use "
            f"{', '.join(REASONING_EFFORTS)}, comma-separated (e.g. --snap-efforts=low,high)"
        )
    return levels
