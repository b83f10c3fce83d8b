"""How a benchmark session's tests read: an answer without a score has an outcome of its own.

A refused, unparseable or failed answer is a finding about the model, recorded and judged through the
unscored rate; it is not a failed test, so it neither paints the run red nor sets the exit status.
The terminal counts it as ``unscored`` (``u`` in the progress line), the JUnit XML carries its code and
reason as properties, and the HTML report labels its row.
"""

from __future__ import annotations

from typing import Any

from snap_bench.observations.observation import Observation
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE

UNSCORED = "unscored"
# A threshold check outside what the exit status follows (--snap-gate): reported, never failing the run.
NOT_GATED = "ungated"
# A baseline comparison the gate could not make (no margin, no pairing, no shared condition): never a pass.
NOT_COMPARED = "not compared"
# A threshold check whose figure could not be computed (undefined, too little of the design): never a pass.
NOT_JUDGED = "not judged"
# The report attributes that say why a test produced no observation, and a check's category.
NOT_MEASURED_ATTRIBUTE = "snap_not_measured"
CHECK_CATEGORY_ATTRIBUTE = "snap_check_category"
OUTCOME_PROPERTY = "snap_outcome"


def mark_unscored(user_properties: list[tuple[str, object]], observation: Observation) -> None:
    """Record on the test's user properties that its answer has no score, with the code and reason."""
    user_properties.extend(
        [
            (OUTCOME_PROPERTY, UNSCORED),
            ("answer_code", observation.code),
            ("reason", observation.reason),
        ]
    )


def is_unscored(report: Any) -> bool:
    """A benchmark test's call report whose observation has an answer code (refusal, invalid, API error)."""
    if getattr(report, "when", None) != "call" or not getattr(report, "passed", False):
        return False
    values = getattr(report, OBSERVATION_ATTRIBUTE, None)
    return isinstance(values, dict) and values.get("code") is not None


def teststatus(report: Any) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """pytest_report_teststatus: (category, progress letter, verbose word) of our own outcomes."""
    if is_unscored(report):
        return UNSCORED, "u", ("UNSCORED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_GATED and getattr(report, "when", None) == "call":
        return NOT_GATED, "n", ("UNGATED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_COMPARED and getattr(report, "when", None) == "call":
        return NOT_COMPARED, "c", ("NOT COMPARED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_JUDGED and getattr(report, "when", None) == "call":
        return NOT_JUDGED, "j", ("NOT JUDGED", {"yellow": True})
    return None
