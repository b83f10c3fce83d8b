"""The political compass: one test per model and condition (item x paraphrase x system prompt x
temperature x choice x run). A refused, invalid or failed answer fails its test and is still recorded;
"No opinion" is a valid answer."""

import pytest

from snap_bench import Ask, Case, expect_valid

pytestmark = pytest.mark.instrument("compass")


def test_compass(case: Case, ask: Ask) -> None:
    expect_valid(ask(case))
