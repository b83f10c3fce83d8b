"""Bad option values are usage problems (pytest's exit 4) naming the option, the value and the fix, raised before
anything is asked; never another exception. How pytest prints them: tests/contract/test_option_values.py."""

from __future__ import annotations

import fnmatch

import pytest

from snap_bench.session.run import run_session
from snap_bench.session.settings import UsageProblem
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--model=fake-model", "--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")

BAD_VALUES = [
    pytest.param(
        {"snap_timeout": "abc"}, (), "*snap_timeout*'abc' is not a number of seconds > 0*=120*", id="timeout-abc"
    ),
    pytest.param({"snap_timeout": "0"}, (), "*snap_timeout*'0' is not a number of seconds > 0*", id="timeout-0"),
    pytest.param({}, ("--snap-rate-limit=nan",), "*--snap-rate-limit*'nan' is not a finite number > 0*", id="rate-nan"),
    pytest.param({}, ("--snap-max-cost=nan",), "*--snap-max-cost*'nan' is not a finite number > 0*", id="cost-nan"),
    pytest.param({}, ("--snap-max-cost=inf",), "*--snap-max-cost*'inf' is not a finite number > 0*", id="cost-inf"),
    pytest.param({}, ("--snap-pace=slow",), "*--snap-pace*invalid choice*slow*adaptive*fixed*", id="pace-slow"),
]


@pytest.mark.parametrize(("ini", "args", "message"), BAD_VALUES)
def test_bad_option_value_is_a_usage_problem(
    project: BenchProject, fake_server: FakeOpenAIServer, ini: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    # pytest makes both a usage error: an ini value the settings refuse, a value argparse's type= refuses
    with pytest.raises((UsageProblem, ValueError)) as refused:
        run_session(["benchmarks", "--snap-no-analysis", *SMALL, *args], root=project.root, ini=ini)
    assert fnmatch.fnmatch(str(refused.value), message), str(refused.value)
    assert fake_server.script.requests == []


def test_out_dir_that_cannot_be_created_is_a_usage_problem(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    blocker = project.root / "not-a-folder"
    blocker.write_text("a file where the output folder should go\n", encoding="utf-8")
    with pytest.raises(UsageProblem) as refused:
        project.session(*SMALL, f"--snap-out={blocker / 'reports'}")
    expected = "*--snap-out*reports cannot be created*not-a-folder: it is not a folder*--snap-out=DIR*"
    assert fnmatch.fnmatch(str(refused.value), expected), str(refused.value)
    assert fake_server.script.requests == []
