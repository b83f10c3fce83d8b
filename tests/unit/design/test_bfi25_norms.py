"""The BFI-25 questionnaire (benchmarks/bfi25.yaml) and its human norms (bfi25_norms.yaml, written by
make_bfi25_norms.py from psychTools' bfi data): complete, keyed alike, and matching the published reliabilities."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from snap_bench.design.config import PACKAGED
from tests.conftest import REPO

QUESTIONNAIRE = REPO / "benchmarks" / "bfi25.yaml"
TRAITS = ["agreeableness", "conscientiousness", "extraversion", "neuroticism", "openness"]
# Cronbach's alpha of the five scales as published: the output of `scoreItems(keys.list, bfi)` printed in
# psychTools' vignette "An introduction to the psych package: Part II Scale construction and psychometrics"
# (W. Revelle, September 20, 2022; overview.pdf of psychTools 2.2.9, section 5.4.1 "Scoring from raw data",
# p. 52, "(Unstandardized) Alpha": agree 0.7, conscientious 0.72, extraversion 0.76, neuroticism 0.81,
# openness 0.6). scoreItems imputes a missing answer by the item's median, the norms do not (psych::alpha's
# raw_alpha): the two differ by less than 0.004.
PUBLISHED_ALPHA = {
    "agreeableness": 0.70,
    "conscientiousness": 0.72,
    "extraversion": 0.76,
    "neuroticism": 0.81,
    "openness": 0.60,
}


def load(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        loaded: dict[str, Any] = yaml.safe_load(handle)
    return loaded


def questionnaire() -> dict[str, Any]:
    return load(QUESTIONNAIRE)


def norms() -> dict[str, Any]:
    return load(PACKAGED / questionnaire()["norms"])


def keyed_mean(item: dict[str, Any]) -> float:
    mean: float = item["mean"]
    return 7 - mean if item["reverse"] else mean


def test_the_questionnaire_has_25_items_five_per_trait() -> None:
    items = questionnaire()["items"]
    assert len(items) == 25
    assert len({item["id"] for item in items}) == 25
    for trait in TRAITS:
        assert len([item for item in items if item["construct"] == trait]) == 5, trait
    assert {item["construct"] for item in items} == set(TRAITS)


def test_the_norms_have_25_items_and_five_traits_of_five_items() -> None:
    figures = norms()
    assert list(figures["items"]) == [f"{letter}{n}" for letter in "ACENO" for n in range(1, 6)]
    assert list(figures["traits"]) == TRAITS
    for trait, scale in figures["traits"].items():
        assert len(scale["keys"]) == 5, trait
        assert {key.lstrip("-")[0] for key in scale["keys"]} == {trait[0].upper()}


def test_the_questionnaire_is_keyed_as_the_norms() -> None:
    figures = norms()
    items = questionnaire()["items"]
    assert {item["id"]: item["reverse"] for item in items} == {
        item: figures["items"][item]["reverse"] for item in figures["items"]
    }
    for trait, scale in figures["traits"].items():
        keys = [f"-{item['id']}" if item["reverse"] else item["id"] for item in items if item["construct"] == trait]
        assert keys == scale["keys"], trait


def test_the_questionnaire_and_the_norms_share_the_scale() -> None:
    assert questionnaire()["scale"] == norms()["scale"]
    assert questionnaire()["scale"]["points"] == len(questionnaire()["scale"]["labels"]) == 6


def test_the_norms_come_from_2800_respondents() -> None:
    figures = norms()
    assert figures["source"]["respondents"] == 2800
    assert all(0 < item["n"] <= 2800 for item in figures["items"].values())
    assert all(0 < trait["n"] <= 2800 for trait in figures["traits"].values())


def test_every_item_mean_is_on_the_scale_and_every_sd_positive() -> None:
    for name, item in norms()["items"].items():
        assert 1 <= item["mean"] <= 6, name
        assert item["sd"] > 0, name


@pytest.mark.parametrize("trait", TRAITS)
def test_each_alpha_is_the_published_one(trait: str) -> None:
    assert norms()["traits"][trait]["alpha"] == pytest.approx(PUBLISHED_ALPHA[trait], abs=0.01)


@pytest.mark.parametrize("trait", TRAITS)
def test_each_trait_mean_lies_among_its_items_keyed_means(trait: str) -> None:
    figures = norms()
    scale = figures["traits"][trait]
    means = [keyed_mean(figures["items"][key.lstrip("-")]) for key in scale["keys"]]
    assert min(means) <= scale["mean"] <= max(means)
    assert scale["sd"] > 0
