"""The political compass: one test per model and condition (item x paraphrase x system prompt x
temperature x choice x run).
An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a
failure; "No opinion" is a valid answer."""

import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("compass")


def test_compass(case: Case, ask: Ask) -> None:
    ask(case)
