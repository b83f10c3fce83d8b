"""Throughput: live asking at a set concurrency against a bare httpx loop, and replay against bare pytest.

Live: a loopback OpenAI-compatible server (tests/fake_openai_server.py, in a process of its own) answers
every request after ``--latency`` seconds. The profile design runs through snap-bench (``-n 2
--snap-concurrency=C``, a fresh cassette folder each time); then a bare httpx loop (bench/raw_loop.py)
sends the very same request bodies (read back from those cassettes) with C in flight: the ceiling for
this server. Every tool, the loop included, is timed as a whole process, start-up included. Each
snap-bench figure is the wall time of the whole pytest session (start-up, analysis and report
included) and the peak memory of its whole process tree (RSS summed over the controller and workers,
sampled every 50 ms).

The server keeps every request it gets, and each tool's are compared with the bodies snap-bench recorded
(as a multiset): the last column says "same" when a tool sent exactly that workload.

``--peers`` runs promptfoo and inspect_ai on the same requests at the same concurrency too (bench/peers.py:
installed on demand into bench/.peers/, never dependencies of snap-bench; one that cannot be installed or
fails is reported and the bench goes on).

Replay: ``pytest benchmarks -n 2`` over the shipped recordings against a throw-away project with the
same test ids, each a trivially passing parametrised test, run alternately; medians of ``--repeat``.

    .venv/bin/python -m bench.throughput [--quick] [--concurrency 8,32] [--latency 0.2] [--repeat 3]
                                         [--live-repeat 1] [--skip-live] [--skip-replay] [--peers]

``--quick`` runs the profile design's conditions of three of its items and one replay repeat.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.peers import Peer, Unavailable, install_peers

REPO = Path(__file__).resolve().parent.parent
PYTEST = [sys.executable, "-m", "pytest"]
QUICK_ITEMS = "M01,M02,P01"
ID_LINE = re.compile(r"^(benchmarks/\w+\.py)::(\w+)\[(.+)\]$")


# -- measuring a process tree --------------------------------------------------------------------


def _tree_rss_kb(root: int) -> int:
    """Resident memory of ``root`` and all its descendants, from /proc (Linux)."""
    children: dict[int, list[int]] = defaultdict(list)
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm", encoding="utf-8") as file:
                pages = int(file.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children[int(fields[1])].append(int(entry))
        rss[int(entry)] = pages * os.sysconf("SC_PAGE_SIZE") // 1024
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


@dataclass(frozen=True)
class Measured:
    wall_s: float
    peak_mb: float  # the peak of the whole process tree's resident memory
    status: int
    output: str


def as_installed(env: dict[str, str] | None) -> dict[str, str]:
    """``env`` (or this process's) without PYTHONDONTWRITEBYTECODE: each tool is timed as installed software
    runs, its compiled modules cached. A shell that sets it (this project's test machine does) makes every
    process compile an editable install's modules at each start, and pytest rewrite a plugin's: 2 to 4 s of
    a live session's three processes on two cores."""
    return {name: value for name, value in (env or os.environ).items() if name != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Run one command; its wall time and the peak resident memory of its process tree (sampled every 50 ms)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=as_installed(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(process.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    return Measured(wall, peak / 1024, process.returncode, output)


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak MB of the process tree, exit status) of a pytest command (0 or 1 expected)."""
    run = measure(command, cwd, env)
    if run.status not in (0, 1):
        sys.stderr.write(run.output[-3000:])
        raise SystemExit(f"{' '.join(command)} exited with {run.status}")
    return run.wall_s, run.peak_mb, run.status


# -- replay against bare pytest ------------------------------------------------------------------


def bare_project(folder: Path) -> int:
    """A project with the shipped benchmark's test ids, each test trivially passing; returns the count."""
    listing = subprocess.run(
        [*PYTEST, "benchmarks", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    modules: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for line in listing.splitlines():
        match = ID_LINE.match(line.strip())
        if match:
            modules[Path(match[1]).name][match[2]].append(match[3])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    count = 0
    for module, tests in modules.items():
        lines = ["import pytest", ""]
        for name, ids in tests.items():
            count += len(ids)
            lines += [
                f"IDS_{name} = {ids!r}",
                f"@pytest.mark.parametrize('condition', IDS_{name}, ids=IDS_{name})",
                f"def {name}(condition):",
                "    pass",
                "",
            ]
        (folder / module).write_text("\n".join(lines), encoding="utf-8")
    return count


def replay_comparison(repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="snap-throughput-") as temporary:
        root = Path(temporary)
        count = bare_project(root / "bare")
        replay_cmd = [*PYTEST, "benchmarks", "-n", "2", "-p", "no:cacheprovider", "-q", f"--snap-out={root / 'out'}"]
        # The bare project runs without snap-bench's plugin: it is pytest and xdist alone.
        bare_cmd = [*PYTEST, "-n", "2", "-p", "no:cacheprovider", "-q", "-p", "no:snap_bench"]
        replays, bares, peaks = [], [], []
        for _ in range(repeat):
            wall, peak, status = timed(replay_cmd, REPO)
            if status != 1:
                raise SystemExit(f"replay exited with {status}, expected 1 (the shipped models fail thresholds)")
            replays.append(wall)
            peaks.append(peak)
            bares.append(timed(bare_cmd, root / "bare")[0])
    replay, bare = statistics.median(replays), statistics.median(bares)
    return {"tests": count, "replay_s": replay, "bare_s": bare, "ratio": replay / bare, "replay_peak_mb": max(peaks)}


# -- live against a bare httpx loop --------------------------------------------------------------


def start_server(latency: float, capture: Path) -> tuple[subprocess.Popen[str], str]:
    """The loopback server, in a process of its own; it appends every request it gets to ``capture`` (JSON lines)."""
    code = (
        "import json, sys, threading, time\n"
        "from tests.fake_openai_server import FakeOpenAIServer, FakeScript\n"
        f"log, lock = open({str(capture)!r}, 'a', encoding='utf-8'), threading.Lock()\n"
        "def answer(request):\n"
        "    with lock:\n"
        "        log.write(json.dumps(request) + '\\n')\n"
        "        log.flush()\n"
        "    return '4'\n"
        f"with FakeOpenAIServer(FakeScript(answer=answer, latency_s={latency!r})) as server:\n"
        "    print(server.base_url, flush=True)\n"
        "    while True: time.sleep(3600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


class Capture:
    """The requests the server got since the last look."""

    def __init__(self, path: Path) -> None:
        self.path, self._offset = path, 0

    def since_last(self) -> list[dict[str, Any]]:
        with self.path.open("rb") as file:
            file.seek(self._offset)
            data = file.read()
        self._offset += len(data)
        return [json.loads(line) for line in data.splitlines() if line.strip()]


def _canonical(body: dict[str, Any]) -> str:
    """A request's model, messages and fields, numbers as floats (JavaScript sends 0 where Python sends 0.0)."""
    return json.dumps(
        {key: float(value) if type(value) in (int, float) else value for key, value in body.items()}, sort_keys=True
    )


def same_requests(sent: list[dict[str, Any]], expected: list[dict[str, Any]]) -> str:
    """'same' if the server got exactly the expected requests (as a multiset), else what differs."""
    got, wanted = Counter(map(_canonical, sent)), Counter(map(_canonical, expected))
    if got == wanted:
        return "same"
    extra, missing = got - wanted, wanted - got
    example = next(iter(extra), "")[:160]
    return f"{sum(missing.values())} missing, {sum(extra.values())} other" + (f" (e.g. {example})" if example else "")


def live_project(folder: Path, base_url: str) -> None:
    (folder / "config").mkdir(parents=True)  # its models.yaml adds the fake model to the packaged ones
    (folder / "benchmarks").mkdir()
    shutil.copy(REPO / "benchmarks" / "test_profile.py", folder / "benchmarks" / "test_profile.py")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "config" / "models.yaml").write_text(
        f"models:\n  fake-model:\n    id: fake/model\n    base_url: {base_url}\n    api_key_env: null\n",
        encoding="utf-8",
    )


def recorded_bodies(cassettes: Path) -> list[bytes]:
    """The request bodies snap-bench recorded (the last attempt of each condition)."""
    return [
        json.loads(path.read_text(encoding="utf-8"))["interactions"][-1]["request"]["body"].encode("utf-8")
        for path in sorted(cassettes.rglob("*.json"))
    ]


def raw_loop(base_url: str, bodies: list[bytes], concurrency: int, folder: Path) -> Measured:
    """The bare httpx loop (bench/raw_loop.py, a process of its own) sending the request bodies,
    ``concurrency`` at a time: its wall time and peak memory."""
    listing = folder / f"bodies-{concurrency}.jsonl"
    listing.write_bytes(b"\n".join(bodies) + b"\n")
    run = measure(
        [sys.executable, "-m", "bench.raw_loop", f"{base_url}/chat/completions", str(listing), str(concurrency)], REPO
    )
    if run.status != 0:
        raise SystemExit(f"the raw httpx loop failed: {run.output[-2000:]}")
    return run


@dataclass(frozen=True)
class ToolRun:
    tool: str
    wall_s: float
    peak_mb: float | None
    requests: str  # how the requests the server got compare with snap-bench's
    failed: str = ""


def live_comparison(
    concurrencies: list[int], latency: float, quick: bool, peers: list[Peer], repeat: int = 1
) -> Iterator[dict[str, Any]]:
    """Per concurrency and repetition: snap-bench, then the raw loop on the same bodies (then the peers)."""
    with tempfile.TemporaryDirectory(prefix="snap-throughput-live-") as temporary:
        root = Path(temporary)
        server, base_url = start_server(latency, root / "requests.jsonl")
        capture = Capture(root / "requests.jsonl")
        try:
            live_project(root / "project", base_url)
            for concurrency, repetition in itertools.product(concurrencies, range(1, repeat + 1)):
                run_id = f"{concurrency}-{repetition}"
                cassettes, out = root / f"cassettes-{run_id}", root / f"out-{run_id}"
                command = [
                    *PYTEST,
                    "benchmarks",
                    "-n",
                    "2",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    "--model=fake-model",
                    f"--snap-concurrency={concurrency}",
                    f"--snap-cassettes={cassettes}",
                    f"--snap-out={out}",
                    *([f"--snap-items={QUICK_ITEMS}"] if quick else []),
                ]
                capture.since_last()
                wall, peak, _ = timed(command, root / "project")
                bodies = recorded_bodies(cassettes)
                expected = [json.loads(body) for body in bodies]
                snap = ToolRun("snap-bench (-n 2)", wall, peak, same_requests(capture.since_last(), expected))
                raw_run = raw_loop(base_url, bodies, concurrency, root)
                raw_s = raw_run.wall_s
                raw = ToolRun("raw httpx", raw_s, raw_run.peak_mb, same_requests(capture.since_last(), expected))
                runs = [raw, snap]
                for peer in peers:
                    runs.append(
                        run_peer(peer, root / f"{peer.name}-{run_id}", base_url, expected, concurrency, capture)
                    )
                yield {
                    "concurrency": concurrency,
                    "repetition": repetition,
                    "requests": len(bodies),
                    "floor_s": len(bodies) * latency / concurrency,
                    "raw_s": raw_s,
                    "runs": runs,
                }
        finally:
            server.terminate()
            server.wait()


def run_peer(
    peer: Peer, folder: Path, base_url: str, expected: list[dict[str, Any]], concurrency: int, capture: Capture
) -> ToolRun:
    """One peer on the same requests; a peer that fails is reported, not fatal."""
    try:
        run = peer.prepare(folder, base_url, expected, concurrency)
    except Unavailable as why:
        return ToolRun(peer.label, 0.0, None, "", failed=str(why))
    capture.since_last()
    measured = measure(run.command, run.cwd, run.env)
    sent = same_requests(capture.since_last(), expected)
    failed = ""
    if measured.status != 0:
        tail = " / ".join(line for line in measured.output.strip().splitlines()[-3:])
        failed = f"exited with {measured.status}: {tail[-300:]}"
    return ToolRun(peer.label, measured.wall_s, measured.peak_mb, sent, failed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="three of the profile's items, one replay repeat")
    parser.add_argument("--concurrency", default="8,32", help="comma list of requests in flight (default 8,32)")
    parser.add_argument("--latency", type=float, default=0.2, help="the server's answer delay in seconds")
    parser.add_argument("--repeat", type=int, default=3, help="replay and bare runs each (median)")
    parser.add_argument(
        "--live-repeat", type=int, default=1, help="live runs per concurrency, alternating with raw (median)"
    )
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--skip-replay", action="store_true")
    parser.add_argument(
        "--peers",
        action="store_true",
        help="run promptfoo and inspect_ai on the live workload too (installed on demand)",
    )
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    if not args.skip_live:
        peers = install_peers(lambda line: print(f"peers: {line}", flush=True)) if args.peers else []
        concurrencies = [int(part) for part in args.concurrency.split(",") if part.strip()]
        print(
            f"live, profile design{' (quick: items ' + QUICK_ITEMS + ')' if args.quick else ''}, "
            f"server latency {args.latency * 1000:.0f} ms, the same requests through each tool, "
            "ratio to the raw httpx loop at the same concurrency:",
            flush=True,
        )
        print("  concurrency | requests | floor | tool | wall | ratio | peak memory | requests the server got")
        ratios: dict[int, list[float]] = defaultdict(list)
        for row in live_comparison(concurrencies, args.latency, args.quick, peers, args.live_repeat):
            snap_runs = [run for run in row["runs"] if run.tool.startswith("snap-bench")]
            ratios[row["concurrency"]] += [run.wall_s / row["raw_s"] for run in snap_runs]
            for run in row["runs"]:
                head = f"  {row['concurrency']:>11} | {row['requests']:>8} | {row['floor_s']:>5.1f} s | {run.tool:<22}"
                if run.failed and not run.requests:
                    print(f"{head} | not run: {run.failed}")
                    continue
                memory = "" if run.peak_mb is None else f"{run.peak_mb:.0f} MB"
                print(
                    f"{head} | {run.wall_s:>6.1f} s | {run.wall_s / row['raw_s']:.2f}x | {memory:>7} | {run.requests}"
                    + (f" | FAILED: {run.failed}" if run.failed else ""),
                    flush=True,
                )
        if args.live_repeat > 1:
            for concurrency, values in ratios.items():
                print(
                    f"  concurrency {concurrency}: snap-bench / raw, median of {len(values)} alternate pairs "
                    f"{statistics.median(values):.2f}x (range {min(values):.2f}x to {max(values):.2f}x)",
                    flush=True,
                )
    if not args.skip_replay:
        result = replay_comparison(1 if args.quick else args.repeat)
        print(
            f"replay of the shipped recordings ({result['tests']:.0f} tests, -n 2, report and analysis included): "
            f"{result['replay_s']:.1f} s, peak {result['replay_peak_mb']:.0f} MB; bare pytest with the same ids: "
            f"{result['bare_s']:.1f} s; ratio {result['ratio']:.2f}x"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
