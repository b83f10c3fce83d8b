"""How much of its design each model answered, and the INCOMPLETE verdict of a model that did not.

A condition without an observation (the budget was spent, the model was stopped and the condition not
asked, no recording to replay, the test errored, a worker crashed before reporting) leaves a hole in
the design the metrics rest on. Judging the rest as if it were the whole would be a verdict on part
of the design, so such a model's verdict is ``INCOMPLETE`` with its coverage, and its checks are not
judged. The exit status of such a run is already "could not measure" (snap_bench.judging.exit_status).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from snap_bench.asking.stops import NOT_ASKED
from snap_bench.observations.observation import Observation

INCOMPLETE = "INCOMPLETE"
# A figure resting on less than this share of its design is thin: drawn grey, never judged non-inferior.
THIN_COVERAGE = 0.5
NOT_JUDGED = "not judged"
NO_REPORT = "never produced a report (interrupted or crashed)"
STOPPED = "not asked (the model was stopped)"
ERRORED = "errored"


@dataclass(frozen=True)
class Coverage:
    """One model's conditions: how many the design holds, how many were answered, why the rest were not."""

    model: str
    designed: int
    answered: int
    missing: dict[str, int]

    @property
    def complete(self) -> bool:
        return not self.missing and self.answered >= self.designed

    def describe(self) -> str:
        """``20/96 conditions answered (76 budget spent)``."""
        why = ", ".join(f"{count} {reason}" for reason, count in sorted(self.missing.items()))
        return f"{self.answered}/{self.designed} conditions answered" + (f" ({why})" if why else "")

    @classmethod
    def from_json(cls, model: str, values: Mapping[str, Any]) -> Coverage:
        missing = values.get("missing")
        return cls(
            model,
            int(values.get("designed", 0)),
            int(values.get("answered", 0)),
            {str(reason): int(count) for reason, count in (missing.items() if isinstance(missing, Mapping) else [])},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "designed": self.designed,
            "answered": self.answered,
            "complete": self.complete,
            "missing": dict(sorted(self.missing.items())),
        }


def model_of(nodeid: str, models: Iterable[str]) -> str | None:
    """The model of a benchmark test id (``...[gpt-5.2-M01-P1-...]``); the longest name wins."""
    for model in sorted(models, key=len, reverse=True):
        if f"[{model}-" in nodeid:
            return model
    return None


def coverage_by_model(
    models: Iterable[str],
    expected: Iterable[str],
    observed: Iterable[str],
    not_measured: Mapping[str, str],
    missing_reports: Iterable[str],
    observations: Iterable[Observation],
) -> dict[str, Coverage]:
    """Per model: designed = its collected conditions; answered = those with an observation that was asked.

    ``observed`` are the test ids that carried an observation, ``not_measured`` test id -> why there
    was none, ``missing_reports`` the ids that never reported at all.
    """
    names = list(models)
    observed_ids, lost = set(observed), set(missing_reports)
    designed: Counter[str] = Counter()
    answered: Counter[str] = Counter()
    missing: dict[str, Counter[str]] = {name: Counter() for name in names}
    for nodeid in expected:
        model = model_of(nodeid, names)
        if model is None:
            continue
        designed[model] += 1
        if nodeid in observed_ids:
            answered[model] += 1
        elif nodeid in not_measured:
            missing[model][not_measured[nodeid]] += 1
        elif nodeid in lost:
            missing[model][NO_REPORT] += 1
        else:
            missing[model][ERRORED] += 1
    for observation in observations:
        if observation.model in missing and observation.reason.startswith(NOT_ASKED):
            # Carried an observation, but one that says the condition was never asked.
            answered[observation.model] -= 1
            missing[observation.model][STOPPED] += 1
    return {
        name: Coverage(name, designed[name], max(answered[name], 0), {r: n for r, n in missing[name].items() if n})
        for name in names
    }


def incomplete_models(document: Mapping[str, Any]) -> list[Coverage]:
    """The models of a ``coverage`` section (session.json, analysis.json) that did not cover their design."""
    entries = [
        Coverage.from_json(str(model), values) for model, values in document.items() if isinstance(values, Mapping)
    ]
    return [entry for entry in entries if not entry.complete]


def judge_coverage(verdict: Any, coverage: Coverage | None) -> Any:
    """The verdict as it stands when the model covered its design; else INCOMPLETE, its checks not judged.

    ``verdict`` is a ``ModelVerdict`` (snap_bench.judging.verdicts); typed loosely so that this module does
    not import the instrument toolkit.
    """
    if coverage is None or coverage.complete:
        return verdict
    checks = [
        dataclasses.replace(
            check,
            status=NOT_JUDGED,
            message=f"{check.model} {check.metric}: not judged: {coverage.describe()}",
        )
        for check in verdict.checks
    ]
    return dataclasses.replace(verdict, verdict=INCOMPLETE, composite=None, checks=checks)
