"""The profile report shows the judged figures per temperature first, with coverage and status."""

from __future__ import annotations

from typing import Any

from snap_bench.instruments import metric_catalogue
from snap_bench.instruments.questionnaire.report import levels_of, planner_table, temperature_table

THRESHOLDS = {"dependability": {"better": "higher", "minimum": 0.6, "target": 0.7, "excellent": 0.8}}


def entry(**metrics: dict[str, Any]) -> dict[str, Any]:
    return {"metrics": metrics}


def test_every_temperature_in_order_with_its_status_and_coverage() -> None:
    steady = entry(
        **{
            "dependability[t1]": {
                "value": 0.65,
                "ci_low": 0.5,
                "ci_high": 0.75,
                "coverage": 1.0,
                "status": "acceptable",
            },
            "dependability[t0]": {
                "value": 0.9,
                "ci_low": 0.85,
                "ci_high": 0.95,
                "coverage": 1.0,
                "status": "excellent",
            },
            "run_sd[t0]": {"value": 0.04},
        }
    )
    mute = entry(**{"dependability[t0]": {"value": 0.95, "coverage": 47 / 540, "status": "insufficient data", "n": 47}})
    models = [("steady", steady), ("mute", mute)]
    assert levels_of(models, "dependability") == ["t0", "t1"]
    html = temperature_table(models, THRESHOLDS, metric_catalogue())
    assert html.index(">t0<") < html.index(">t1<")
    assert "snap-status-excellent" in html
    assert "snap-status-acceptable" in html
    assert "snap-status-insufficient-data" in html
    assert ">9%<" in html  # 47 of 540 answers
    assert ">0.04<" in html


def test_the_planner_table_says_when_no_count_reaches_a_target() -> None:
    details = {
        "g_study": {
            "t0": {
                "planner": [
                    {
                        "facet": "run",
                        "phi": {"0.70": 2, "0.80": None, "0.90": None},
                        "phi_ceiling": 0.78,
                        "g": {"0.70": 1, "0.80": 3, "0.90": None},
                        "g_ceiling": 0.85,
                    }
                ]
            }
        }
    }
    html = planner_table({"details": details})
    assert "<td>2</td><td>—</td><td>—</td><td>0.78</td>" in html
    assert "<td>1</td><td>3</td><td>—</td><td>0.85</td>" in html
    assert planner_table({}) == ""
