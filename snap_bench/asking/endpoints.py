"""Where each model of the session is asked: its URL and key, or the local llama.cpp server started for it.

Built on the controller before the tests run (which models can be answered at all, which local servers to
start) and in every worker (from the URLs the controller hands over). It needs the models, the recordings and,
to decide whether a local model has anything left to record, the record mode and the conditions each model is
asked.

Local models: one llama.cpp server per model for the whole session, started on the controller. A server is
started only when something has to be recorded; replaying a complete set of recordings needs neither the
weights nor llama-cpp-python. Cassettes store a fixed, unroutable URL for each local model
(``http://<name>.local-model.invalid/v1``), so recordings replay whatever port the server had.

Offline, the instruments a model has no recording of are left out of the run and named once, not failed
condition by condition (:func:`not_recorded`). A team that records only its own questionnaire and runs
``pytest benchmarks`` offline would otherwise get one failure per condition of every shipped instrument it
never recorded (thousands of them, and exit 6). An instrument counts as *not recorded* for a model when
``cassettes/MODEL/INSTRUMENT/`` holds no recording and the session has no way to record one (no key for a
remote model, no llama.cpp for a local one). Its conditions are not collected, so they are neither failures
nor missing reports; the terminal says once what was left out and the command that records it, and under a
baseline gate the instrument is one the run did not measure, named by the baseline scope
(snap_bench.judging.baseline_scope). A model that has none of the run's instruments recorded is still a usage
error: such a run would measure nothing of it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from snap_bench.asking.asker import Endpoint
from snap_bench.asking.credentials import api_key
from snap_bench.asking.llama_server import LlamaServer, llama_server_available
from snap_bench.asking.local_weights import LocalModelUnavailable, resolve_weights
from snap_bench.asking.replay import replay
from snap_bench.asking.settings import AskingSettings
from snap_bench.design.models import ModelSpec
from snap_bench.recordings.cassettes import RecordMode
from snap_bench.wire.request import Asked, condition_request

if TYPE_CHECKING:
    from snap_bench.observations.observation import Condition
    from snap_bench.recordings.state import Recordings


class EndpointProblem(Exception):
    """A model of the session can be neither replayed nor asked, or its local server cannot start: the
    message says which and what to do (the plugin makes it a usage error)."""


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
        raise EndpointProblem(f"{THREADS_VARIABLE}={value!r}: give a whole number of threads, at least 1")
    return int(value)


class LocalServers:
    def __init__(self, plans: dict[str, Endpoint], recordings: Recordings, settings: AskingSettings) -> None:
        self._settings = settings
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

    def _needs_recording(self, model: ModelSpec, conditions: Iterable[tuple[Asked, Condition]]) -> bool:
        if self._settings.record_mode is RecordMode.ALL:
            return True
        if self._settings.record_mode is RecordMode.NONE:
            return False
        url = self._plans[model.name].canonical_url
        return any(
            replay(self._recordings.check(condition_request(model, url, kind, condition))).reply is None
            for kind, condition in conditions
        )

    def start_needed(
        self, models: list[ModelSpec], conditions_of: Callable[[str], Iterable[tuple[Asked, Condition]]]
    ) -> dict[str, str]:
        """Start a server for every local model with something to record; return their base URLs."""
        urls: dict[str, str] = {}
        for model in models:
            if model.weights is None or not self.can_serve(model):
                continue
            if not self._needs_recording(model, conditions_of(model.name)):
                continue
            try:
                self._settings.out_dir.mkdir(parents=True, exist_ok=True)
                weights_path = resolve_weights(model.weights, CACHE_DIR)
                server = LlamaServer(
                    weights_path,
                    model.provider_id,
                    n_threads=server_threads(),
                    log_path=self._settings.out_dir / f"llama-server-{model.name}.log",
                )
                self._servers.append(server)
                urls[model.name] = server.start()
            except LocalModelUnavailable as error:
                self.stop()
                raise EndpointProblem(f"local model {model.name}: {error}") from None
        return urls

    def stop(self) -> None:
        for server in self._servers:
            server.stop()
        self._servers.clear()


# model name -> (instrument, condition) of every condition the session asks it
ConditionsOf = Callable[[str], Iterable[tuple[Asked, "Condition"]]]


class Endpoints:
    def __init__(self, models: list[ModelSpec], recordings: Recordings, settings: AskingSettings) -> None:
        self._settings = settings
        self._models = models
        self._recordings = recordings
        self._servers: LocalServers | None = None
        self.local_urls: dict[str, str] = {}

    def plans(self) -> dict[str, Endpoint]:
        """Endpoints as they stand before any local server is started."""
        return {model.name: self.endpoint(model, None) for model in self._models}

    def resolved(self) -> dict[str, Endpoint]:
        """Endpoints with the local servers' URLs (started here, or handed over by the controller)."""
        return {model.name: self.endpoint(model, self.local_urls.get(model.name)) for model in self._models}

    def endpoint(self, model: ModelSpec, local_url: str | None) -> Endpoint:
        if model.is_local:
            canonical = canonical_local_url(model.name)
            if local_url:
                return Endpoint(model, local_url, canonical, None, True, "")
            reason = (
                "no llama.cpp server was started for it: every recording matched when the session began"
                if LocalServers.can_serve(model)
                else "install the local extra (pip install -e '.[local]') so the session can serve it"
            )
            return Endpoint(model, canonical, canonical, None, False, reason)
        assert model.base_url is not None  # a remote entry always has one (models.py)
        key = api_key(model.api_key_env, self._settings.rootdir / ".env")
        if model.api_key_env is None:
            return Endpoint(model, model.base_url, model.base_url, None, True, "")
        reason = f"set {model.api_key_env} in the environment or in .env"
        return Endpoint(model, model.base_url, model.base_url, key, key is not None, reason)

    def check_answerable(self) -> None:
        """A model that can neither replay nor record is a usage error before anything runs."""
        plans = self.plans()
        recorded = set(self._recordings.models())
        stuck = [
            plans[model.name]
            for model in self._models
            if model.name not in recorded
            and not plans[model.name].live
            and not (model.is_local and LocalServers.can_serve(model))
        ]
        if stuck:
            details = "; ".join(f"{endpoint.model.name}: {endpoint.offline_reason}" for endpoint in stuck)
            raise EndpointProblem(
                f"no recordings under {self._recordings.root} and no way to record them for "
                f"{', '.join(e.model.name for e in stuck)} ({details}). "
                f"Models with recordings: {', '.join(sorted(recorded)) or 'none'}."
            )

    def start_servers(self, conditions_of: ConditionsOf) -> None:
        """Start a llama.cpp server for every local model with something left to record (controller only)."""
        self._servers = LocalServers(self.plans(), self._recordings, self._settings)
        self.local_urls = self._servers.start_needed(self._models, conditions_of)

    def stop_servers(self) -> None:
        if self._servers is not None:
            self._servers.stop()
            self._servers = None


@dataclass(frozen=True)
class NotRecorded:
    model: str
    instrument: str
    how: str  # what would let the session record it (the endpoint's offline reason)
    source: Path | None  # the file that runs the instrument, for the command that records it

    def to_json(self) -> dict[str, str | None]:
        source = None if self.source is None else str(self.source)
        return {"model": self.model, "instrument": self.instrument, "how": self.how, "source": source}

    def line(self, invoked: Path) -> str:
        where = _shown(self.source, invoked) if self.source is not None else "benchmarks"
        return (
            f"not recorded for {self.model}: {self.instrument} (no recording under cassettes/{self.model}/"
            f"{self.instrument}/, so it was not run); to record it, {self.how} and run: "
            f"pytest {where} --model={self.model}"
        )


def not_recorded(
    models: Sequence[ModelSpec],
    plans: Mapping[str, Endpoint],
    recordings: Recordings,
    in_run: Mapping[str, Path | None],
) -> list[NotRecorded]:
    """Every (model, instrument of the run) pair with no recording that this session cannot record; a usage
    error when that is every instrument of the run for some model."""
    left: list[NotRecorded] = []
    stuck: list[str] = []
    for model in models:
        plan = plans[model.name]
        if plan.live or (model.is_local and LocalServers.can_serve(model)):
            continue
        missing = [
            NotRecorded(model.name, name, plan.offline_reason, source)
            for name, source in in_run.items()
            if next(recordings.folder(model.name, name).glob("*.json"), None) is None
        ]
        if in_run and len(missing) == len(in_run) and model.name in recordings.models():
            # (a model with no recordings at all is the start's usage error: Endpoints.check_answerable)
            stuck.append(f"{model.name} ({plan.offline_reason})")
        left.extend(missing)
    if stuck:
        holders = ", ".join(m for m in recordings.models() if any(recordings.folder(m, n).is_dir() for n in in_run))
        raise EndpointProblem(
            f"no recordings of {', '.join(sorted(in_run))} under {recordings.root} and no way to record them for "
            f"{'; '.join(stuck)}, so this run would measure nothing of it. "
            f"Models with recordings: {holders or 'none'} (of these instruments)."
        )
    return left


def _shown(path: Path, invoked: Path) -> str:
    """``path`` relative to where pytest was started when it lies below it (what the user would type)."""
    return str(path.relative_to(invoked)) if path.is_relative_to(invoked) else str(path)
