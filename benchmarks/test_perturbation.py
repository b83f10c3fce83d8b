"""Prompt perturbation: one test per model and condition (sample x 16 rewordings of the sentiment task
[+ few-shot prefix and suffix in phase 2] x run). An answer without a label fails its test and is still recorded."""

import pytest

from snap_bench import Ask, Case, expect_valid

pytestmark = pytest.mark.instrument("perturbation")


def test_sentiment(case: Case, ask: Ask) -> None:
    expect_valid(ask(case))
