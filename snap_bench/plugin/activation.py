"""Whether a pytest session is a benchmark session, whether it only looks, and which models it asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.design.config import ConfigError
from snap_bench.design.models import ModelRegistry, ModelSpec
from snap_bench.plugin.session_options import SessionOptions
from snap_bench.recordings.state import Recordings


def runs_benchmarks(config: pytest.Config, options: SessionOptions) -> bool:
    """A snap-bench option was given, or the run's paths lie under the benchmarks folder: the plugin
    stays out of the way of any other test suite."""
    if options.explicit:
        return True
    benchmarks = (options.rootdir / options.benchmarks_dir).resolve()
    for argument in config.args:
        path = Path(argument.split("::")[0])
        path = (path if path.is_absolute() else Path(config.invocation_params.dir) / path).resolve()
        if path == benchmarks or benchmarks in path.parents:
            return True
    return False


def only_looks(config: pytest.Config) -> bool:
    option = config.option
    looking = (
        getattr(option, "collectonly", False)
        or getattr(option, "help", False)
        or getattr(option, "version", False)
        or getattr(option, "snap_dry_run", False)
        or getattr(option, "showfixtures", False)
        or getattr(option, "show_fixtures_per_test", False)
        or getattr(option, "markers", False)
    )
    return bool(looking)


def choose_models(registry: ModelRegistry, options: SessionOptions, recordings: Recordings) -> list[ModelSpec]:
    """--model's models, the pilot's under --snap-mode=pilot, else every model with recordings."""
    if options.models:
        return registry.resolve(options.models)
    if options.mode == "pilot":
        if not registry.pilot:
            raise ConfigError(registry.source, "pilot", "no pilot models", "list model names under pilot:")
        return registry.resolve(list(registry.pilot))
    recorded = [name for name in recordings.models() if name in registry.models]
    if not recorded:
        raise pytest.UsageError(
            f"no --model given and no recordings under {options.cassette_dir}: "
            f"name a model with --model (known: {', '.join(sorted(registry.models))})"
        )
    return registry.resolve(recorded)
