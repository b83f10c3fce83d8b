"""Fixtures of the report tests: the fake document, observations and thresholds of fake_data.py."""

from __future__ import annotations

from typing import Any

import pytest

from snap_bench.observations.observation import Observation
from tests.unit.report.fake_data import FAKE_THRESHOLDS, fake_document, fake_observations


@pytest.fixture
def observations() -> list[Observation]:
    return fake_observations()


@pytest.fixture
def document() -> dict[str, Any]:
    return fake_document()


@pytest.fixture
def thresholds() -> dict[str, dict[str, Any]]:
    return FAKE_THRESHOLDS
