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

from snap_bench.cassettes import CassetteState, RecordMode, cassette_path, cassette_state
from snap_bench.local_model import LlamaServer, LocalModelUnavailable, llama_server_available, resolve_weights
from snap_bench.models import ModelSpec
from snap_bench.request_fields import condition_body

if TYPE_CHECKING:
    from snap_bench.asking import Endpoint
    from snap_bench.options import SessionOptions
    from snap_bench.session import SnapSession

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
    def __init__(self, options: SessionOptions, plans: dict[str, Endpoint]) -> None:
        self._options = options
        self._plans = plans
        self._servers: list[LlamaServer] = []

    @staticmethod
    def can_serve(model: ModelSpec) -> bool:
        """Whether this machine has llama-cpp-python and the packages that carry the weights."""
        if model.weights is None or not llama_server_available():
            return False
        modules = model.weights.part_modules or ((model.weights.module,) if model.weights.module else ())
        return all(importlib.util.find_spec(module) is not None for module in modules)

    def _needs_recording(self, session: SnapSession, model: ModelSpec) -> bool:
        if self._options.record_mode is RecordMode.ALL:
            return True
        if self._options.record_mode is RecordMode.NONE:
            return False
        endpoint = self._plans[model.name]
        for name in session.active_instruments():
            instrument = session.instrument(name)
            for case in session.cases(name):
                if case.model != model.name:
                    continue
                body = condition_body(
                    model, instrument.messages(case.condition), case.condition.temperature, instrument.max_tokens
                )
                path = cassette_path(self._options.cassette_dir, model.name, name, case.condition.id)
                state, _ = cassette_state(path, "POST", f"{endpoint.canonical_url}/chat/completions", body)
                if state is not CassetteState.MATCHES:
                    return True
        return False

    def start_needed(self, session: SnapSession) -> dict[str, str]:
        """Start a server for every local model with something to record; return their base URLs."""
        urls: dict[str, str] = {}
        for model in session.models:
            if model.weights is None or not self.can_serve(model) or not self._needs_recording(session, model):
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
