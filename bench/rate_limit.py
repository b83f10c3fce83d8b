"""A live run at a provider's rate limit: `pytest benchmarks` against a loopback server allowing N requests a minute.

The server is the project's fake (tests/fake_openai_server.py) behind the fake rate limit
(tests/fake_rate_limited.py): a token bucket refilling smoothly at N a minute that holds a second's worth,
429 with Retry-After beyond it, and the documented rate-limit headers (OpenAI or Anthropic style, or none). A
throw-away project (the real config and benchmark module) asks it through snap-bench at `-n 2` with
`--snap-concurrency` as the ceiling, once with the adaptive pace for each header style and once with the fixed
concurrency of before (`--snap-pace=fixed`) as the baseline, all in this one run.

For each it prints the asking time (the first request's arrival to the last answer's) against the floor the limit
sets (conditions / allowed rate), the session's whole wall time, the share of requests refused (429), the
conditions recorded as -3 (answers lost to the limit after --snap-max-attempts) and the pace line the terminal
printed.

Targets (adaptive, with headers): asking time within 1.15x of the floor, at most 2 % of requests refused, no
answer lost. The fake has no randomness; the figures vary only with the machine's load.

    .venv/bin/python -m bench.rate_limit [--per-minute 600] [--runs 8] [--latency 0.5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fake_openai_server import Failure
from tests.fake_rate_limited import HeaderStyle, rate_limited_server

REPO = Path(__file__).resolve().parent.parent
FAKE_KEY = "sk-" + "5ca1ab1e" * 6
KEY_VARIABLE = "RATE_BENCH_KEY"
MODEL = "limited-model"
# The conditions: 1 item x 3 paraphrases x 2 prompts x 3 temperatures x 2 contexts x --runs runs.
DESIGN = ["--snap-items=M01", "--snap-prompts=NEU,DIR", "--snap-temperatures=0,0.5,1"]


@dataclass(frozen=True)
class Setup:
    label: str
    style: HeaderStyle
    pace: str  # --snap-pace


SETUPS = (
    Setup("adaptive, OpenAI headers", "openai", "adaptive"),
    Setup("adaptive, Anthropic headers", "anthropic", "adaptive"),
    Setup("adaptive, no headers", "none", "adaptive"),
    Setup("fixed concurrency (before)", "openai", "fixed"),
)


def make_project(root: Path, base_url: str) -> None:
    (root / "config").mkdir()  # its models.yaml adds the limited model to the packaged ones
    (root / "benchmarks").mkdir()
    shutil.copy(REPO / "benchmarks" / "test_profile.py", root / "benchmarks" / "test_profile.py")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "config" / "models.yaml").write_text(
        f"defaults:\n  base_url: {base_url}\n  api_key_env: {KEY_VARIABLE}\n"
        f"models:\n  {MODEL}:\n    id: fake/limited-model\n",
        encoding="utf-8",
    )


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env[KEY_VARIABLE] = FAKE_KEY
    env["PYTHONPATH"] = str(REPO)
    return env


def measure(setup: Setup, per_minute: float, runs: int, latency_s: float, concurrency: int) -> dict[str, Any]:
    server, limit = rate_limited_server(per_minute, setup.style, latency_s=latency_s)
    arrivals: list[float] = []
    lock = threading.Lock()

    def admit() -> tuple[Failure | None, dict[str, str]]:
        with lock:
            arrivals.append(time.monotonic())
        return limit()

    server.script.admit = admit
    with tempfile.TemporaryDirectory(prefix="snap-rate-") as folder, server:
        root = Path(folder)
        make_project(root, server.base_url)
        command = [
            sys.executable,
            "-m",
            "pytest",
            "benchmarks",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-q",
            "-n",
            "2",
            "--snap-no-analysis",
            f"--model={MODEL}",
            f"--snap-concurrency={concurrency}",
            f"--snap-pace={setup.pace}",
            f"--snap-runs={runs}",
            *DESIGN,
        ]
        started = time.perf_counter()
        run = subprocess.run(command, cwd=root, env=environment(), capture_output=True, text=True, check=False)
        session_s = time.perf_counter() - started
        observations = [
            json.loads(line)
            for line in (root / "reports" / "observations.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        # The last answer left the server latency_s after the last request arrived.
        asking_s = (max(arrivals) - min(arrivals) + latency_s) if arrivals else 0.0
        requests = limit.admitted + limit.refused
        return {
            "conditions": len(observations),
            "scored": sum(o["code"] is None for o in observations),
            "lost": sum(o["code"] == -3 for o in observations),
            "requests": requests,
            "refused": limit.refused,
            "refused_share": limit.refused / requests if requests else 0.0,
            "asking_s": asking_s,
            "session_s": session_s,
            "exit_status": run.returncode,
            "pace_line": next((line for line in run.stdout.splitlines() if line.startswith("pace: ")), "(none)"),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-minute", type=float, default=600.0, help="requests a minute the fake allows")
    parser.add_argument("--runs", type=int, default=8, help="--snap-runs (36 conditions each)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake takes to answer")
    parser.add_argument("--concurrency", type=int, default=16, help="--snap-concurrency, the ceiling")
    arguments = parser.parse_args()
    print(
        f"bench.rate_limit: pytest benchmarks -n 2 --snap-concurrency={arguments.concurrency} against a loopback "
        f"server allowing {arguments.per_minute:.0f} requests/min (a second's worth at once), answering in "
        f"{arguments.latency} s; {' '.join(DESIGN)} --snap-runs={arguments.runs}"
    )
    results: dict[str, dict[str, Any]] = {}
    for setup in SETUPS:
        figures = measure(setup, arguments.per_minute, arguments.runs, arguments.latency, arguments.concurrency)
        results[setup.label] = figures
        floor_s = figures["conditions"] / (arguments.per_minute / 60.0)
        print(
            f"{setup.label}: {figures['conditions']} conditions ({figures['scored']} scored, {figures['lost']} lost "
            f"as -3); asking {figures['asking_s']:.1f} s against a floor of {floor_s:.1f} s = "
            f"{figures['asking_s'] / floor_s:.2f}x; {figures['refused']} of {figures['requests']} requests refused "
            f"({figures['refused_share']:.1%}); session {figures['session_s']:.0f} s; exit status "
            f"{figures['exit_status']}"
        )
        print(f"  terminal: {figures['pace_line']}")
    adaptive, fixed = results[SETUPS[0].label], results[SETUPS[-1].label]
    if fixed["refused"]:
        print(
            f"adaptive (OpenAI headers) against fixed concurrency: asking time "
            f"{adaptive['asking_s'] / fixed['asking_s']:.2f}x, refused requests "
            f"{adaptive['refused']} against {fixed['refused']}, lost answers {adaptive['lost']} against {fixed['lost']}"
        )


if __name__ == "__main__":
    main()
