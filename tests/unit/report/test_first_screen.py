"""The first screen, the checks' records and the conditions table's data, on hand-built inputs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from typing import Any

import pytest

from snap_bench.analysis.metric_tables import Metric
from snap_bench.instruments import metric_catalogue
from snap_bench.judging.checks import CheckRecord, checks_table, threshold_record
from snap_bench.judging.verdicts import Check, Threshold
from snap_bench.observations.observation import Observation
from snap_bench.report.conditions import conditions_data, conditions_section, embedded_conditions, rows_of, unpack
from snap_bench.report.first_screen import (
    agreement_chart,
    deciding_check,
    report_title,
    temperature_agreement,
    verdict_matrix,
)
from tests.unit.report.fake_data import XSS_PAYLOADS, fake_observations

HIGHER = Threshold("higher", 0.6, 0.7)
LOWER = Threshold("lower", 0.1, 0.1)


def check(metric: str, value: float, threshold: Threshold, *, n: int = 100, left_out: int = 0) -> Check:
    status = threshold.status(value)
    return Check("m", metric, status, value, Metric(value, value - 0.1, value + 0.1, n, left_out), threshold, "msg")


def record(metric: str, value: float, threshold: Threshold = HIGHER, **counts: int) -> CheckRecord:
    return threshold_record(f"m-{metric}", "snap", check(metric, value, threshold, **counts), gated=True)


def test_a_record_carries_the_margin_on_the_good_side_and_its_decision() -> None:
    short = record("icc2_1", 0.5)
    assert short.margin == pytest.approx(-0.1)
    assert short.decision == "fail"
    clear = record("unscored_rate", 0.04, LOWER)
    assert clear.margin == pytest.approx(0.06)  # a lower-is-better figure under its maximum is on the good side
    assert clear.decision == "pass"
    ungated = threshold_record("m-x", "snap", check("x", 0.5, HIGHER), gated=False)
    assert ungated.decision == "ungated"


def test_junit_properties_hold_every_figure_and_no_none() -> None:
    properties = dict(record("icc2_1", 0.5, n=47, left_out=493).properties())
    assert properties["value"] == 0.5
    assert properties["n"] == 47
    assert properties["n_designed"] == 540
    assert properties["decision"] == "fail"
    assert properties["rule"] == "minimum >= 0.6, target >= 0.7"
    assert None not in properties.values()


def test_the_table_of_checks_lists_failures_first_and_hatches_a_thin_figure() -> None:
    records = [record("good", 0.9), record("thin", 0.9, n=47, left_out=493), record("bad", 0.2)]
    table = checks_table(records)
    assert table.index(">bad<") < table.index(">good<")
    thin_row = re.search(r'<tr[^>]*id="snap-check-m-thin".*?</tr>', table)
    assert thin_row is not None
    assert "snap-thin" in thin_row.group(0)
    assert "47 / 540" in thin_row.group(0)
    assert "snap-thin" not in re.search(r'<tr[^>]*id="snap-check-m-good".*?</tr>', table).group(0)  # type: ignore[union-attr]


def test_the_deciding_check_of_a_fail_is_the_unscored_rate_before_any_correlation() -> None:
    checks = [record("icc2_1", 0.1), record("unscored_rate", 0.7, LOWER), record("test_retest_r", 0.55)]
    assert deciding_check("FAIL", checks).metric == "unscored_rate"  # type: ignore[union-attr]
    without = [c for c in checks if c.metric != "unscored_rate"]
    assert deciding_check("FAIL", without).metric == "icc2_1"  # type: ignore[union-attr]  # furthest short
    borderline = [record("icc2_1", 0.65), record("test_retest_r", 0.62), record("cv", 0.9)]
    assert deciding_check("BORDERLINE", borderline).metric == "test_retest_r"  # type: ignore[union-attr]
    assert deciding_check("PASS", [record("icc2_1", 0.9)]) is None


def matrix_document() -> dict[str, Any]:
    return {
        "instruments": {
            "first": {
                "title": "first instrument",
                "models": {
                    "model-b": {"verdict": "PASS", "composite": 0.91, "composite_ci": [0.85, 0.95]},
                    XSS_PAYLOADS[0]: {"verdict": "FAIL"},
                },
            },
            "second": {
                "title": "second",
                "models": {
                    "model-b": {
                        "verdict": "BORDERLINE",
                        "composite": 0.5,
                        "composite_ci": [0.4, 0.6],
                        "tied_with": ["x"],
                    }
                },
            },
        }
    }


def test_the_matrix_has_a_verdict_per_model_and_instrument_and_escapes_names() -> None:
    checks = [dataclasses.replace(record("unscored_rate", 0.7, LOWER), model=XSS_PAYLOADS[0], instrument="first")]
    matrix = verdict_matrix(matrix_document(), checks, metric_catalogue())
    assert "<script>" not in matrix
    assert "&lt;script&gt;" in matrix
    assert re.findall(r'<th title="[^"]*">(\w+)</th>', matrix) == ["first", "second"]
    assert matrix.count("snap-badge-") == 3
    assert "not run" in matrix  # the payload-named model ran no second instrument
    assert "unscored answers 0.700" in matrix
    # the composite with its interval, and a tie said where intervals overlap
    assert '"composite 0.91 [0.85, 0.95]">0.91 [0.85, 0.95]<' in matrix
    assert '"composite 0.50 [0.40, 0.60] (tied)">0.50 [0.40, 0.60] (tied)<' in matrix
    assert "every judged figure reaches its target" in matrix


def test_the_title_names_the_product_the_models_and_the_date() -> None:
    title = report_title(["qwen", "smol"], dt.date(2026, 11, 23))
    assert title.startswith("snap-bench")
    assert "qwen, smol" in title
    assert "2026-11-23" in title


def steady_then_random(observations: list[Observation]) -> list[Observation]:
    """Runs agree exactly at temperature 0 and never at 1."""
    return [dataclasses.replace(o, score=3 if o.temperature == 0.0 else 2 * o.run) for o in observations]


def test_agreement_per_temperature_from_the_observations() -> None:
    observations = [o for o in fake_observations(("fake-a",)) if o.code is None]
    points = {p.temperature: p for p in temperature_agreement(steady_then_random(observations))}
    assert points[0.0].agree == 1.0
    assert points[1.0].agree == 0.0
    assert points[0.0].ci_low is not None
    assert points[0.0].ci_low < 1.0 == points[0.0].ci_high
    assert not points[0.0].thin


def test_agreement_leaves_out_cells_with_an_unscored_run_and_marks_a_thin_point() -> None:
    observations = fake_observations(("fake-a",))
    refused = [
        dataclasses.replace(o, code=-1, score=None) if o.run == 1 and o.item != "M01" else o for o in observations
    ]
    points = temperature_agreement(refused)
    assert all(p.used < p.designed for p in points)
    assert all(p.thin for p in points)  # M01's cells only: a third of the design
    chart = agreement_chart(points)
    assert chart.count("snap-thin-point") == len(points)


def test_the_conditions_data_store_each_text_once_and_cannot_close_their_script() -> None:
    observations = fake_observations(("fake-a",))
    poisoned = [dataclasses.replace(observations[0], raw_answer="</script><script>alert(1)</script>"), *observations]
    data = conditions_data(poisoned)
    assert len(data["ids"]) == len(poisoned)
    assert all(len(column) == len(poisoned) for column in data["values"])
    assert len(data["strings"]) == len(set(data["strings"]))
    assert len(data["prompts"]) == len({tuple(map(str, o.messages)) for o in poisoned})  # each prompt once
    rows = rows_of(data)
    assert {row["score"] for row, o in zip(rows, poisoned, strict=True) if o.code is not None} == {None}
    assert [row["answer"] for row in rows[:1]] == ["</script><script>alert(1)</script>"]
    assert [(m["role"], m["content"]) for m in poisoned[5].messages] == rows[5]["messages"]
    section = "".join(conditions_section(poisoned))
    embedded = re.search(r'id="snap-conditions-data">(.*?)</script>', section, re.S)
    assert embedded is not None
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", embedded.group(1))  # base64: no markup can be formed in it
    assert unpack(embedded.group(1)) == json.loads(json.dumps(data))
    assert embedded_conditions(section) == json.loads(json.dumps(data))
