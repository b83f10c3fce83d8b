"""The report's size stays bounded as the conditions grow: what it holds per condition, on a synthetic design.

Ten models over every shipped instrument are 52,040 conditions; the report's target is under 5 MB. What
grows with the conditions is the conditions table's data and the embedded observation CSV; the rest (the
charts and tables, per model and instrument) is measured at ten models by ``bench/report_size.py``
(docs/measured.md). Here both per-condition parts of a smaller design of the same instruments must stay
within the share of the budget left for them.
"""

from __future__ import annotations

import json
import re

from bench.synthetic_study import synthetic_observations
from snap_bench.report.conditions import conditions_data, conditions_section, embedded_conditions, pack, rows_of
from snap_bench.report.downloads import csv_download

STUDY_CONDITIONS = 52_040
# Of the 5 MB: at most 2.5 MB for what grows with the conditions (measured at ten models: 0.39 MB of table
# data and 1.77 MB of CSV), the rest for the charts and tables drawn per model and instrument.
PER_CONDITION_BUDGET = 2_500_000 / STUDY_CONDITIONS


def test_what_the_report_holds_per_condition_keeps_ten_models_under_five_megabytes() -> None:
    # two models, one cell in two of every shipped instrument: 5,204 conditions
    observations = synthetic_observations(2, parse=False, every=2)
    table = len(pack(conditions_data(observations)))
    download = len(csv_download(observations).uri)
    per_condition = (table + download) / len(observations)
    assert per_condition < PER_CONDITION_BUDGET, (table / len(observations), download / len(observations))
    # the table's data: a small share of it (measured: 7 bytes a condition at ten models, 145 as rows of JSON)
    assert table / len(observations) < 20


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
