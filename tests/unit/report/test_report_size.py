"""The report's size stays bounded as the conditions grow: what it holds per condition, on a synthetic design.

Ten models over every shipped instrument are 52,040 conditions; the report's target is under 5 MB. What
grows with the conditions is the conditions table's data and the embedded observation CSV; the rest (the
charts and tables, per model and instrument) is measured at ten models by ``bench/report_size.py``
(docs/measured.md). Here both per-condition parts of a thinned design of the same models and instruments
must stay within the share of the budget left for them.
"""

from __future__ import annotations

import json
import re

from bench.synthetic_study import synthetic_observations
from snap_bench.report.conditions import conditions_data, conditions_section, embedded_conditions, pack, rows_of
from snap_bench.report.downloads import csv_download

STUDY_CONDITIONS = 52_040
# What the rest of the report weighs at ten models over every shipped instrument (the charts and tables per model
# and instrument, analysis.json, pytest-html's page and rows of checks): 2.7 MB measured by bench/report_size.py
# (docs/measured.md), rounded up. The conditions' share of the 5 MB is what is left.
REST_AT_TEN_MODELS = 2_800_000
PER_CONDITION_BUDGET = (5_000_000 - REST_AT_TEN_MODELS) / STUDY_CONDITIONS


def test_what_the_report_holds_per_condition_keeps_ten_models_under_five_megabytes() -> None:
    # ten models, one cell in four of every shipped instrument: 13,010 conditions. Per condition it holds a
    # little more than the whole study (29 bytes at 52,040: the texts and prompts stored once weigh on fewer rows)
    observations = synthetic_observations(10, parse=False, every=4)
    table = len(pack(conditions_data(observations)))
    download = len(csv_download(observations).uri)
    per_condition = (table + download) / len(observations)
    assert per_condition < PER_CONDITION_BUDGET, (table / len(observations), download / len(observations))
    # the table's data: a small share of it (measured: 5 bytes a condition at ten models, 117 as rows of JSON)
    assert table / len(observations) < 12


def test_the_embedded_table_holds_every_row_as_observed() -> None:
    observations = synthetic_observations(1, parse=False, every=16)
    section = "".join(conditions_section(observations))
    data = embedded_conditions(section)
    assert data is not None
    assert data == json.loads(json.dumps(conditions_data(observations)))
    rows = rows_of(data)
    assert [(r["model"], r["instrument"], r["condition_id"], r["answer"], r["run"]) for r in rows] == [
        (o.model, o.instrument, o.condition_id, o.raw_answer, o.run) for o in observations
    ]
    assert [r["messages"] for r in rows] == [[(m["role"], m["content"]) for m in o.messages] for o in observations]
    embedded = re.search(r'id="snap-conditions-data">(.*?)</script>', section, re.S)
    assert embedded is not None
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", embedded.group(1))  # base64: no model text can form markup
