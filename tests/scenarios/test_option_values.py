"""Bad option values are usage errors (exit 4) naming the option, the value and the fix; never a traceback."""

from __future__ import annotations

import pytest

from tests.conftest import BenchProject

SMALL = ("--model=fake-model", "--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")

BAD_VALUES = [
    pytest.param(
        ("-o", "snap_timeout=abc"), "*snap_timeout*'abc' is not a number of seconds > 0*=120*", id="timeout-abc"
    ),
    pytest.param(("-o", "snap_timeout=0"), "*snap_timeout*'0' is not a number of seconds > 0*", id="timeout-0"),
    pytest.param(("--snap-rate-limit=nan",), "*--snap-rate-limit*'nan' is not a finite number > 0*", id="rate-nan"),
    pytest.param(("--snap-max-cost=nan",), "*--snap-max-cost*'nan' is not a finite number > 0*", id="cost-nan"),
    pytest.param(("--snap-max-cost=inf",), "*--snap-max-cost*'inf' is not a finite number > 0*", id="cost-inf"),
    pytest.param(("--snap-pace=slow",), "*--snap-pace*invalid choice*slow*adaptive*fixed*", id="pace-slow"),
]


@pytest.mark.parametrize(("args", "message"), BAD_VALUES)
def test_bad_option_value_is_a_usage_error(bench: BenchProject, args: tuple[str, ...], message: str) -> None:
    result = bench.run(*SMALL, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert "INTERNALERROR" not in output


@pytest.mark.parametrize("workers", [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")])
def test_out_dir_that_cannot_be_created_is_a_usage_error(bench: BenchProject, workers: tuple[str, ...]) -> None:
    blocker = bench.root / "not-a-folder"
    blocker.write_text("a file where the output folder should go\n", encoding="utf-8")
    result = bench.run(*SMALL, f"--snap-out={blocker / 'reports'}", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--snap-out*reports cannot be created*not-a-folder: it is not a folder*--snap-out=DIR*"]
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert "INTERNALERROR" not in output
