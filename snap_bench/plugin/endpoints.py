"""Where each model of the session is asked: its URL and key, or the local llama.cpp server started for it.

Built on the controller before the tests run (which models can be answered at all, which local servers to
start) and in every worker (from the URLs the controller hands over). It needs the models, the options and,
to decide whether a local model has anything left to record, the conditions each model is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from snap_bench.asking.asker import Endpoint
from snap_bench.asking.credentials import api_key
from snap_bench.design.models import ModelSpec
from snap_bench.instruments.base import Instrument
from snap_bench.observations.observation import Condition
from snap_bench.plugin.local_servers import LocalServers, canonical_local_url
from snap_bench.plugin.session_options import SessionOptions
from snap_bench.recordings.state import Recordings

# model name -> (instrument, condition) of every condition the session asks it
ConditionsOf = Callable[[str], Iterable[tuple[Instrument, Condition]]]


class Endpoints:
    def __init__(self, options: SessionOptions, models: list[ModelSpec], recordings: Recordings) -> None:
        self._options = options
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
        key = api_key(model.api_key_env, self._options.rootdir / ".env")
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
            raise pytest.UsageError(
                f"no recordings under {self._recordings.root} and no way to record them for "
                f"{', '.join(e.model.name for e in stuck)} ({details}). "
                f"Models with recordings: {', '.join(sorted(recorded)) or 'none'}."
            )

    def start_servers(self, conditions_of: ConditionsOf) -> None:
        """Start a llama.cpp server for every local model with something left to record (controller only)."""
        self._servers = LocalServers(self._options, self.plans(), self._recordings)
        self.local_urls = self._servers.start_needed(self._models, conditions_of)

    def stop_servers(self) -> None:
        if self._servers is not None:
            self._servers.stop()
            self._servers = None
