"""Fake inputs for the report tests: synthetic observations, a hand-built analysis.json document, thresholds.

Nothing here comes from a model. The document follows the schema gate.py writes (docs/report.md, "Outputs"),
with one model of each verdict, an undefined metric, a baseline-role model on request, and the
untrusted strings of the XSS tests wherever a document or an observation carries text.
"""

from __future__ import annotations

import copy
import random
from itertools import product
from typing import Any

from snap_bench.observations.observation import Observation

XSS_PAYLOADS = (
    "<script>alert(1)</script>",
    "</td><img src=x onerror=alert(1)>",
    '" onmouseover="alert(1)',
    "<svg onload=alert(1)>",
)
FAKE_MODELS = ("fake-steady", "fake-borderline", "fake-flaky")
FAKE_ITEMS = {"M01": "care", "M02": "fairness", "P01": "openness"}
FAKE_DIGEST = "fake0digest0"

FAKE_THRESHOLDS: dict[str, dict[str, Any]] = {
    "test_retest_r": {"better": "higher", "minimum": 0.60, "target": 0.70, "excellent": 0.80},
    "inter_paraphrase_r": {"better": "higher", "minimum": 0.65, "target": 0.75, "excellent": 0.85},
    "cv_mean": {"better": "lower", "minimum": 15.0, "target": 10.0, "problematic": 20.0},
    "cronbach_alpha_moral": {"better": "higher", "minimum": 0.65, "target": 0.75, "excellent": 0.85},
    "icc2_1": {"better": "higher", "minimum": 0.60, "target": 0.75, "excellent": 0.90},
    "unscored_rate": {"better": "lower", "minimum": 0.10, "target": 0.10},
}


def fake_observations(models: tuple[str, ...] = FAKE_MODELS, seed: int = 7) -> list[Observation]:
    """A small full-factorial slice per model, with a refusal, an invalid answer and an API error."""
    rng = random.Random(seed)
    observations = []
    for model_index, model in enumerate(models):
        for item, paraphrase, prompt, temperature, context, run in product(
            FAKE_ITEMS, ("P1", "P2"), ("NEU", "DIR"), (0.0, 1.0), ("C0", "C1"), (1, 2)
        ):
            if item.startswith("P") and context == "C1":
                continue  # as in the design: the dilemma context applies to moral items only
            factors = {
                "paraphrase": paraphrase,
                "system_prompt": prompt,
                "temperature": f"t{temperature:g}",
                "context": context,
            }
            cell = "-".join([item, *factors.values()])
            score: int | None = min(5, max(1, 2 + model_index + rng.choice((0, 0, 1)) - (item == "M02")))
            code: int | None = None
            reason = ""
            raw_answer: str | None = str(score)
            roll = rng.random()
            if roll < 0.04:
                score, code, reason, raw_answer = None, -1, "refusal phrase found", "I cannot answer that."
            elif roll < 0.08:
                score, code, reason, raw_answer = None, -2, "no number, scale label or refusal found", "Maybe?"
            elif roll < 0.10:
                score, code, reason, raw_answer = None, -3, "timeout after 5 attempts", None
            observations.append(
                Observation(
                    model=model,
                    instrument="profile",
                    condition_id=f"{cell}-r{run}",
                    cell=cell,
                    item=item,
                    factors=factors,
                    temperature=temperature,
                    run=run,
                    messages=[
                        {"role": "system", "content": f"Fake system prompt {prompt}."},
                        {"role": "user", "content": f"Fake statement {item}, paraphrase {paraphrase}. Answer 1-5."},
                    ],
                    raw_answer=raw_answer,
                    score=score,
                    keyed_score=None if score is None else float(6 - score if item == "M02" else score),
                    code=code,
                    reason=reason,
                    construct=FAKE_ITEMS[item],
                    latency_s=0.25,
                    prompt_tokens=40,
                    completion_tokens=1,
                    replayed=run == 1,
                    timestamp="2026-01-01T00:00:00+00:00",
                )
            )
    return observations


def _metric(
    value: float | None, status: str, low: float | None = None, high: float | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "n": extra.pop("n", 32),
        "n_left_out": extra.pop("n_left_out", 2),
        "undefined": extra.pop("undefined", None),
        "note": extra.pop("note", ""),
        "status": status,
    }


def _breakdowns(mean: float) -> dict[str, dict[str, dict[str, float | None]]]:
    def level(r: float | None, icc: float | None) -> dict[str, float | None]:
        return {"test_retest_r": r, "icc2_1": icc, "mean_score": mean, "unscored_rate": 0.05}

    return {
        "system_prompt": {"NEU": level(0.91, 0.88), "DIR": level(0.72, 0.65)},
        "temperature": {"t0": level(1.0, 1.0), "t1": level(None, 0.41)},
        "context": {"C0": level(0.8, 0.77), "C1": level(0.66, 0.61)},
    }


def fake_document(*, with_baseline: bool = False) -> dict[str, Any]:
    """analysis.json for the three fake models; ``with_baseline`` adds a baseline model and its comparisons."""
    effects = {
        "item": 0.52,
        "paraphrase": 0.04,
        "system_prompt": 0.06,
        "temperature": 0.08,
        "context": 0.01,
        "residual": 0.29,
    }
    steady = {
        "test_retest_r": _metric(0.93, "excellent", 0.88, 0.97),
        "inter_paraphrase_r": _metric(0.86, "excellent", 0.80, 0.91),
        "cv_mean": _metric(4.2, "target", 3.1, 5.5),
        "icc2_1": _metric(0.91, "excellent", 0.85, 0.95),
        "cronbach_alpha_moral": _metric(0.81, "target", 0.70, 0.88),
        "unscored_rate": _metric(0.03, "target", 0.01, 0.08, n=80, n_left_out=0),
        "tara_all_runs": _metric(0.9, "not judged", 0.8, 0.97),
        "refusal_rate": _metric(0.01, "not judged", 0.0, 0.05, n=80, n_left_out=0),
        "cronbach_alpha[care]": _metric(0.7, "not judged"),
    }
    borderline = copy.deepcopy(steady)
    borderline["cv_mean"] = _metric(12.5, "acceptable", 10.0, 15.0)
    borderline["icc2_1"] = _metric(0.68, "acceptable", 0.6, 0.74)
    flaky = copy.deepcopy(steady)
    flaky["test_retest_r"] = _metric(None, "undefined", undefined="zero variance: every answer was 5", n=30)
    flaky["inter_paraphrase_r"] = _metric(0.41, "below", 0.2, 0.6, note="fake note: few complete rows")
    flaky["unscored_rate"] = _metric(0.14, "below", 0.09, 0.2, n=80, n_left_out=0)
    flaky["cronbach_alpha[care]"] = _metric(None, "not judged", undefined="too few complete rows or columns")

    def entry(verdict: str, composite: float, rank: int, metrics: dict[str, Any], mean: float) -> dict[str, Any]:
        return {
            "instrument": "profile",
            "verdict": verdict,
            "composite": composite,
            "rank": rank,
            "n_observations": 80,
            "n_valid": 72,
            "metrics": metrics,
            "effects": effects,
            "construct_means": {"care": mean, "fairness": mean - 0.5, "openness": mean + 0.2},
            "breakdowns": _breakdowns(mean),
        }

    document: dict[str, Any] = {
        "session": {
            "models": list(FAKE_MODELS),
            "instruments": {"profile": FAKE_DIGEST},
            "record_mode": "none",
            "observations": 240,
            "missing_reports": [],
            "baseline": None,
            "judge": "thresholds.yaml",
            "resamples": 1000,
            "seed": 20261122,
            "finished": "2026-01-02T03:04:05+00:00",
        },
        "instruments": {
            "profile": {
                "title": "psychometric profile",
                "models": {
                    # deliberately not in rank order: the report sorts by rank
                    "fake-flaky": entry("FAIL", 0.41, 3, flaky, 3.6),
                    "fake-steady": entry("PASS", 0.88, 1, steady, 2.9),
                    "fake-borderline": entry("BORDERLINE", 0.71, 2, borderline, 3.1),
                },
            }
        },
        "baseline": [],
    }
    if with_baseline:
        document["session"]["baseline"] = "fake-old"
        profile_models(document)["fake-old"] = {
            "instrument": "profile",
            "verdict": None,
            "role": "baseline",
            # no status: the report colours a baseline's metrics against the thresholds itself
            "metrics": {name: {k: v for k, v in m.items() if k != "status"} for name, m in steady.items()},
        }
        document["baseline"] = [
            {
                "model": "fake-steady",
                "baseline": "fake-old",
                "instrument": "profile",
                "metric": "icc2_1",
                "new_value": 0.91,
                "baseline_value": 0.9,
                "difference": 0.01,
                "ci_low": -0.02,
                "ci_high": 0.04,
                "margin": 0.05,
                "better": "higher",
                "paired": True,
                "n": 32,
                "regressed": False,
                "message": "fake-steady icc2_1 vs fake-old: non-inferior",
            },
            {
                "model": "fake-steady",
                "baseline": "fake-old",
                "instrument": "profile",
                "metric": "cv_mean",
                "new_value": 7.0,
                "baseline_value": 4.2,
                "difference": 2.8,
                "ci_low": 1.1,
                "ci_high": 4.5,
                "margin": 2.0,
                "better": "lower",
                "paired": True,
                "n": 32,
                "regressed": True,
                "message": "fake-steady cv_mean vs fake-old: REGRESSION",
                "outcome": "REGRESSION",
                "reason": "worse than the baseline by more than the margin (upper bound +4.5 vs +2)",
                "compared": 30,
                "designed": 32,
                "unit": "cells",
                "method": "paired bootstrap over items",
            },
            {
                "model": "fake-steady",
                "baseline": "fake-old",
                "instrument": "profile",
                "metric": "cronbach_alpha_moral",
                "new_value": None,
                "baseline_value": None,
                "difference": None,
                "ci_low": None,
                "ci_high": None,
                "margin": 0.1,
                "better": "higher",
                "paired": True,
                "n": 0,
                "regressed": False,
                "message": "not compared: no row answered by both models",
                "outcome": "not compared",
                "reason": "no row answered by both models",
                "compared": 0,
                "designed": 12,
                "unit": "rows",
            },
        ]
    return document


def profile_models(document: dict[str, Any]) -> dict[str, Any]:
    """The profile's per-model entries of an analysis.json document."""
    models: dict[str, Any] = document["instruments"]["profile"]["models"]
    return models


def profile_document(models: dict[str, Any]) -> dict[str, Any]:
    """A document holding only the profile's ``models``."""
    return {"instruments": {"profile": {"models": models}}}


def poisoned(document: dict[str, Any], observations: list[Observation]) -> tuple[dict[str, Any], list[Observation]]:
    """The fake inputs with an XSS payload in every string a model or a config file could control."""
    import dataclasses

    bad_model = XSS_PAYLOADS[0]
    document = copy.deepcopy(document)
    document["session"]["models"].append(bad_model)
    document["session"]["instruments"] = {XSS_PAYLOADS[3]: XSS_PAYLOADS[1]}
    document["session"]["record_mode"] = XSS_PAYLOADS[2]
    document["session"]["finished"] = XSS_PAYLOADS[1]
    flaky = copy.deepcopy(profile_models(document)["fake-flaky"])
    flaky["metrics"]["test_retest_r"]["undefined"] = XSS_PAYLOADS[1]
    flaky["metrics"]["inter_paraphrase_r"]["note"] = XSS_PAYLOADS[2]
    flaky["metrics"][f"cronbach_alpha[{XSS_PAYLOADS[3]}]"] = _metric(0.5, "not judged")
    flaky["breakdowns"]["system_prompt"][XSS_PAYLOADS[0]] = flaky["breakdowns"]["system_prompt"]["NEU"]
    flaky["construct_means"][XSS_PAYLOADS[2]] = 3.0
    flaky["effects"][XSS_PAYLOADS[1]] = 0.01
    flaky["rank"] = XSS_PAYLOADS[2]
    profile_models(document)[bad_model] = flaky
    document["baseline"] = [
        {
            "model": bad_model,
            "baseline": XSS_PAYLOADS[1],
            "instrument": "profile",
            "metric": XSS_PAYLOADS[3],
            "new_value": 0.5,
            "baseline_value": 0.6,
            "difference": -0.1,
            "ci_low": -0.2,
            "ci_high": 0.0,
            "margin": 0.05,
            "better": XSS_PAYLOADS[2],
            "paired": True,
            "n": 3,
            "regressed": True,
            "message": XSS_PAYLOADS[0],
        }
    ]
    bad = []
    for index, observation in enumerate(observations):
        payload = XSS_PAYLOADS[index % len(XSS_PAYLOADS)]
        bad.append(
            dataclasses.replace(
                observation,
                model=bad_model if observation.model == "fake-flaky" else observation.model,
                raw_answer=payload,
                reason=payload,
                construct=payload if observation.item == "P01" else observation.construct,
                messages=[{"role": payload, "content": payload}],
                factors={**observation.factors, "system_prompt": payload} if index % 7 == 0 else observation.factors,
            )
        )
    return document, bad
