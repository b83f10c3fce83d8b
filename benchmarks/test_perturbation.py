"""Prompt perturbation: one test per model and condition (sample x 16 rewordings of the sentiment task
[+ few-shot prefix and suffix in phase 2] x run).
An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a
failure."""

import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("perturbation")


def test_sentiment(case: Case, ask: Ask) -> None:
    ask(case)
