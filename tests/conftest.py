"""Fixtures for the project's own tests: the fake server and a throw-away benchmark project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from snap_bench.design.config import PACKAGED, ConfigFiles
from snap_bench.instruments import Instrument, load_instruments
from snap_bench.instruments.task import TaskInstrument, task_kind
from snap_bench.session.run import SessionResult, run_session
from tests.fake_openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parent.parent


def _keep_library_modules() -> None:
    """pytester puts ``sys.modules`` back as it was before each of its tests (and each inline run): a module first
    imported during one (httpcore's transports, numpy, a session's analysis) is dropped, and the next test that
    imports it makes a second copy, with classes of another identity. httpx then no longer recognises httpcore's
    errors (a refused connection escapes as httpcore.ConnectError), and numpy refuses a second import. What the
    interpreter, the virtualenv and this checkout hold stays; a test's own modules (written into its temporary
    folder) are still dropped."""
    from _pytest.pytester import SysModulesSnapshot

    installed = (sys.prefix, sys.base_prefix, str(REPO))
    restore = SysModulesSnapshot.restore

    def restore_keeping_libraries(self: SysModulesSnapshot) -> None:
        kept = {
            name: module
            for name, module in sys.modules.items()
            if (getattr(module, "__file__", None) or sys.prefix).startswith(installed)
        }
        restore(self)
        for name, module in kept.items():
            sys.modules.setdefault(name, module)

    SysModulesSnapshot.restore = restore_keeping_libraries  # type: ignore[method-assign]


_keep_library_modules()
# One BLAS thread per test process. OpenBLAS starts one per core by default, and they spin while they wait: beside
# the other xdist worker on a 2-core machine they doubled the unit tier's CPU, for matrices too small to gain from a
# second thread. OpenBLAS reads this once, when numpy first loads, which no import above does (snap_bench loads it
# on use); the xdist workers and every process a test starts inherit it. It moves a figure in its last bit at most
# (a BLAS sum in another order), so no test compares a figure computed here with one computed elsewhere exactly;
# `pytest benchmarks` (the shipped figures) does not read this file.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Hypothesis draws 15 examples per property in a test run (an example of the gate's property judges a whole
# session); HYPOTHESIS_PROFILE=thorough draws 200, for a search of its own. Both keep the rest of Hypothesis' current
# default, its "ci" profile (derandomized, no example database) where it sees a CI environment.
settings.register_profile("quick", max_examples=15)
settings.register_profile("thorough", max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))
# The packaged defaults alone: what a session of this repository reads (it has no config/ folder of its own).
SHIPPED = ConfigFiles.shipped()
FAKE_KEY = "sk-fake-0123456789abcdefghijklmnopqrstuvwxyz"
# A small slice of the design: 1 item x 3 paraphrases x 1 prompt x 1 temperature x 2 contexts x 3 runs.
SLICE = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0")
SLICE_SIZE = 18
# Plugin behaviour is checked both in one process and with xdist's workers.
WORKERS = [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")]
BENCHMARK_MODULES = {"profile": "test_profile.py", "compass": "test_compass.py", "perturbation": "perturbation.yaml"}
# The prompt-perturbation study, a task written in YAML.
PERTURBATION = REPO / "benchmarks" / "perturbation.yaml"


@cache
def shipped_instruments() -> dict[str, Instrument]:
    """Every registered instrument and the questionnaires and tasks of benchmarks/, built from the shipped config
    (what a session of this repo loads)."""
    return load_instruments(SHIPPED, sorted((REPO / "benchmarks").glob("*.yaml")))


@pytest.fixture
def pythons_ctrl_c() -> Iterator[None]:
    """SIGINT handled by Python's own handler, as in a terminal's foreground process, and put back afterwards: a
    shell without job control (a script's ``cmd &``) starts its children with SIGINT ignored, which the session
    rightly leaves alone, and a Ctrl-C test would then test nothing."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server
    assert not server.script.errors, f"the test's answer function raised: {server.script.errors[:3]}"


def own_copy(config_dir: Path, relative: str) -> Path:
    """The project's own ``config_dir/relative``, copied from the packaged file first if it has none (a
    project overrides the defaults file by file), for a test to edit."""
    path = config_dir / relative
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGED / relative, path)
    return path


class BenchProject:
    """The shipped benchmark suite in a pytester folder, its config/ holding only a models.yaml that adds
    fake models (every other file is the packaged default until a test makes it the project's own)."""

    def __init__(
        self, where: pytest.Pytester | Path, base_url: str, instruments: tuple[str, ...] = ("profile",)
    ) -> None:
        # A pytester folder for the sessions run under pytest; a plain folder for those run in-process.
        self.pytester = where if isinstance(where, pytest.Pytester) else None
        self.root = where.path if isinstance(where, pytest.Pytester) else where
        (self.root / "config").mkdir()
        # Only the named instruments' test modules: each scenario counts the tests of one design.
        (self.root / "benchmarks").mkdir()
        for instrument in instruments:
            module = BENCHMARK_MODULES[instrument]
            shutil.copy(REPO / "benchmarks" / module, self.root / "benchmarks" / module)
        (self.root / "pytest.ini").write_text(
            "[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8"
        )
        self.write_models(base_url)

    def write_models(self, base_url: str) -> None:
        (self.root / "config" / "models.yaml").write_text(
            textwrap.dedent(f"""\
            defaults:
              base_url: {base_url}
              api_key_env: FAKE_OPENAI_KEY
            models:
              fake-model:
                id: fake/model
                price: {{input_per_million: 1.0, output_per_million: 2.0}}
              other-model:
                id: fake/other
            """),
            encoding="utf-8",
        )

    def own(self, relative: str) -> Path:
        """The project's own copy of a config file (``prompts/system/NEU.txt``), made on first use."""
        return own_copy(self.root / "config", relative)

    @property
    def cassettes(self) -> Path:
        return self.root / "cassettes"

    @property
    def out(self) -> Path:
        return self.root / "reports"

    def analysis(self) -> dict[str, Any]:
        """The session's analysis.json."""
        document: dict[str, Any] = json.loads((self.out / "analysis.json").read_text(encoding="utf-8"))
        return document

    def run(self, *args: str, gate: bool = False) -> pytest.RunResult:
        """Run the benchmarks under pytest, in a process of their own (the pytest-contract tier); without ``gate``
        the threshold checks are left out of the outcomes."""
        extra = () if gate else ("--snap-no-analysis",)
        assert self.pytester is not None, "a project in a plain folder runs its session in-process: session()"
        return self.pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", *extra, *args)

    def session(self, *args: str, gate: bool = False) -> SessionResult:
        """Run the benchmarks' session in this process, with no test runner (the session tier: the stage itself,
        snap_bench.session.run); without ``gate`` nothing is judged. Paths among ``args`` are the run's paths."""
        extra = () if gate else ("--snap-no-analysis",)
        paths = () if any(not arg.startswith("-") for arg in args) else ("benchmarks",)
        return run_session([*paths, *extra, *args], root=self.root)


def gates_against_itself(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...], check: str
) -> None:
    """Replayed with no key, saved as fake-model's baseline and gated against it: an unchanged model passes
    the gate, ``check`` (INSTRUMENT-METRIC) among its compared figures."""
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    saved = bench.root / "baselines" / "fake-model.json"
    bench.run("--model=fake-model", *workers, f"--snap-save-baseline={saved}", gate=True)
    gated = bench.run("--model=fake-model", *workers, f"--baseline={saved}", "--snap-gate=baseline", "-rA", gate=True)
    assert gated.ret == pytest.ExitCode.OK, gated.stdout.str()
    gated.stdout.fnmatch_lines([f"PASSED snap-bench::thresholds[[]fake-model-vs-fake-model@baseline-{check}*"])


@pytest.fixture
def bench(pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """A benchmark project whose sessions run under pytest (the pytest-contract tier)."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url)


@pytest.fixture
def project(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """A benchmark project whose sessions run in-process (the session tier: BenchProject.session)."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    root = tmp_path / "project"
    root.mkdir()
    return BenchProject(root, fake_server.base_url)


def set_limit(task_file: Path, limit: int | None) -> None:
    """Replace (or add, or with None remove) data.limit in a copy of the perturbation task file."""
    lines = [line for line in task_file.read_text(encoding="utf-8").splitlines() if not line.startswith("  limit:")]
    text = "\n".join(lines) + "\n"
    if limit is not None:
        text = text.replace("  gold: polarity\n", f"  gold: polarity\n  limit: {limit}\n")
    task_file.write_text(text, encoding="utf-8")


def perturbation_task(config: ConfigFiles = SHIPPED, task_file: Path = PERTURBATION) -> TaskInstrument:
    """The prompt-perturbation study (or a copy of its file), built from ``config``."""
    return task_kind(task_file, config)(config)


def spawn_benchmarks(bench: BenchProject, *args: str) -> subprocess.Popen[bytes]:
    """The project's benchmark run under pytest as a process group of its own (so a signal may reach its workers
    too), with SIGINT as a terminal delivers it."""
    command = [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "--snap-no-analysis", *args]
    return subprocess.Popen(
        command,
        cwd=bench.root,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=with_terminal_signals,
    )


def with_terminal_signals() -> None:
    """``preexec_fn`` of a benchmark run that a test interrupts: SIGINT as a terminal delivers it. A
    shell started without job control (``cmd &`` in a script, a CI runner) makes its background children
    ignore SIGINT, and an ignored disposition is inherited across exec: Python then never raises
    KeyboardInterrupt, and a Ctrl-C test would test nothing."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
