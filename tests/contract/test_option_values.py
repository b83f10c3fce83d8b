"""pytest's contract for bad option values: a usage error (exit 4) on stderr naming the option, the value and the
fix, never a traceback or an INTERNALERROR; a value argparse refuses, and a folder the session refuses with xdist's
workers. Every value's message: tests/session/test_option_values.py. Two pytest sessions."""

from __future__ import annotations

import pytest

from tests.conftest import BenchProject

SMALL = ("--model=fake-model", "--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")


def no_traceback(result: pytest.RunResult) -> None:
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert "INTERNALERROR" not in output


def test_a_value_the_option_refuses_is_a_usage_error(bench: BenchProject) -> None:
    result = bench.run(*SMALL, "--snap-max-cost=nan")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-max-cost*'nan' is not a finite number > 0*"])
    no_traceback(result)


def test_out_dir_that_cannot_be_created_is_a_usage_error_with_xdist(bench: BenchProject) -> None:
    blocker = bench.root / "not-a-folder"
    blocker.write_text("a file where the output folder should go\n", encoding="utf-8")
    result = bench.run(*SMALL, f"--snap-out={blocker / 'reports'}", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--snap-out*reports cannot be created*not-a-folder: it is not a folder*--snap-out=DIR*"]
    )
    no_traceback(result)
