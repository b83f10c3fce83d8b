"""The psychometric profile: one test per model and condition (item x paraphrase x system prompt x
temperature x context x run). A refused, invalid or failed answer fails its test and is still recorded."""

import pytest

from snap_bench import Ask, Case, expect_valid

pytestmark = pytest.mark.instrument("snap")


def test_likert(case: Case, ask: Ask) -> None:
    expect_valid(ask(case))
