"""The psychometric profile was called `snap`: the old marker name keeps working for one release, with a
deprecation warning that says what to write instead."""

from __future__ import annotations

import pytest

from tests.conftest import SLICE, SLICE_SIZE, BenchProject

OLD_MODULE = """
import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("snap")


def test_likert(case: Case, ask: Ask) -> None:
    ask(case)
"""


def test_the_old_marker_name_runs_the_profile_and_warns(bench: BenchProject) -> None:
    (bench.root / "benchmarks" / "test_profile.py").unlink()
    (bench.root / "benchmarks" / "test_snap.py").write_text(OLD_MODULE, encoding="utf-8")
    result = bench.run("--model=fake-model", *SLICE)
    result.assert_outcomes(passed=SLICE_SIZE)
    result.stdout.fnmatch_lines(["*DeprecationWarning: the instrument 'snap' is now called 'profile'*"])
    # the recordings land in the new name's folder, where the shipped ones are
    assert len(list((bench.cassettes / "fake-model" / "profile").glob("*.json"))) == SLICE_SIZE


def test_an_unknown_instrument_is_a_usage_error_naming_the_known_ones(bench: BenchProject) -> None:
    (bench.root / "benchmarks" / "test_profile.py").write_text(OLD_MODULE.replace('"snap"', '"profil"'), "utf-8")
    result = bench.run("--model=fake-model", *SLICE)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error: nothing runs
    result.stdout.fnmatch_lines(["*unknown instrument 'profil'*known: profile, compass, perturbation*"])
