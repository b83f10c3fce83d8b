"""Which model of a saved analysis.json is the baseline (snap_bench.judging.baseline.parse_baseline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snap_bench.judging.baseline import parse_baseline


def saved(tmp_path: Path, models: list[str]) -> Path:
    entry = {"verdict": "FAIL", "metrics": {"unscored_rate": {"value": 0.1, "ci_low": 0.05, "ci_high": 0.15}}}
    document = {
        "instruments": {
            "profile": {"models": {model: {**entry, "rank": rank} for rank, model in enumerate(models, 1)}},
            "compass": {"models": {models[0]: entry}},
        }
    }
    path = tmp_path / "analysis.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_saved_analysis_of_several_models_names_them_and_the_way_to_pick_one(tmp_path: Path) -> None:
    path = saved(tmp_path, ["alpha", "beta"])
    with pytest.raises(ValueError, match=r"holds 2 judged models \(alpha, beta\); pick one with --baseline=.*#MODEL"):
        parse_baseline(str(path), [])
    chosen = parse_baseline(f"{path}#beta", [])
    assert chosen.model == "beta"
    # only beta's entries: it was judged on the profile alone
    assert chosen.saved is not None
    assert set(chosen.saved) == {"profile"}
    assert chosen.saved["profile"]["rank"] == 2
    alpha = parse_baseline(f"{path}#alpha", [])
    assert alpha.saved is not None
    assert set(alpha.saved) == {"profile", "compass"}


def test_a_model_the_file_does_not_hold_is_named_with_those_it_does(tmp_path: Path) -> None:
    path = saved(tmp_path, ["alpha", "beta"])
    with pytest.raises(ValueError, match=r"has no judged model 'gamma'; it holds alpha, beta"):
        parse_baseline(f"{path}#gamma", [])


def test_one_model_needs_no_choice(tmp_path: Path) -> None:
    assert parse_baseline(str(saved(tmp_path, ["alpha"])), []).model == "alpha"
