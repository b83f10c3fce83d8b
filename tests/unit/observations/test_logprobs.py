"""Log-probabilities over the scale points: asked for only when an entry or option says so, kept where the
endpoint gives them, summarised per condition and per model, never invented."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.observations.logprobs import answer_logprobs
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer, fake_logprobs

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6
LIKERT = SimpleNamespace(scale=SimpleNamespace(low=1, high=5))


def test_the_chosen_token_gives_the_distribution_over_the_points() -> None:
    # "4" at 0.7, "5" at 0.2, "3" at 0.1 (the fake server's shape).
    kept = answer_logprobs(LIKERT, fake_logprobs("4"), 4)
    assert kept is not None
    assert kept["point_probabilities"] == pytest.approx({"3": 0.1, "4": 0.7, "5": 0.2})
    assert kept["expected_score"] == pytest.approx(3 * 0.1 + 4 * 0.7 + 5 * 0.2)
    assert kept["chosen_probability"] == pytest.approx(0.7)
    assert kept["tokens"][0]["top"][0] == ("4", pytest.approx(math.log(0.7)))


def test_the_answer_token_is_found_after_words_and_variants_of_a_point_add_up() -> None:
    content = [
        {"token": "Score", "logprob": -0.01, "top_logprobs": []},
        {"token": ":", "logprob": -0.01, "top_logprobs": []},
        {
            "token": " 2",
            "logprob": math.log(0.5),
            "top_logprobs": [
                {"token": " 2", "logprob": math.log(0.5)},
                {"token": "2", "logprob": math.log(0.1)},
                {"token": " 1", "logprob": math.log(0.2)},
                {"token": " maybe", "logprob": math.log(0.2)},
            ],
        },
    ]
    kept = answer_logprobs(LIKERT, content, 2)
    assert kept is not None
    assert kept["answer_token"] == 2
    assert kept["scale_mass"] == pytest.approx(0.8)
    assert kept["point_probabilities"] == pytest.approx({"1": 0.25, "2": 0.75})
    assert kept["chosen_probability"] == pytest.approx(0.75)


def test_nothing_is_invented() -> None:
    assert answer_logprobs(LIKERT, None, 4) is None
    assert answer_logprobs(LIKERT, [], 4) is None
    signed = SimpleNamespace(scale=SimpleNamespace(low=-2, high=2))
    kept = answer_logprobs(signed, fake_logprobs("2"), 2)
    assert kept is not None
    assert "chosen_probability" not in kept
    no_point = answer_logprobs(LIKERT, fake_logprobs("x"), None)
    assert no_point is not None
    assert "chosen_probability" not in no_point


def with_logprobs(bench: BenchProject, url: str, setting: str) -> None:
    (bench.root / "config" / "models.yaml").write_text(
        "models:\n"
        f"  fake-model:\n    id: fake/model\n    base_url: {url}\n    api_key_env: FAKE_OPENAI_KEY\n"
        f"    logprobs: {setting}\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize("workers", [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")])
def test_an_entry_asking_for_logprobs_gets_them_per_condition_and_per_model(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    with_logprobs(bench, fake_server.base_url, "true")
    result = bench.run("--model=fake-model", *SMALL, *workers, gate=True)
    assert {(r["logprobs"], r["top_logprobs"]) for r in fake_server.script.requests} == {(True, 5)}
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == SMALL_SIZE
    for observation in observations:
        assert observation.logprobs is not None
        assert observation.logprobs["chosen_probability"] == pytest.approx(0.7)
        assert observation.logprobs["expected_score"] == pytest.approx(4.1)
    analysis = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))
    summary = analysis["instruments"]["profile"]["models"]["fake-model"]["logprobs"]
    assert summary["n"] == SMALL_SIZE
    assert summary["mean_chosen_probability"] == pytest.approx(0.7)
    result.stdout.fnmatch_lines(
        ["*profile: mean probability of the chosen point 0.700 (mean expected score 4.10) over 6*"]
    )


def test_an_endpoint_that_gives_none_leaves_them_absent(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    with_logprobs(bench, fake_server.base_url, "3")
    fake_server.script.logprobs = None  # asked, but this server sends none
    result = bench.run("--model=fake-model", *SMALL, gate=True)
    assert {r["top_logprobs"] for r in fake_server.script.requests} == {3}
    assert all(o.logprobs is None for o in read_jsonl(bench.out / "observations.jsonl"))
    analysis = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))
    assert "logprobs" not in analysis["instruments"]["profile"]["models"]["fake-model"]
    assert "mean probability of the chosen point" not in result.stdout.str()


def test_logprobs_are_opt_in_and_the_option_asks_every_model(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    assert not any("logprobs" in r for r in fake_server.script.requests)
    assert all(o.logprobs is None for o in read_jsonl(bench.out / "observations.jsonl"))
    asked = len(fake_server.script.requests)
    # The body changed, so the recordings no longer match: re-asked in mode all.
    bench.run("--model=fake-model", *SMALL, "--snap-logprobs=2", "--snap-record-mode=all").assert_outcomes(
        passed=SMALL_SIZE
    )
    assert {r["top_logprobs"] for r in fake_server.script.requests[asked:]} == {2}
    assert all(o.logprobs is not None for o in read_jsonl(bench.out / "observations.jsonl"))
