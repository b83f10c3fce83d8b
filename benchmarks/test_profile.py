"""The psychometric profile: one test per model and condition (item x paraphrase x system prompt x
temperature x context x run).
An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a
failure."""

import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("profile")


def test_likert(case: Case, ask: Ask) -> None:
    ask(case)
