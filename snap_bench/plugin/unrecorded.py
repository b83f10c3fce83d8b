"""Offline, the instruments a model has no recording of: left out of the run and named once, not failed
condition by condition.

A team that records only its own questionnaire and runs ``pytest benchmarks`` offline would otherwise get one
failure per condition of every shipped instrument it never recorded (thousands of them, and exit 6). An
instrument counts as *not recorded* for a model when ``cassettes/MODEL/INSTRUMENT/`` holds no recording and the
session has no way to record one (no key for a remote model, no llama.cpp for a local one). Its conditions are
not collected, so they are neither failures nor missing reports; the terminal says once what was left out and
the command that records it, and under a baseline gate the instrument is one the run did not measure, named by
the baseline scope (snap_bench.judging.baseline_scope). A model that has none of the run's instruments recorded
is still a usage error: such a run would measure nothing of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from snap_bench.asking.asker import Endpoint
from snap_bench.design.models import ModelSpec
from snap_bench.observations.case import Case
from snap_bench.plugin.local_servers import LocalServers
from snap_bench.recordings.state import Recordings


@dataclass(frozen=True)
class NotRecorded:
    model: str
    instrument: str
    how: str  # what would let the session record it (the endpoint's offline reason)
    source: Path | None  # the file that runs the instrument, for the command that records it

    def to_json(self) -> dict[str, str | None]:
        source = None if self.source is None else str(self.source)
        return {"model": self.model, "instrument": self.instrument, "how": self.how, "source": source}

    def line(self, invoked: Path) -> str:
        where = _shown(self.source, invoked) if self.source is not None else "benchmarks"
        return (
            f"not recorded for {self.model}: {self.instrument} (no recording under cassettes/{self.model}/"
            f"{self.instrument}/, so it was not run); to record it, {self.how} and run: "
            f"pytest {where} --model={self.model}"
        )


def not_recorded(
    models: Sequence[ModelSpec],
    plans: Mapping[str, Endpoint],
    recordings: Recordings,
    in_run: Mapping[str, Path | None],
) -> list[NotRecorded]:
    """Every (model, instrument of the run) pair with no recording that this session cannot record; a usage
    error when that is every instrument of the run for some model."""
    left: list[NotRecorded] = []
    stuck: list[str] = []
    for model in models:
        plan = plans[model.name]
        if plan.live or (model.is_local and LocalServers.can_serve(model)):
            continue
        missing = [
            NotRecorded(model.name, name, plan.offline_reason, source)
            for name, source in in_run.items()
            if next(recordings.folder(model.name, name).glob("*.json"), None) is None
        ]
        if in_run and len(missing) == len(in_run) and model.name in recordings.models():
            # (a model with no recordings at all is the start's usage error: Endpoints.check_answerable)
            stuck.append(f"{model.name} ({plan.offline_reason})")
        left.extend(missing)
    if stuck:
        holders = ", ".join(m for m in recordings.models() if any(recordings.folder(m, n).is_dir() for n in in_run))
        raise pytest.UsageError(
            f"no recordings of {', '.join(sorted(in_run))} under {recordings.root} and no way to record them for "
            f"{'; '.join(stuck)}, so this run would measure nothing of it. "
            f"Models with recordings: {holders or 'none'} (of these instruments)."
        )
    return left


def wholly_unrecorded(items: Sequence[pytest.Item], left: Sequence[NotRecorded], models: int) -> list[pytest.Item]:
    """The test functions of instruments no model of the run has recorded: with no condition to parametrise them
    they would each be a "got empty parameter set" skip; they are deselected instead (named once already)."""
    counts: dict[str, int] = {}
    for entry in left:
        counts[entry.instrument] = counts.get(entry.instrument, 0) + 1
    gone = {name for name, count in counts.items() if count == models}
    found = []
    for item in items:
        marker = item.get_closest_marker("instrument")
        callspec = getattr(item, "callspec", None)
        # (pytest gives an empty parametrisation one item whose `case` is a placeholder, not a Case)
        unparametrised = callspec is None or not isinstance(callspec.params.get("case"), Case)
        if marker is not None and marker.args and str(marker.args[0]) in gone and unparametrised:
            found.append(item)
    return found


def _shown(path: Path, invoked: Path) -> str:
    """``path`` relative to where pytest was started when it lies below it (what the user would type)."""
    return str(path.relative_to(invoked)) if path.is_relative_to(invoked) else str(path)
