"""The store of headline figures and the `snap-bench history` command."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from pathlib import Path

import pytest

from snap_bench.analysis.coverage import Coverage
from snap_bench.analysis.design_subset import DesignSubset
from snap_bench.analysis.metric_tables import Metric
from snap_bench.cli import main
from snap_bench.design.config import PACKAGED, ConfigFiles
from snap_bench.history.store import append_new, config_digest, headlines_of, read_headlines
from snap_bench.judging.checks import CheckRecord, threshold_record
from snap_bench.judging.verdicts import Check, Threshold

RULE = Threshold("higher", 0.6, 0.7)


def record(model: str, instrument: str, metric: str, value: float, n: int = 100, left_out: int = 0) -> CheckRecord:
    check = Check(
        model, metric, RULE.status(value), value, Metric(value, value - 0.05, value + 0.05, n, left_out), RULE, ""
    )
    return threshold_record(f"{model}-{metric}", instrument, check, gated=True)


CHECKS = [record("model-a", "snap", "icc2_1", 0.8), record("model-a", "compass", "icc2_1", 0.5, n=40, left_out=60)]
VERDICTS = {("model-a", "snap"): ("PASS", 0.8), ("model-a", "compass"): ("FAIL", 0.4)}


def session(when: str, checks: list[CheckRecord] = CHECKS, code: str = "0.1.0+abc") -> list:  # type: ignore[type-arg]
    return headlines_of(checks, VERDICTS, when, code, "cfg123")


def test_a_repeated_result_is_stored_once_and_a_changed_one_again(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    assert append_new(store, session("2026-11-23T10:00:00+00:00")) == 2
    assert append_new(store, session("2026-11-23T11:00:00+00:00")) == 0  # a replay: identical figures
    moved = [dataclasses.replace(CHECKS[0], value=0.75), CHECKS[1]]
    assert append_new(store, session("2026-11-23T12:00:00+00:00", moved)) == 1  # only the instrument that moved
    assert append_new(store, session("2026-11-23T13:00:00+00:00", moved, code="0.1.0+def")) == 2  # new code
    rows = read_headlines(store, ["model-a"], ["snap"])
    assert [(r.recorded_at[11:13], r.value, r.code_version) for r in rows] == [
        ("10", 0.8, "0.1.0+abc"),
        ("12", 0.75, "0.1.0+abc"),
        ("13", 0.75, "0.1.0+def"),
    ]
    with sqlite3.connect(store) as connection:  # the compass placements' table is another, untouched
        assert connection.execute("SELECT COUNT(*) FROM headlines").fetchone() == (5,)


def test_the_config_digest_follows_any_yaml_change(tmp_path: Path) -> None:
    (tmp_path / "items").mkdir()
    (tmp_path / "items" / "a.yaml").write_text("x: 1\n", encoding="utf-8")
    before = config_digest(ConfigFiles(tmp_path))
    (tmp_path / "items" / "a.yaml").write_text("x: 2\n", encoding="utf-8")
    assert config_digest(ConfigFiles(tmp_path)) != before


def test_the_config_digest_is_the_packaged_ones_until_a_project_overrides_or_extends_a_file(tmp_path: Path) -> None:
    shipped = config_digest(ConfigFiles.shipped())
    assert config_digest(ConfigFiles(tmp_path / "absent")) == shipped
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "note.txt").write_text("not YAML: not in the digest\n", encoding="utf-8")
    assert config_digest(ConfigFiles(tmp_path)) == shipped
    thresholds = (PACKAGED / "thresholds.yaml").read_text(encoding="utf-8")
    (tmp_path / "thresholds.yaml").write_text(thresholds, encoding="utf-8")
    assert config_digest(ConfigFiles(tmp_path)) == shipped  # the same file, overridden by an identical copy
    (tmp_path / "thresholds.yaml").write_text(thresholds + "# edited\n", encoding="utf-8")
    overridden = config_digest(ConfigFiles(tmp_path))
    assert overridden != shipped
    (tmp_path / "models.yaml").write_text("models:\n  mine: {id: vendor/mine}\n", encoding="utf-8")
    assert config_digest(ConfigFiles(tmp_path)) not in (shipped, overridden)


def test_the_history_command_prints_a_table_per_model_and_instrument_and_a_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "history.sqlite"
    append_new(store, session("2026-11-23T10:00:00+00:00"))
    chart = tmp_path / "trend.svg"
    assert main(["history", "--store", str(store), "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "model-a · compass (1 session(s))" in out
    assert "model-a · snap (1 session(s))" in out
    assert "0.500*" in out  # on 40 of 100: marked as resting on under half of its design
    assert re.search(r"PASS\s+0\.800\s+0\.800\b", out)  # verdict, composite, icc2_1
    assert chart.read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_the_history_command_marks_an_incomplete_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "history.sqlite"
    checks = [CHECKS[0]]
    complete = {"model-a": Coverage("model-a", 1620, 1620, {})}
    stale = {"model-a": Coverage("model-a", 1620, 648, {"no recording": 972})}
    judged = {("model-a", "snap"): ("PASS", 0.8)}
    append_new(store, headlines_of(checks, judged, "2026-11-23T10:00:00+00:00", "0.1", "cfg", "s1", complete))
    moved = [dataclasses.replace(CHECKS[0], value=0.0)]
    unjudged = {("model-a", "snap"): ("INCOMPLETE", None)}
    append_new(store, headlines_of(moved, unjudged, "2026-11-23T11:00:00+00:00", "0.1", "cfg", "s2", stale))
    assert main(["history", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert re.search(r"^recorded\s+code\s+config\s+conditions\s+design\s+verdict", lines[1])
    # (design ?: these sessions say nothing of what they left out of the design)
    assert re.search(r"T10:00:00\+00:00 .* 1620/1620\s+\?\s+PASS\s+0\.800\s+0\.800\b", lines[2])
    assert re.search(r"T11:00:00\+00:00 .* INCOMPLETE 648/1620\s+\?\s+INCOMPLETE\s+0\.000\b", lines[3])
    assert "INCOMPLETE: the session did not measure every designed condition" in out


def test_the_history_command_marks_a_subset_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "history.sqlite"
    judged = {("model-a", "snap"): ("PASS", 0.8)}
    complete = {"model-a": Coverage("model-a", 1620, 1620, {})}
    append_new(store, headlines_of([CHECKS[0]], judged, "2026-11-23T10:00:00+00:00", "0.1", "cfg", "s1", complete, {}))
    two_items = {("model-a", "snap"): DesignSubset(("items M01,M02 of 25",), 120, 1620)}
    asked = {"model-a": Coverage("model-a", 120, 120, {})}  # every condition it set out to ask: not incomplete
    moved = [dataclasses.replace(CHECKS[0], value=0.9)]
    append_new(store, headlines_of(moved, judged, "2026-11-23T11:00:00+00:00", "0.1", "cfg", "s2", asked, two_items))
    assert main(["history", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert re.search(r"^recorded\s+code\s+config\s+conditions\s+design\s+verdict", lines[1])
    assert re.search(r"T10:00:00\+00:00 .* 1620/1620\s+whole\s+PASS\s+0\.800\s+0\.800\b", lines[2])
    assert re.search(
        r"T11:00:00\+00:00 .* 120/120\s+SUBSET items M01,M02 of 25; 120 of 1620 conditions\s+PASS\s+0\.800\s+0\.900\b",
        lines[3],
    )
    assert "SUBSET: the session set out to ask only part of the model's design" in out
    assert "INCOMPLETE" not in out


def test_the_history_command_without_a_store_says_how_to_get_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "run the benchmarks first" in capsys.readouterr().err


def test_the_history_command_names_the_fix_of_a_misspelt_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--store", "postgress://snap@db/history"]) == 2
    assert "did you mean postgresql://? Fix:" in capsys.readouterr().err
