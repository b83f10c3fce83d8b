"""Scale: the full study of many models over every shipped instrument, recorded once from a loopback
stand-in and then replayed, with its wall time, peak memory and analysis time.

The stand-in is ``tests/fake_openai_server.py`` answering every shipped instrument's conditions
(profile, compass, BFI-25, the prompt-perturbation task) with a valid answer of the form the prompt asks
for (a number of its scale, one of its labels), drawn for each model and question and moved away from that
answer more often at higher temperatures, so that runs and temperatures differ as a model's would.

The recording pass (``-n 2 --snap-concurrency``, no analysis) runs once into ``.bench-scale/`` (gitignored);
a later run finds the recordings there and only replays (a pass cut short is resumed: record mode
``once`` asks only for the conditions without a cassette). Then, each as one whole pytest session
(``-n 2``, or ``--workers``: 0 runs one process without xdist; analysis, report and every output included),
the replay of all the models and of the first ``--compare`` of them, and prints for each:

- the wall time and the cost per condition (wall time / conditions), and their ratio;
- the peak resident memory of the whole process tree (controller and xdist workers: the RSS of every
  process under the pytest process summed, read from /proc every 50 ms; the controller's own peak beside);
- the report's and the observation files' sizes;
- pytest's own floor: a bare project holding the same test ids, each passing at once, run the same way
  (pytest and xdist alone, then with pytest-html's report): what any session of that many tests holds
  before snap-bench keeps anything.

Then the analysis alone, in this process, on the observations the large replay wrote: the whole
judgement (every instrument's analysis with its bootstrap intervals and the verdicts) of all the models
and of the first ``--compare``, per condition, and their ratio (target at most 1.2x).

    .venv/bin/python -m bench.scale [--models 10] [--compare 2] [--folder .bench-scale] [--concurrency 16]
                                    [--record-only] [--skip-analysis] [--floor-only] [--workers 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.throughput import REPO, _tree_rss_kb, as_installed, timed

PYTEST = [sys.executable, "-m", "pytest"]
SHIPPED_FILES = ("test_profile.py", "test_compass.py", "bfi25.yaml", "perturbation.yaml")
MEMORY_TARGET_MB = 600.0
ANALYSIS_RATIO_TARGET = 1.2
SCALE = re.compile(r"from 1-(\d+)")
LABELS = re.compile(r"one of: ([^.]+)\.")


# -- the loopback stand-in ------------------------------------------------------------------------


def _choices(question: str) -> list[str]:
    """The answers the question allows: the numbers of its scale or its labels (['4'] where it names none)."""
    scale = SCALE.search(question)
    if scale:
        return [str(value) for value in range(1, int(scale[1]) + 1)]
    labels = LABELS.search(question)
    if labels:
        # "Choose one of: Strongly agree, ..., Strongly disagree, or No opinion if you have none."
        parts = [part.strip() for part in labels[1].split(",")]
        parts = [re.sub(r"^or |\s+if you have none$", "", part) for part in parts]
        return [part for part in parts if part]
    return ["4"]


class StandIn:
    """Answers as a model would that holds a view per question and strays from it with temperature."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked = 0

    def __call__(self, request: dict[str, Any]) -> str:
        question = str(request["messages"][-1]["content"])
        choices = _choices(question)
        key = f"{request.get('model')}\n{question}".encode()
        held = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") % len(choices)
        with self._lock:
            self._asked += 1
            asked = self._asked
        draw = random.Random(f"{key!r}-{asked}")
        temperature = float(request.get("temperature") or 0.0)
        if draw.random() < 0.05 + 0.45 * temperature:
            step = draw.choice((-1, 1)) if len(choices) > 1 else 0
            held = min(max(held + step, 0), len(choices) - 1)
        return choices[held]


# -- the project -----------------------------------------------------------------------------------


def model_names(count: int) -> list[str]:
    return [f"stand-in-{number:02d}" for number in range(1, count + 1)]


def write_project(project: Path, models: list[str], base_url: str) -> None:
    """The shipped benchmark files and a models.yaml of the stand-in models (the packaged ones stay listed)."""
    (project / "benchmarks").mkdir(parents=True, exist_ok=True)
    (project / "config").mkdir(exist_ok=True)
    for name in SHIPPED_FILES:
        shutil.copy(REPO / "benchmarks" / name, project / "benchmarks" / name)
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    entries = "".join(
        f"  {name}:\n    id: {name}\n    base_url: {base_url}\n    api_key_env: null\n" for name in models
    )
    (project / "config" / "models.yaml").write_text(f"models:\n{entries}", encoding="utf-8")


def record(folder: Path, models: list[str], concurrency: int) -> None:
    """Ask the stand-in every condition not recorded yet (the first run: all of them)."""
    from tests.fake_openai_server import FakeOpenAIServer, FakeScript

    project = folder / "project"
    # The recordings match the request's URL: a resumed pass asks on the port the first one used.
    port_file = folder / "port"
    port = int(port_file.read_text(encoding="utf-8")) if port_file.exists() else 0
    with FakeOpenAIServer(FakeScript(answer=StandIn(), logprobs=None), port=port) as server:
        port_file.write_text(server.base_url.rsplit(":", 1)[1].split("/")[0], encoding="utf-8")
        write_project(project, models, server.base_url)
        command = [
            *PYTEST,
            "benchmarks",
            "-n",
            "2",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--model={','.join(models)}",
            f"--snap-concurrency={concurrency}",
            "--snap-no-analysis",
            "--snap-record-mode=once",
            f"--snap-out={folder / 'record-out'}",
        ]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
            raise SystemExit(f"the recording pass exited with {done.returncode}")
        print(f"recorded in {time.perf_counter() - started:.0f} s ({len(server.script.requests):,} requests)")
    (folder / "recorded.json").write_text(json.dumps({"models": models}), encoding="utf-8")


def recorded_models(folder: Path) -> list[str]:
    marker = folder / "recorded.json"
    return list(json.loads(marker.read_text(encoding="utf-8"))["models"]) if marker.exists() else []


# -- one replay, measured --------------------------------------------------------------------------


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", encoding="utf-8") as file:
            return int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


@dataclass(frozen=True)
class Replay:
    models: int
    conditions: int
    wall_s: float
    tree_peak_mb: float  # the whole process tree's resident memory (controller + workers), at its peak
    controller_peak_mb: float
    status: int
    report_mb: float
    jsonl_mb: float
    csv_mb: float

    @property
    def per_condition_ms(self) -> float:
        return self.wall_s / self.conditions * 1000


def replay(folder: Path, models: list[str], workers: int = 2) -> Replay:
    out = _out(folder, len(models), workers)
    command = [
        *PYTEST,
        "benchmarks",
        *_workers(workers),
        "-p",
        "no:cacheprovider",
        "-q",
        f"--model={','.join(models)}",
        "--snap-record-mode=none",
        f"--snap-out={out}",
    ]
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=folder / "project",
        env=as_installed(None),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    tree_peak = controller_peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal tree_peak, controller_peak
        while not done.is_set():
            tree_peak = max(tree_peak, _tree_rss_kb(process.pid))
            controller_peak = max(controller_peak, _rss_kb(process.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if process.returncode not in (0, 1) or "not recorded" in output:
        sys.stderr.write(output[-3000:])
        raise SystemExit(f"the replay of {len(models)} models exited with {process.returncode}")
    with (out / "observations.jsonl").open("rb") as file:
        conditions = sum(1 for _ in file)

    def size(name: str) -> float:
        path = out / name
        return path.stat().st_size / 1e6 if path.exists() else 0.0

    return Replay(
        len(models),
        conditions,
        wall,
        tree_peak / 1024,
        controller_peak / 1024,
        process.returncode,
        size("report.html"),
        size("observations.jsonl"),
        size("observations.csv"),
    )


def _out(folder: Path, models: int, workers: int) -> Path:
    return folder / (f"out-{models}" if workers == 2 else f"out-{models}-n{workers}")


def _workers(workers: int) -> list[str]:
    """pytest's arguments for ``workers`` xdist workers (0: one process, xdist not loaded, snap-bench's own
    concurrency alone)."""
    return ["-p", "no:xdist"] if workers == 0 else ["-n", str(workers)]


# -- pytest's own floor ------------------------------------------------------------------------------

LISTED = re.compile(r"^benchmarks/([\w.]+)::(\w+)\[(.+)\]$")


def floor(folder: Path, models: list[str], workers: int = 2) -> tuple[int, float, float]:
    """(tests, peak MB of the tree, peak MB with pytest-html's report) of a bare project holding the replay's test
    ids, each test passing at once, run as the replay is (``workers``, pytest and xdist alone; then with pytest-html
    writing its report, which keeps every test's reports to the end): what any session of that many tests holds
    before snap-bench keeps anything."""
    listing = subprocess.run(
        [*PYTEST, "benchmarks", "--collect-only", "-q", "-p", "no:cacheprovider", f"--model={','.join(models)}"],
        cwd=folder / "project",
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    tests: dict[tuple[str, str], list[str]] = {}
    for line in listing.splitlines():
        match = LISTED.match(line.strip())
        if match:
            tests.setdefault((match[1], match[2]), []).append(match[3])
    bare = folder / "floor"
    shutil.rmtree(bare, ignore_errors=True)
    bare.mkdir()
    (bare / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    for number, ((_, name), ids) in enumerate(tests.items()):
        module = [
            "import pytest",
            f"IDS = {ids!r}",
            "@pytest.mark.parametrize('condition', IDS, ids=IDS)",
            f"def {name}(condition):",
            "    pass",
        ]
        (bare / f"test_floor_{number}.py").write_text("\n".join(module) + "\n", encoding="utf-8")
    command = [*PYTEST, *_workers(workers), "-p", "no:cacheprovider", "-q", "-p", "no:snap_bench"]
    alone = timed(command, bare)[1]
    with_html = timed([*command, f"--html={bare / 'report.html'}"], bare)[1]
    return sum(len(ids) for ids in tests.values()), alone, with_html


# -- the analysis alone ----------------------------------------------------------------------------


def analysis_seconds(jsonl: Path, models: list[str], project: Path) -> tuple[int, float]:
    """(conditions, seconds) of the session's judgement of ``models``' observations read from ``jsonl``."""
    from snap_bench.analysis.metric_tables import AnalysisSettings
    from snap_bench.design.config import ConfigFiles
    from snap_bench.instruments import load_instruments
    from snap_bench.judging.judgement import judge_session
    from snap_bench.judging.verdicts import load_thresholds
    from snap_bench.observations.export import read_jsonl

    wanted = set(models)
    observations = [o for o in read_jsonl(jsonl) if o.model in wanted]
    observations.sort(key=lambda o: (o.model, o.instrument, o.condition_id))
    config = ConfigFiles.shipped()
    instruments = load_instruments(config, [project / "benchmarks" / name for name in SHIPPED_FILES[2:]])
    from snap_bench.analysis.metric_specs import SHARED_METRICS

    def thresholds(name: str) -> Any:
        kind = instruments[name]
        return load_thresholds(config, name, {}, None, {**SHARED_METRICS, **kind.metrics}, kind.thresholds_section())

    started = time.perf_counter()
    judge_session(observations, instruments, AnalysisSettings(), thresholds, None, models=models)
    return len(observations), time.perf_counter() - started


# -- the bench ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=10, help="models of the full study (default 10)")
    parser.add_argument("--compare", type=int, default=2, help="the smaller study it is compared with (default 2)")
    parser.add_argument("--folder", type=Path, default=REPO / ".bench-scale", help="where the recordings are kept")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight while recording")
    parser.add_argument("--record-only", action="store_true", help="record what is missing, then stop")
    parser.add_argument("--skip-analysis", action="store_true", help="leave out the in-process analysis timing")
    parser.add_argument("--floor-only", action="store_true", help="only pytest's own floor at the full study's ids")
    parser.add_argument(
        "--workers", type=int, default=2, help="xdist workers of the replays and the floor (0: one process; default 2)"
    )
    args = parser.parse_args(argv)
    models = model_names(args.models)
    folder: Path = args.folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", flush=True)
    if not set(models) <= set(recorded_models(folder)):
        record(folder, models, args.concurrency)
    else:
        print(f"recordings of {len(models)} stand-in models found in {folder}: replay only")
    if args.record_only:
        return
    if args.floor_only:
        _print_floor(folder, models, args.workers)
        return
    runs = [replay(folder, models[: args.compare], args.workers), replay(folder, models, args.workers)]
    small, large = runs
    print("  models | conditions | wall | per condition | tree peak (target) | controller peak | report | jsonl | csv")
    for run in runs:
        target = f"< {MEMORY_TARGET_MB:.0f} MB" if run is large else ""
        print(
            f"  {run.models:>6} | {run.conditions:>10,} | {run.wall_s:>5.1f} s | {run.per_condition_ms:>7.2f} ms "
            f"| {run.tree_peak_mb:>5.0f} MB {target:<9} | {run.controller_peak_mb:>5.0f} MB | {run.report_mb:.1f} MB "
            f"| {run.jsonl_mb:.0f} MB | {run.csv_mb:.0f} MB",
            flush=True,
        )
    print(
        f"cost per condition, {large.models} models / {small.models}: "
        f"{large.per_condition_ms / small.per_condition_ms:.2f}x; whole tree at {large.models} models "
        f"{large.tree_peak_mb:.0f} MB: {'met' if large.tree_peak_mb < MEMORY_TARGET_MB else 'NOT met'} "
        f"(target < {MEMORY_TARGET_MB:.0f} MB)"
    )
    _print_floor(folder, models, args.workers)
    if not args.skip_analysis:
        jsonl = _out(folder, args.models, args.workers) / "observations.jsonl"
        timed = [analysis_seconds(jsonl, models[:count], folder / "project") for count in (args.compare, args.models)]
        per = [seconds / count * 1000 for count, seconds in timed]
        for (count, seconds), each, n in zip(timed, per, (args.compare, args.models), strict=True):
            print(f"analysis of {n} models ({count:,} conditions): {seconds:.1f} s, {each:.3f} ms per condition")
        ratio = per[1] / per[0]
        print(
            f"analysis per condition, {args.models} models / {args.compare}: {ratio:.2f}x "
            f"({'met' if ratio <= ANALYSIS_RATIO_TARGET else 'NOT met'}, target at most {ANALYSIS_RATIO_TARGET}x)"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def _print_floor(folder: Path, models: list[str], workers: int) -> None:
    tests, alone, with_html = floor(folder, models, workers)
    print(
        f"pytest's floor: a bare project with the {tests:,} test ids ({' '.join(_workers(workers))}, every test "
        "passing at once): whole tree "
        f"{alone:.0f} MB; with pytest-html's report {with_html:.0f} MB "
        f"(target for snap-bench < {MEMORY_TARGET_MB:.0f} MB)",
        flush=True,
    )


if __name__ == "__main__":
    main()
