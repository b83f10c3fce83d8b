"""Throughput: live asking at a set concurrency against a bare httpx loop, and replay against bare pytest.

Live: a loopback OpenAI-compatible server (tests/fake_openai_server.py, in a process of its own) answers
every request after ``--latency`` seconds. The profile design runs through snap-bench (``-n 2
--snap-concurrency=C``, a fresh cassette folder each time); then a bare httpx loop sends the very same
request bodies (read back from those cassettes) with C in flight: the ceiling for this server. Each
snap-bench figure is the wall time of the whole pytest session (start-up, analysis and report
included) and the peak memory of its whole process tree (RSS summed over the controller and workers,
sampled every 50 ms).

Replay: ``pytest benchmarks -n 2`` over the shipped recordings against a throw-away project with the
same test ids, each a trivially passing parametrised test, run alternately; medians of ``--repeat``.

    .venv/bin/python -m bench.throughput [--quick] [--concurrency 8,32] [--latency 0.2] [--repeat 3]
                                         [--skip-live] [--skip-replay]

``--quick`` runs a sixth of the profile design (3 of its 10 items) and one replay repeat.
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections import defaultdict
from pathlib import Path

import httpx

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


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak MB of the process tree, exit status) of one command."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
    if process.returncode not in (0, 1):
        sys.stderr.write(output[-3000:])
        raise SystemExit(f"{' '.join(command)} exited with {process.returncode}")
    return wall, peak / 1024, process.returncode


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


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    code = (
        "import sys, time\n"
        "from tests.fake_openai_server import FakeOpenAIServer, FakeScript\n"
        f"with FakeOpenAIServer(FakeScript(latency_s={latency!r})) as server:\n"
        "    print(server.base_url, flush=True)\n"
        "    while True: time.sleep(3600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def live_project(folder: Path, base_url: str) -> None:
    shutil.copytree(REPO / "config", folder / "config")
    (folder / "benchmarks").mkdir()
    shutil.copy(REPO / "benchmarks" / "test_profile.py", folder / "benchmarks" / "test_profile.py")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "config" / "models.yaml").write_text(
        f"models:\n  fake-model:\n    id: fake/model\n    base_url: {base_url}\n    api_key_env: null\n",
        encoding="utf-8",
    )


async def _raw_loop(url: str, bodies: list[bytes], concurrency: int) -> None:
    limits = httpx.Limits(max_connections=max(100, concurrency), max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=120.0) as client:
        queue = list(reversed(bodies))

        async def worker() -> None:
            while queue:
                body = queue.pop()
                response = await client.post(url, content=body, headers={"Content-Type": "application/json"})
                response.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def raw_loop(base_url: str, cassettes: Path, concurrency: int) -> float:
    """Seconds for a bare httpx loop to send the recorded request bodies, ``concurrency`` at a time."""
    bodies = [
        json.loads(path.read_text(encoding="utf-8"))["interactions"][-1]["request"]["body"].encode("utf-8")
        for path in sorted(cassettes.rglob("*.json"))
    ]
    started = time.perf_counter()
    asyncio.run(_raw_loop(f"{base_url}/chat/completions", bodies, concurrency))
    return time.perf_counter() - started


def live_comparison(concurrencies: list[int], latency: float, quick: bool) -> list[dict[str, float]]:
    server, base_url = start_server(latency)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="snap-throughput-live-") as temporary:
            root = Path(temporary)
            live_project(root / "project", base_url)
            for concurrency in concurrencies:
                cassettes, out = root / f"cassettes-{concurrency}", root / f"out-{concurrency}"
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
                wall, peak, _ = timed(command, root / "project")
                requests = sum(1 for _ in cassettes.rglob("*.json"))
                raw = raw_loop(base_url, cassettes, concurrency)
                rows.append(
                    {
                        "concurrency": concurrency,
                        "requests": requests,
                        "snap_s": wall,
                        "raw_s": raw,
                        "ratio": wall / raw,
                        "peak_mb": peak,
                        "floor_s": requests * latency / concurrency,
                    }
                )
    finally:
        server.terminate()
        server.wait()
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a sixth of the design, one replay repeat")
    parser.add_argument("--concurrency", default="8,32", help="comma list of requests in flight (default 8,32)")
    parser.add_argument("--latency", type=float, default=0.2, help="the server's answer delay in seconds")
    parser.add_argument("--repeat", type=int, default=3, help="replay and bare runs each (median)")
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    if not args.skip_live:
        concurrencies = [int(part) for part in args.concurrency.split(",") if part.strip()]
        print(
            f"live, profile design{' (quick: items ' + QUICK_ITEMS + ')' if args.quick else ''}, "
            f"server latency {args.latency * 1000:.0f} ms, snap-bench at -n 2:"
        )
        print(
            "  concurrency | requests | snap-bench | raw httpx | ratio | floor (requests x latency / C) | peak memory"
        )
        for row in live_comparison(concurrencies, args.latency, args.quick):
            print(
                f"  {row['concurrency']:>11.0f} | {row['requests']:>8.0f} | {row['snap_s']:>8.1f} s | "
                f"{row['raw_s']:>7.1f} s | {row['ratio']:.2f}x | {row['floor_s']:>6.1f} s | {row['peak_mb']:.0f} MB"
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
