"""Local models: one llama.cpp server per model for the whole session, started on the controller.

A server is started only when something has to be recorded; replaying a complete set of recordings
needs neither the weights nor llama-cpp-python. Cassettes store a fixed, unroutable URL for each
local model (``http://<name>.local-model.invalid/v1``), so recordings replay whatever port the
server had.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from snap_bench.asking.llama_server import LlamaServer, llama_server_available
from snap_bench.asking.local_weights import LocalModelUnavailable, resolve_weights
from snap_bench.asking.replay import replay
from snap_bench.design.models import ModelSpec
from snap_bench.recordings.cassettes import RecordMode
from snap_bench.wire.request import condition_request

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from snap_bench.asking.asker import Endpoint
    from snap_bench.instruments.base import Instrument
    from snap_bench.observations.observation import Condition
    from snap_bench.plugin.session_options import SessionOptions
    from snap_bench.recordings.state import Recordings

CACHE_DIR = Path.home() / ".cache" / "snap-bench"


def canonical_local_url(name: str) -> str:
    return f"http://{name.lower()}.local-model.invalid/v1"


THREADS_VARIABLE = "SNAP_LOCAL_THREADS"


def server_threads() -> int:
    """Threads per llama.cpp server: 2, or SNAP_LOCAL_THREADS.

    llama.cpp's threads wait for each other at every step, so when another process holds one of two
    cores a two-thread server crawls; SNAP_LOCAL_THREADS=1 is then several times faster.
    """
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return 2
    if not value.isdigit() or int(value) < 1:
        raise pytest.UsageError(f"{THREADS_VARIABLE}={value!r}: give a whole number of threads, at least 1")
    return int(value)


class LocalServers:
    def __init__(self, options: SessionOptions, plans: dict[str, Endpoint], recordings: Recordings) -> None:
        self._options = options
        self._plans = plans
        self._recordings = recordings
        self._servers: list[LlamaServer] = []

    @staticmethod
    def can_serve(model: ModelSpec) -> bool:
        """Whether this machine has llama-cpp-python and the packages that carry the weights."""
        if model.weights is None or not llama_server_available():
            return False
        modules = model.weights.part_modules or ((model.weights.module,) if model.weights.module else ())
        return all(importlib.util.find_spec(module) is not None for module in modules)

    def _needs_recording(self, model: ModelSpec, conditions: Iterable[tuple[Instrument, Condition]]) -> bool:
        if self._options.record_mode is RecordMode.ALL:
            return True
        if self._options.record_mode is RecordMode.NONE:
            return False
        url = self._plans[model.name].canonical_url
        return any(
            replay(self._recordings.check(condition_request(model, url, kind, condition))).reply is None
            for kind, condition in conditions
        )

    def start_needed(
        self, models: list[ModelSpec], conditions_of: Callable[[str], Iterable[tuple[Instrument, Condition]]]
    ) -> dict[str, str]:
        """Start a server for every local model with something to record; return their base URLs."""
        urls: dict[str, str] = {}
        for model in models:
            if model.weights is None or not self.can_serve(model):
                continue
            if not self._needs_recording(model, conditions_of(model.name)):
                continue
            try:
                self._options.out_dir.mkdir(parents=True, exist_ok=True)
                weights_path = resolve_weights(model.weights, CACHE_DIR)
                server = LlamaServer(
                    weights_path,
                    model.provider_id,
                    n_threads=server_threads(),
                    log_path=self._options.out_dir / f"llama-server-{model.name}.log",
                )
                self._servers.append(server)
                urls[model.name] = server.start()
            except LocalModelUnavailable as error:
                self.stop()
                raise pytest.UsageError(f"local model {model.name}: {error}") from None
        return urls

    def stop(self) -> None:
        for server in self._servers:
            server.stop()
        self._servers.clear()
