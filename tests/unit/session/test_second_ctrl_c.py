"""A second Ctrl-C while an interrupted session ends (snap_bench.wire.end_files), on the stage itself
(snap_bench.session.stage.BenchmarkSession, driven as the plugin's hooks drive it): the Ctrl-C is a
real SIGINT the process sends itself at a chosen point of the writing, so nothing depends on timing.

- the session end goes on to its last line: no KeyboardInterrupt out of it, the status it says is pytest's
  interrupted status 2, and it names the files it did not write;
- every file of the session end is whole or absent, even where a KeyboardInterrupt does cut its writing
  half-way (a Ctrl-C where Python's own handler is in place, or a kill): the previous file stays.
"""

from __future__ import annotations

import csv
import io
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snap_bench.judging.baseline import write_baseline
from snap_bench.judging.judgement import Judgement
from snap_bench.observations.export import ObservationWriter
from snap_bench.observations.observation import Observation
from snap_bench.report.analysis_document import write_analysis_document
from snap_bench.report.changes_file import write_changes
from snap_bench.report.ci_outputs import write_ci_summary
from snap_bench.report.item_changes_file import write_item_changes
from snap_bench.session.command_line import CommandLine
from snap_bench.session.outputs import Artefacts, write_csv
from snap_bench.session.run import INTERRUPTED
from snap_bench.session.settings import SessionSettings
from snap_bench.session.stage import BenchmarkSession
from snap_bench.wire.end_files import LaterCtrlC


def observation(raw_answer: object) -> Observation:
    return Observation(
        model="m",
        instrument="profile",
        condition_id="M01-P1-NEU-t0-C0-r1",
        cell="M01-P1-NEU-t0-C0",
        item="M01",
        factors={"system_prompt": "NEU"},
        temperature=0.0,
        run=1,
        messages=[],
        raw_answer=raw_answer,  # type: ignore[arg-type]
        score=4,
        keyed_score=4.0,
        code=None,
        reason="",
    )


class CtrlCWhenWritten:
    """A value whose writing into observations.csv sends the process a SIGINT: the user's second Ctrl-C, at
    that moment."""

    def __str__(self) -> str:
        signal.raise_signal(signal.SIGINT)
        return "4"


@pytest.mark.usefixtures("pythons_ctrl_c")
def test_a_second_ctrl_c_while_the_session_end_writes_stops_it_between_whole_files(tmp_path: Path) -> None:
    (tmp_path / "benchmarks").mkdir()
    settings = SessionSettings.from_config(CommandLine(["benchmarks", "--snap-out=out"], root=tmp_path))
    session = BenchmarkSession(settings)
    out = session.options.out_dir
    # A benchmark session on the controller, as its start leaves it: observations kept, written as they came.
    session.active = True
    session._writer = ObservationWriter(out)
    session.ledger.observations += [observation("5"), observation(CtrlCWhenWritten())]
    python_handler = signal.getsignal(signal.SIGINT)
    try:
        # The first Ctrl-C, which ended the tests: what the plugin's pytest_keyboard_interrupt does with it ...
        session.later_ctrl_c.take_over()
        session.interrupt()
        # ... and its pytest_sessionfinish, with pytest's interrupted status
        session.close_asking(interrupted=True)
        decision = session.finish(INTERRUPTED)
    except KeyboardInterrupt:
        pytest.fail("the second Ctrl-C raised KeyboardInterrupt in the middle of the session's end")
    finally:
        session.later_ctrl_c.give_back()
        signal.signal(signal.SIGINT, python_handler)
    # The file being written when it came is whole; the ones after it were not written, and are named.
    with (out / "observations.csv").open(encoding="utf-8", newline="") as handle:
        assert [row["raw_answer"] for row in csv.DictReader(handle)] == ["5", "4"]
    assert (out / "summary.md").is_file()
    assert not (out / "session.json").exists()
    assert decision is session.exit_decision
    assert decision.code == INTERRUPTED
    assert decision.reason.endswith("; a second Ctrl-C ended the session before it wrote session.json")


@pytest.mark.usefixtures("pythons_ctrl_c")
def test_the_session_gives_pythons_ctrl_c_back_when_it_ends() -> None:
    """The stage's part; that the plugin's pytest_unconfigure calls it is tests/contract/test_ctrl_c.py's."""
    later_ctrl_c = LaterCtrlC()
    python_handler = signal.getsignal(signal.SIGINT)
    try:
        later_ctrl_c.take_over()
        assert signal.getsignal(signal.SIGINT) is not python_handler
        later_ctrl_c.give_back()
        assert signal.getsignal(signal.SIGINT) is python_handler
    finally:
        signal.signal(signal.SIGINT, python_handler)


def _write_csv(path: Path) -> None:
    write_csv(path / "observations.csv", [observation("5")] * 50)


def _write_summary(path: Path) -> None:
    write_ci_summary(path, Judgement(), None)


def _write_session_meta(path: Path) -> None:
    Artefacts(path, path).write_session_meta({"models": ["m"] * 50})


def _write_analysis(path: Path) -> None:
    write_analysis_document(path / "analysis.json", {"models": ["m"] * 50})


def _write_baseline(path: Path) -> None:
    write_baseline(path / "m.json", {"version": 1, "model": "m", "observations": [{"score": 4}] * 50})


def _write_changes(path: Path) -> None:
    write_changes(path / "changes.csv", [])


def _write_item_changes(path: Path) -> None:
    write_item_changes(path / "item_changes.csv", [])


WRITERS: dict[str, Callable[[Path], None]] = {
    "observations.csv": _write_csv,
    "summary.md": _write_summary,
    "session.json": _write_session_meta,
    "analysis.json": _write_analysis,
    "m.json": _write_baseline,
    "changes.csv": _write_changes,
    "item_changes.csv": _write_item_changes,
}


class CutHalfWay:
    """Every file opened for writing takes half of what it is given, then a KeyboardInterrupt comes."""

    def __init__(self, real_open: Callable[..., Any]) -> None:
        self.real_open = real_open

    def __call__(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        opened = self.real_open(file, mode, *args, **kwargs)
        if "w" in mode:
            real_write = opened.write

            def write(data: Any) -> int:
                real_write(data[: len(data) // 2])
                opened.flush()
                raise KeyboardInterrupt

            opened.write = write
        return opened


@pytest.mark.parametrize("name", list(WRITERS))
def test_an_interrupt_in_the_middle_of_an_output_file_leaves_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    WRITERS[name](tmp_path)
    previous = (tmp_path / name).read_bytes()
    monkeypatch.setattr(io, "open", CutHalfWay(io.open))
    with pytest.raises(KeyboardInterrupt):
        WRITERS[name](tmp_path)
    monkeypatch.undo()
    assert (tmp_path / name).read_bytes() == previous
    assert sorted(path.name for path in tmp_path.iterdir()) == [name], "a temporary file was left behind"
    if name.endswith(".json"):
        json.loads(previous)
