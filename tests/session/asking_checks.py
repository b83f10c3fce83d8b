"""What the session tests of asking share: the outcomes pytest would count for a session run in-process, what the
asker said of a condition it could not answer, and recordings made once per module and copied into each test."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.batch.ledger import PENDING_IN_A_BATCH
from snap_bench.observations.export import read_jsonl
from snap_bench.observations.observation import Observation
from snap_bench.session.run import SessionResult
from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

# Six conditions: M01 x 3 paraphrases x 2 contexts, one prompt, one temperature, one run.
SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6
# How pytest counts a condition's test that measured nothing (snap_bench.plugin.hooks: the ask fixture).
FAILED_WHEN = frozenset({"no recording"})
SKIPPED_WHEN = frozenset({"budget spent", PENDING_IN_A_BATCH})


def outcomes(result: SessionResult) -> dict[str, int]:
    """The outcomes ``pytest benchmarks`` would count for the session's condition tests: ``passed`` (a scored
    answer), ``unscored`` (an answer code), ``failed`` (no recording) and ``skipped`` (budget spent, pending in a
    batch); only the non-zero ones, as ``RunResult.parseoutcomes`` gives them. Every planned condition is counted."""
    counted: Counter[str] = Counter("passed" if o.is_scored else "unscored" for o in result.observations)
    document = json.loads((result.out_dir / "session.json").read_text(encoding="utf-8"))
    for coverage in document["coverage"].values():
        # Its other reasons (an endpoint that never answered, a model stopped) name answers counted above.
        for reason, count in coverage["missing"].items():
            if reason in FAILED_WHEN | SKIPPED_WHEN:
                counted["failed" if reason in FAILED_WHEN else "skipped"] += count
    assert sum(counted.values()) == result.planned, (counted, result.planned)
    return {outcome: count for outcome, count in counted.items() if count}


def observations(project: BenchProject) -> list[Observation]:
    """The session's observations.jsonl, as it was written."""
    return read_jsonl(project.out / "observations.jsonl")


def session_json(project: BenchProject) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((project.out / "session.json").read_text(encoding="utf-8"))
    return document


def bodies(cassettes: Path) -> dict[str, str]:
    """Condition file name -> the request body recorded in it (every file must be a whole cassette)."""
    recorded = {}
    for path in sorted(cassettes.rglob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        recorded[path.name] = document["interactions"][-1]["request"]["body"]
    return recorded


def asked(fake_server: FakeOpenAIServer) -> list[str]:
    """Each request the server received, as the canonical JSON its cassette holds."""
    return [
        json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for r in fake_server.script.requests
    ]


def exit_line(result: SessionResult) -> str:
    """The terminal's last line, as pytest's terminal prints it (``exit status 6: could not measure: ...``)."""
    return result.summary[-1]


def pace_lines(result: SessionResult) -> list[str]:
    """The terminal summary's ``pace:`` lines of the session."""
    return [line for line in result.summary if line.startswith("pace: ")]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.rglob("*.json"))}


@dataclass(frozen=True)
class Recorded:
    """A project's recordings, made once for a module by a fake server at ``port`` (a cassette holds its URL:
    each test replays them through a fake server at the same port)."""

    cassettes: Path
    port: int

    def project(self, root: Path, monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer) -> BenchProject:
        """A new project at ``root`` holding a copy of the recordings, asking ``server``."""
        monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
        root.mkdir()
        project = BenchProject(root, server.base_url)
        shutil.copytree(self.cassettes, project.cassettes)
        return project


def record_once(folder: Path, *args: str) -> Recorded:
    """Record ``args`` (a session of fake-model) into a project at ``folder`` with a fake server of its own."""
    with pytest.MonkeyPatch.context() as monkeypatch, FakeOpenAIServer() as server:
        monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
        project = BenchProject(folder, server.base_url)
        result = project.session("--model=fake-model", *args)
        assert result.exit_status == 0, result.summary
        return Recorded(project.cassettes, port_of(server))


def port_of(server: FakeOpenAIServer) -> int:
    """The fake server's port (``http://127.0.0.1:PORT/v1``)."""
    return int(server.base_url.rsplit(":", 1)[1].split("/", 1)[0])


def shows_in_order(lines: Sequence[str], patterns: Sequence[str]) -> bool:
    """Whether ``lines`` hold a line matching each of ``patterns``, in that order (as RunResult's
    ``fnmatch_lines`` checks pytest's output)."""
    remaining = iter(lines)
    return all(any(fnmatch(line, pattern) for line in remaining) for pattern in patterns)
