"""The run planner (snap_bench.judging.run_planner): replays drawn from a baseline's own answers, and the runs that
decide the gate against an unchanged model, on a small questionnaire whose answer is known.

A questionnaire of six items (two constructs of three) asked at temperature 1 under one system prompt, three
runs a cell. An answerer without run noise gives the same answer every run: every replay is the baseline itself,
so the design as recorded decides every check. One with the shipped models' run noise (SD 1 scale point) at this
design leaves a construct's position within +-1 point at 90 %, wider than the drift margin (0.5): three runs
do not decide it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.planner import scored_observation
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import Instrument, questionnaire_kind
from snap_bench.instruments.base import Selection
from snap_bench.judging.gate import Gate
from snap_bench.judging.run_planner import LADDER, TARGET, Planner, replay, restored_draw
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Condition, Observation

CONFIG = ConfigFiles.shipped()
GATE = Gate.parse("baseline,drift,items")
ITEMS = 6


def quiz(folder: Path) -> Instrument:
    lines = [
        "questionnaire: quiz6",
        "scale: {points: 5, labels: [Disagree a lot, Disagree, Neutral, Agree, Agree a lot]}",
    ]
    lines.append("items:")
    for index in range(ITEMS):
        lines.append(f'  - {{id: Q{index + 1}, construct: c{index // 3 + 1}, text: "Statement {index + 1}."}}')
    path = folder / "quiz6.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return questionnaire_kind(path, CONFIG)(CONFIG)


@pytest.fixture
def kind(tmp_path: Path) -> Instrument:
    return quiz(tmp_path)


def thresholds_of(kind: Instrument) -> ThresholdConfig:
    metrics = {**SHARED_METRICS, **kind.metrics}
    return load_thresholds(CONFIG, kind.name, {}, None, metrics, kind.thresholds_section())


def recorded(kind: Instrument, noise: float, runs: int = 3, seed: int = 7) -> list[Observation]:
    """The baseline's answers: item i's true answer 1 + i % 5 (so the items differ), plus run noise."""
    rng = np.random.default_rng(seed)
    selection = Selection(levels={"system_prompt": frozenset({"NEU"}), "temperature": frozenset({"t1"})}, runs=runs)
    rows = []
    for condition in kind.conditions(selection):
        truth = 1 + int(condition.item[1:]) % 5
        answer = int(np.clip(np.rint(truth + rng.normal(0, noise)), 1, 5)) if noise else truth
        rows.append(scored_observation(kind, "old@baseline", condition, str(answer)))
    return rows


def planner(kind: Instrument, rows: list[Observation]) -> Planner:
    # Five pairs a number of runs keep the test quick: all five must pass (none may fail at 95 % of five).
    return Planner(rows, {kind.name: kind}, lambda _: thresholds_of(kind), GATE, label="old@baseline", pairs=5)


def test_a_replay_draws_each_cell_from_its_own_answers(kind: Instrument) -> None:
    rows = recorded(kind, noise=1.0)
    once = [row for row in rows if row.run == 1 and row.item == "Q1"]  # a cell the baseline answered once
    rows = [row for row in rows if row.item != "Q1"] + once
    own = {(row.cell, row.score) for row in rows}
    drawn = replay(rows, "new", 5, np.random.default_rng(1))
    assert {row.model for row in drawn} == {"new"}
    assert len(drawn) == 5 * len({row.cell for row in rows})
    assert all((row.cell, row.score) in own for row in drawn)
    assert all(row.condition_id == f"{row.cell}-r{row.run}" for row in drawn)
    assert [row.score for row in drawn if row.item == "Q1"] == [once[0].score] * 5


def test_a_replays_answers_are_as_noisy_as_the_models(kind: Instrument) -> None:
    """Drawn from a cell's n recorded answers, a replay's answers have the cell's mean and its unbiased variance
    s^2, not the plug-in (n - 1) / n s^2 of a plain resample (half of it for a baseline of two runs): so a replay at
    r runs is as noisy as the model at r runs. Its new answers are the instrument's own, on the scale."""
    rows = recorded(kind, noise=1.0, runs=2)
    cells: dict[str, list[Observation]] = {}
    for row in rows:
        cells.setdefault(row.cell, []).append(row)
    varied = [answers for answers in cells.values() if len({row.score for row in answers}) > 1]
    assert varied
    for answers in varied:
        scores = np.array([row.score for row in answers], dtype=float)
        pool, probabilities = restored_draw(answers, kind)
        drawn = np.array([row.score for row in pool], dtype=float)
        mean = float(probabilities @ drawn)
        assert mean == pytest.approx(scores.mean())
        assert float(probabilities @ (drawn - mean) ** 2) == pytest.approx(scores.var(ddof=1))
    # ... and so are the answers a replay draws: the within-cell variance over many runs, against s^2
    drawn_rows = replay(rows, "new", 400, np.random.default_rng(3), {kind.name: kind})
    by_cell: dict[str, list[float]] = {}
    for row in drawn_rows:
        by_cell.setdefault(row.cell, []).append(float(row.score or 0))
    replayed = sum(np.var(by_cell[answers[0].cell], ddof=1) for answers in varied)
    unbiased = sum(np.var([row.score for row in answers], ddof=1) for answers in varied)
    assert replayed / unbiased == pytest.approx(1.0, abs=0.15)
    for row in drawn_rows:
        assert row.score is not None
        assert 1 <= row.score <= 5
        assert row.raw_answer is not None
        assert kind.score(Condition(row.instrument, row.item, tuple(row.factors.items()), row.temperature, row.run),
                          row.raw_answer).keyed_score == row.keyed_score  # fmt: skip


def test_the_runs_a_plan_names_are_the_runs_it_simulated(kind: Instrument, monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline of two runs: every rung the planner names was judged at that many runs per cell (it once judged
    the rung named 12 at 6, scaling a plain resample's runs by n / (n - 1))."""
    simulated: list[int] = []

    def no_pair_passes(self: Planner, runs: int) -> tuple[float, dict[tuple[str, str, str], float], int]:
        simulated.append(runs)
        return 0.0, {}, 2

    monkeypatch.setattr(Planner, "shares", no_pair_passes)
    plan = planner(kind, recorded(kind, noise=1.0, runs=2)).plan(planned=2)
    assert list(plan.pass_rate) == simulated == list(LADDER)


def test_an_answerer_without_run_noise_is_decided_at_the_baselines_runs(kind: Instrument) -> None:
    plan = planner(kind, recorded(kind, noise=0.0)).plan(planned=3)
    assert plan.method == "simulated"
    assert plan.needed == 3
    assert plan.decidable
    assert plan.pass_rate == {3: 1.0}
    assert {check.kind for check in plan.checks} == {"baseline", "drift", "items"}


def test_a_noisy_answerer_at_one_prompt_needs_more_runs_than_it_was_asked(
    kind: Instrument, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What is checked is the planned rung (3 runs) alone: the climb above it, which would name the runs that do
    # decide (every pair of the rung that passes, dozens of refits), is not simulated.
    monkeypatch.setattr(Planner, "_ladder", staticmethod(lambda planned: [planned]))
    plan = planner(kind, recorded(kind, noise=1.0)).plan(planned=3)
    assert list(plan.pass_rate) == [3]
    assert not plan.decidable
    assert plan.needed is None or plan.needed > 3
    assert plan.pass_rate[3] < TARGET
    drifts = [check for check in plan.checks if check.kind == "drift"]
    assert drifts
    assert any(check.passed[3] < TARGET for check in drifts)


def test_a_baseline_without_answers_cannot_be_planned(kind: Instrument) -> None:
    with pytest.raises(ValueError, match="no per-condition answers"):
        planner(kind, []).plan(planned=3)
