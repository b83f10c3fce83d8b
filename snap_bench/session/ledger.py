"""The controller's ledger of benchmark conditions: which were expected, which reported, which observed,
and why the rest produced no answer. Coverage and the exit findings are read from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from snap_bench.analysis.coverage import Coverage, coverage_by_model
from snap_bench.asking.stops import NOT_ASKED, stopped_models
from snap_bench.observations.observation import Observation
from snap_bench.observations.parsing import AnswerCode
from snap_bench.observations.shared_values import SharedValues

# The node id prefix of the session's own check reports (thresholds, comparisons): not benchmark tests.
CHECKS_LOCATION = "snap-bench"


class ConditionLedger:
    """Every benchmark test the session expects, and what became of it (kept on the controller)."""

    def __init__(self) -> None:
        self.observations: list[Observation] = []
        # Equal values of the observations held once (snap_bench.observations.shared_values): the ledger
        # holds every observation of the session, 52,040 in the ten-model study.
        self._shared = SharedValues()
        self.expected: set[str] = set()
        self.reported: set[str] = set()
        self.observed: set[str] = set()
        # nodeid -> why a benchmark test produced no observation (no recording, budget spent, errored)
        self.not_measured: dict[str, str] = {}
        self.other_failures = 0

    def expect(self, nodeids: Iterable[str]) -> None:
        self.expected.update(nodeids)

    def deselect(self, nodeids: Iterable[str]) -> None:
        """A condition left out by -k or -m was never meant to run: it is not missing."""
        self.expected.difference_update(nodeids)

    def expected_case_ids(self) -> set[str]:
        """The parameter ids of the expected tests (``path::test_profile[gpt-5.2-M01-P1-NEU-t0-r1]``: a Case's id)."""
        ids = set()
        for nodeid in self.expected:
            start = nodeid.find("[", nodeid.rfind("::"))
            if start >= 0 and nodeid.endswith("]"):
                ids.add(nodeid[start + 1 : -1])
        return ids

    def record(
        self, nodeid: str, *, failed: bool, values: dict[str, Any] | None = None, not_measured: str | None = None
    ) -> Observation | None:
        """Take what one phase of a test reported: whether it failed, the observation's ``values`` (its call's),
        why it measured nothing; the observation, if any, is kept and returned."""
        self.reported.add(nodeid)
        observation = None
        if values is not None:
            observation = self._shared.observation(values)
            self.observations.append(observation)
            self.observed.add(nodeid)
        if not_measured is not None:
            self.not_measured[nodeid] = not_measured
        elif failed and not nodeid.startswith(f"{CHECKS_LOCATION}::"):
            if nodeid in self.expected:
                self.not_measured.setdefault(nodeid, "errored")
            else:
                self.other_failures += 1
        return observation

    def sort(self) -> None:
        # Workers report in whatever order they finish; the analysis reads one order, so that a replay's
        # figures never depend on scheduling (sums, and the REML optimiser's path, follow the row order).
        self.observations.sort(
            key=lambda observation: (observation.model, observation.instrument, observation.condition_id)
        )

    def missing_reports(self) -> set[str]:
        return self.expected - self.reported

    def coverage(self, models: list[str]) -> dict[str, Coverage]:
        """Per model: the conditions its design holds and how many were answered (snap_bench.analysis.coverage)."""
        return coverage_by_model(
            models, self.expected, self.observed, self.not_measured, self.missing_reports(), self.observations
        )

    def not_measured_counts(self, state_dir: Path, key_of: Mapping[str, str | None]) -> dict[str, int]:
        """Why conditions hold no answer, counted by reason (for the exit status)."""
        counts: Counter[str] = Counter(self.not_measured.values())
        unexplained = self.expected - self.observed - set(self.not_measured)
        if unexplained:
            counts["never produced a report"] += len(unexplained & self.missing_reports())
            counts["errored"] += len(unexplained - self.missing_reports())
        answered = {o.model for o in self.observations if o.code != int(AnswerCode.API_ERROR)}
        stopped = stopped_models(state_dir, key_of)
        for model in sorted({o.model for o in self.observations} - answered - set(stopped)):
            counts[f"conditions of {model}, whose endpoint never answered"] += sum(
                o.model == model for o in self.observations
            )
        for model, message in stopped.items():
            # snap_bench.asking.stops: the model's asking ended early (a refused key, an unreachable endpoint)
            counts[f"condition(s) not asked: {message}"] += (
                sum(o.model == model and o.reason.startswith(NOT_ASKED) for o in self.observations) or 1
            )
        return {reason: count for reason, count in counts.items() if count}
