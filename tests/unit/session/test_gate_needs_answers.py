"""A gate that follows drift or items needs each condition's answers: against a saved analysis.json, which holds
figures only, it is a usage error before anything is asked, never a gate that passes checks it never made
(snap_bench.session.plan.baseline_of)."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.design.config import ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.judging.gate import Gate
from snap_bench.recordings.state import Recordings
from snap_bench.session.plan import baseline_of
from tests.unit.judging.test_baseline_choice import saved


@pytest.mark.parametrize("gate", ["baseline,drift", "items", "baseline,drift,items"])
def test_drift_or_items_against_a_saved_analysis_is_refused_naming_the_fix(tmp_path: Path, gate: str) -> None:
    path = saved(tmp_path, ["alpha"])
    registry = load_models(ConfigFiles.shipped())
    with pytest.raises(ValueError, match=r"a saved analysis\.json does not hold") as error:
        baseline_of(str(path), registry, Recordings(tmp_path), [], tmp_path, Gate.parse(gate))
    assert "Fix: gate against a baseline file" in str(error.value)


def test_the_comparison_alone_against_a_saved_analysis_is_still_made(tmp_path: Path) -> None:
    path = saved(tmp_path, ["alpha"])
    registry = load_models(ConfigFiles.shipped())
    baseline, models = baseline_of(str(path), registry, Recordings(tmp_path), [], tmp_path, Gate.parse("baseline"))
    assert baseline.model == "alpha"
    assert baseline.saved is not None
    assert models == []
