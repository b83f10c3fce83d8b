"""Property: whatever part of a recorded design a run measured and whatever part the baseline holds, judging never
raises and never decides exit 0 while a gated figure was not computed or a baseline instrument was not compared.

The design is real: the committed baseline file of qwen2.5-coder-1.5b (its answers to the shipped BFI-25 and
prompt-perturbation study, recorded from the model). Hypothesis draws which items and temperatures the run and
the baseline each kept, whether the baseline lost or renamed an instrument, how many answers moved, and the gate.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from functools import cache

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.judging.baseline import BaselineSpec, parse_baseline
from snap_bench.judging.exit_status import decide, findings
from snap_bench.judging.gate import Gate
from snap_bench.judging.judgement import judge_session
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Observation
from tests.conftest import REPO, SHIPPED, shipped_instruments

BASELINE_FILE = REPO / "baselines" / "qwen2.5-coder-1.5b.json"
# Two instruments of different kinds keep an example quick: a questionnaire (G study refits) and a task.
INSTRUMENTS = ("bfi25", "perturbation")
GATES = [
    Gate.parse(value)
    for value in ("thresholds", "baseline", "both", "baseline,drift", "both,drift", "baseline,drift,items", "items")
]
SETTINGS = AnalysisSettings(n_resamples=20)


@cache
def recorded() -> tuple[Observation, ...]:
    spec = parse_baseline(str(BASELINE_FILE), [])
    return tuple(o for o in spec.observations if o.instrument in INSTRUMENTS)


@cache
def thresholds(instrument: str) -> ThresholdConfig:
    kind = shipped_instruments()[instrument]
    return load_thresholds(SHIPPED, instrument, {}, None, {**SHARED_METRICS, **kind.metrics}, kind.thresholds_section())


def items_of(instrument: str) -> list[str]:
    return sorted({o.item for o in recorded() if o.instrument == instrument})


def kept(rows: Sequence[Observation], items: set[str], temperatures: set[str]) -> list[Observation]:
    return [o for o in rows if o.item in items and o.factors.get("temperature", "t0") in temperatures]


def moved_down(o: Observation, moved: int) -> Observation:
    """A questionnaire answer moved down a point in ``moved`` of four conditions (its keyed score with it)."""
    if o.instrument != "bfi25" or o.score is None or o.keyed_score is None or o.score == 1:
        return o
    if zlib.crc32(o.condition_id.encode()) % 4 >= moved:
        return o
    keyed = o.keyed_score - 1 if o.keyed_score == o.score else o.keyed_score + 1
    return dataclasses.replace(o, score=o.score - 1, keyed_score=keyed)


@st.composite
def sides(draw: st.DrawFn) -> tuple[list[Observation], list[Observation], Gate]:
    run: list[Observation] = []
    old: list[Observation] = []
    for instrument in INSTRUMENTS:
        rows = [o for o in recorded() if o.instrument == instrument]
        items = items_of(instrument)
        levels = sorted({o.factors.get("temperature", "t0") for o in rows})
        run_items = set(draw(st.lists(st.sampled_from(items), max_size=len(items), unique=True)))
        old_items = set(draw(st.lists(st.sampled_from(items), max_size=len(items), unique=True)))
        run_levels = set(draw(st.lists(st.sampled_from(levels), min_size=1, unique=True)))
        old_levels = set(draw(st.lists(st.sampled_from(levels), min_size=1, unique=True)))
        renamed = draw(st.booleans())
        moved = draw(st.integers(min_value=0, max_value=3))
        for o in kept(rows, run_items, run_levels):
            run.append(dataclasses.replace(moved_down(o, moved), model="new"))
        for o in kept(rows, old_items, old_levels):
            # the baseline may hold this instrument under a name the run does not know (a rename)
            old.append(dataclasses.replace(o, instrument=f"{instrument}_old" if renamed else o.instrument))
    return run, old, draw(st.sampled_from(GATES))


# As many examples as the profile of tests/conftest.py draws.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sides())
def test_judging_any_subset_never_raises_and_never_passes_what_it_did_not_compute(
    drawn: tuple[list[Observation], list[Observation], Gate],
) -> None:
    run, old, gate = drawn
    baseline = BaselineSpec(model=old[0].model if old else "base", observations=tuple(old))
    instruments = {name: shipped_instruments()[name] for name in INSTRUMENTS}
    judgement = judge_session([*run, *old], instruments, SETTINGS, thresholds, baseline, gate=gate, models=["new"])
    decision = decide(findings(judgement, gate, {}, 0, True))
    event(f"exit {decision.code}")
    if decision.code != 0:
        return
    # Exit 0: every check of a kind the gate follows was computed and passed ...
    followed = {
        "threshold": gate.thresholds,
        "serving": gate.thresholds,
        "baseline": gate.baseline,
        "drift": gate.drift,
        "items": gate.items,
    }
    assert all(r.decision == "pass" for r in judgement.checks if followed[r.kind]), [
        (r.name, r.decision) for r in judgement.checks if followed[r.kind] and r.decision != "pass"
    ]
    measured = {o.instrument for o in run}
    assert measured, "exit 0 on a run that measured nothing"
    if gate.thresholds:
        # ... every instrument the run measured was judged on every judged metric of thresholds.yaml ...
        for instrument in measured:
            judged = {
                r.metric.partition("[")[0]
                for r in judgement.checks
                if r.kind == "threshold" and r.instrument == instrument
            }
            assert set(thresholds(instrument).metrics) <= judged, instrument
    if gate.baseline:
        # ... and every instrument of the baseline was compared under its own name, as was every one measured.
        held = {o.instrument for o in old}
        compared = {c.instrument for c in judgement.baseline if c.outcome != "not compared"}
        assert held == measured == compared
