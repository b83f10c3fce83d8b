"""Small local models served by llama.cpp, so the benchmark can run live without an API key.

``LlamaServer`` runs ``python -m llama_cpp.server`` (an OpenAI-compatible HTTP server) as a child
process on a loopback port, so the normal chat client and cassette machinery talk to it exactly as
they would to a hosted provider.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from snap_bench.asking.local_weights import INSTALL_HINT, LocalModelUnavailable, _find_spec

_LOG_TAIL_LINES = 40


# The modules llama_cpp.server needs besides llama_cpp itself (its "server" extra).
_SERVER_EXTRA_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def llama_server_available() -> bool:
    """Whether ``python -m llama_cpp.server`` could run here, checked without importing anything.

    ``find_spec("llama_cpp.server")`` would import the ``llama_cpp`` package (and load its shared
    library) to look inside it, so the check looks at the installed files and the top-level modules
    of the server extra instead.
    """
    spec = _find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return False
    if not any((Path(loc) / "server" / "__main__.py").is_file() for loc in spec.submodule_search_locations):
        return False
    return all(_find_spec(name) is not None for name in _SERVER_EXTRA_MODULES)


# ggml's AMX matmul (compiled in by the default -march=native build on AMX-capable Xeons) segfaults on
# the first inference on these machines; ggml-org/llama.cpp#20824 describes the same crash.
_AMX_HINT = (
    "This llama-cpp-python was built with AMX, whose kernels crash here. Rebuild it without: "
    "CMAKE_ARGS='-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF' pip install --no-cache-dir --force-reinstall "
    "--no-deps llama-cpp-python==0.3.36"
)


def _free_loopback_port() -> int:
    # The port can in principle be taken between close() and the server's bind; the server then exits
    # and start() reports it with the log, which is rare enough not to warrant a retry loop.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return "".join(deque(fh, maxlen=lines)).rstrip() or "(log is empty)"
    except OSError as exc:
        return f"(could not read log {path}: {exc})"


def _die_with_parent() -> None:
    """In the server's process before exec: ask Linux to end it when the session's process dies.

    Without this a session killed with SIGKILL (or a crashed xdist controller) leaves the server
    running and holding a core. Elsewhere than Linux it does nothing.
    """
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class LlamaServer:
    """``python -m llama_cpp.server`` for one model on a free loopback port, as a context manager.

    ``url`` is the OpenAI-compatible base URL (ending in ``/v1``) once started.
    """

    host = "127.0.0.1"

    def __init__(
        self,
        model_path: Path,
        alias: str,
        *,
        n_ctx: int = 2048,
        n_threads: int = 2,
        log_path: Path | None = None,
        startup_timeout: float = 120.0,
    ) -> None:
        self.model_path = Path(model_path)
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.log_path = log_path
        self.startup_timeout = startup_timeout
        self.url = ""
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._own_log = False

    def _command(self, port: int) -> list[str]:
        if not llama_server_available():
            raise LocalModelUnavailable(
                "llama-cpp-python with its server extra is not installed in "
                f"{sys.executable}. Install it with {INSTALL_HINT} "
                "(or: CMAKE_ARGS='-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF' pip install "
                "'llama-cpp-python[server]==0.3.36'; it compiles llama.cpp, 10-15 minutes on 2 cores)."
            )
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.alias,
            "--host",
            self.host,
            "--port",
            str(port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
        ]

    def start(self) -> str:
        """Start the server, wait until it answers ``GET /models`` and one completion; return its base URL."""
        if self._process is not None:
            return self.url
        if not self.model_path.is_file():
            raise LocalModelUnavailable(f"model file {self.model_path} does not exist")
        port = _free_loopback_port()
        command = self._command(port)
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix=f"llama-server-{port}-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
            self._own_log = True
        else:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        self.port = port
        self.url = f"http://{self.host}:{port}/v1"
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        except BaseException as exc:
            # Nothing started: close the log it was to write (and remove it, if it was our empty temporary one).
            self.stop()
            self.port, self.url = None, ""
            if isinstance(exc, (OSError, subprocess.SubprocessError)):
                raise LocalModelUnavailable(
                    f"the llama.cpp server for {self.model_path.name} could not be started: {exc}"
                ) from exc
            raise
        try:
            self._wait_until_ready()
        except BaseException:
            # Keep the log the error message points to, even one we would otherwise clean up.
            self._own_log = False
            self.stop()
            raise
        return self.url

    def _wait_until_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        # trust_env=False: a proxy configured for the package registries must not see loopback traffic.
        with httpx.Client(timeout=5.0, trust_env=False) as client:
            while True:
                self._raise_if_exited("before it was ready")
                try:
                    if client.get(f"{self.url}/models").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() >= deadline:
                    raise self._failure(f"did not answer {self.url}/models within {self.startup_timeout:g} s")
                time.sleep(0.1)
            # /models answers before any weights are touched; a build whose matrix kernels crash (see
            # _AMX_HINT) only dies on the first inference. One greedy token here turns that into a startup
            # error instead of a dropped connection in the middle of a benchmark, and pages the weights
            # in so the first real request is not an outlier.
            try:
                response = client.post(
                    f"{self.url}/completions",
                    json={"prompt": "1", "max_tokens": 1, "temperature": 0},
                    timeout=max(deadline - time.monotonic(), 5.0),
                )
            except httpx.TransportError as exc:
                try:
                    code: int | None = self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = None
                what = (
                    f"did not finish its first completion ({exc!r})"
                    if code is None
                    else f"exited with code {code} on its first completion"
                )
                raise self._failure(what, code) from exc
            if response.status_code != 200:
                raise self._failure(f"answered its first completion with HTTP {response.status_code}")

    def _failure(self, what: str, code: int | None = None) -> LocalModelUnavailable:
        assert self.log_path is not None
        log = _tail(self.log_path)
        hint = f"\n{_AMX_HINT}" if code is not None and code < 0 and "AMX_INT8 = 1" in log else ""
        return LocalModelUnavailable(
            f"llama.cpp server for {self.model_path.name} {what}.{hint}\nLast lines of {self.log_path}:\n{log}"
        )

    def _raise_if_exited(self, when: str) -> None:
        assert self._process is not None
        code = self._process.poll()
        if code is not None:
            raise self._failure(f"exited with code {code} {when}", code)

    def stop(self) -> None:
        """Terminate the server (kill it after 10 s); safe to call more than once."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None
            self._own_log = False

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self._process is not None else "stopped"
        return f"LlamaServer({self.model_path.name!r}, alias={self.alias!r}, {state}, url={self.url!r})"
