"""Which items changed, through a whole session run in-process: a questionnaire asked of a fake model that answers
at random around its views at temperature 1 (as a real model's answers vary run to run), saved as a baseline
file, then asked again of another model and gated against it. Chance changes of answer are listed in
changes.csv and item_changes.csv, never named as changed items; items whose views moved are."""

from __future__ import annotations

import csv
import random
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.instrument_projects import CALM, VIEWS
from tests.session.gate_projects import statement

MOVED = {"I stay calm when plans fall apart.": 2, "I keep my desk in order.": 4}  # C1 4 -> 2, T1 2 -> 4
CHANGED_ITEMS = "items changed beyond the run noise: "


def noisy(views: dict[str, int], seed: int) -> Callable[[dict[str, Any]], str]:
    """The item's view at temperature 0; a point either way or none, at random (seeded), above it."""
    rng = random.Random(seed)

    def answer(request: dict[str, Any]) -> str:
        noise = rng.choice((-1, 0, 0, 1)) if request.get("temperature") else 0
        return str(min(5, max(1, views[statement(request)] + noise)))

    return answer


@pytest.mark.parametrize(("moved", "named"), [({}, set()), (MOVED, {"C1", "T1"})], ids=["asked-again", "moved"])
def test_only_items_that_moved_beyond_the_run_noise_are_named(
    project: BenchProject, fake_server: FakeOpenAIServer, moved: dict[str, int], named: set[str]
) -> None:
    for module in (project.root / "benchmarks").iterdir():
        module.unlink()
    # A drift margin far below the run noise: an unchanged model's drift cannot be decided (below)
    questionnaire = project.root / "benchmarks" / "calm.yaml"
    questionnaire.write_text(CALM + "thresholds: {drift_margin: 0.15}\n", encoding="utf-8")
    saved = project.root / "baselines" / "fake-model.json"
    fake_server.script.answer = noisy(VIEWS, seed=1)
    project.session("--model=fake-model", f"--snap-save-baseline={saved}", gate=True)
    fake_server.script.answer = noisy({**VIEWS, **moved}, seed=2)
    result = project.session("--model=other-model", f"--baseline={saved}", "--snap-gate=baseline,items", gate=True)

    with (project.out / "item_changes.csv").open(encoding="utf-8", newline="") as handle:
        items = list(csv.DictReader(handle))
    assert {row["item"] for row in items} == {"C1", "C2", "C3", "C4", "T1", "T2"}
    assert sum(int(row["changed_conditions"]) for row in items) > 10  # answers differ by chance at t1
    assert {row["item"] for row in items if row["reliable"] == "true"} == named
    listed = "\n".join(result.summary).split(CHANGED_ITEMS, 1)[1].splitlines()[0]
    assert ({entry.split()[0] for entry in listed.split(", ")} if named else {listed}) == (named or {"none"})
    changes = project.analysis()["changes"]["items"]
    assert {c["item"] for c in changes if c["reliable"]} == named
    # The gate follows the items: an item that moved fails the run naming it; chance changes pass it.
    last = result.summary[-1]
    if named:
        assert result.exit_status == pytest.ExitCode.TESTS_FAILED
        assert "2 item(s) changed beyond the run noise" in last
        assert all(f"calm-item[{item}]" in last for item in named), last
    else:
        assert result.exit_status == pytest.ExitCode.OK, last
        # Drift within +-0.15 cannot be shown at this run noise, nor a move past it: undecided (exit 7), never
        # a pass, and not a failure either; the line says what would decide it.
        undecided = project.session("--model=other-model", f"--baseline={saved}", "--snap-gate=drift", gate=True)
        last = undecided.summary[-1]
        assert undecided.exit_status == 7, last
        assert last.startswith("exit status 7: undecided:"), last
        assert "drift[composure]" in last or "drift[tidiness]" in last
        assert "decide" in last
