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


def test_a_baseline_that_is_neither_names_the_models_with_recordings_only(tmp_path: Path) -> None:
    """models.yaml lists many models, retired ones among them; the ones a baseline can replay are those
    with recordings, and only those are offered."""
    known = ["claude-3-opus", "gpt-5.2", "qwen2.5-coder-1.5b", "smollm2-135m"]
    recorded = ["qwen2.5-coder-1.5b", "smollm2-135m"]
    for value in ("no-such-model", str(tmp_path / "missing.json")):
        with pytest.raises(ValueError, match="model with recordings") as raised:
            parse_baseline(value, known, recorded)
        assert "qwen2.5-coder-1.5b, smollm2-135m" in str(raised.value)
        assert "gpt-5.2" not in str(raised.value)
        assert "claude-3-opus" not in str(raised.value)
