"""Log-probabilities over the scale points: asked for only when an entry or option says so, kept where the
endpoint gives them, summarised per condition and per model, never invented. The sessions that ask for them are
tests/session/test_logprobs.py's."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from snap_bench.observations.logprobs import answer_logprobs
from tests.fake_openai_server import fake_logprobs

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
