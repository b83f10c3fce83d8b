"""The local model's server process: LlamaServer starting, stopping and reporting a fake server process (a Python
script standing in for llama.cpp's) that waits, crashes, exits early or never answers, and one real llama.cpp
server. Real processes: this tier's, not the unit tier's (which starts none).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from snap_bench.asking.llama_server import LlamaServer, llama_server_available
from snap_bench.asking.local_weights import SMOLLM2_135M, LocalModelUnavailable, resolve_weights

pytestmark = pytest.mark.slow


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


# -- LlamaServer with a fake server process ---------------------------------------------------------

FAKE_SERVER = """
import os
import signal
import socket
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(b'{"data": []}')

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if "--segv-on-post" in sys.argv:
            # What a llama.cpp build with crashing kernels does on its first inference.
            os.kill(os.getpid(), signal.SIGSEGV)
        self.send_response(200 if self.path == "/v1/completions" else 404)
        self.end_headers()
        self.wfile.write(b'{"choices": [{"text": "2"}]}')

    def log_message(self, *args):
        pass

port = int(sys.argv[sys.argv.index("--port") + 1])
print("fake server listening", sys.argv[sys.argv.index("--say") + 1], flush=True)
HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def _fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, say: str = "", segv_on_post: bool = False) -> None:
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER)
    extra = ["--segv-on-post"] if segv_on_post else []
    _use_command(monkeypatch, lambda port: [sys.executable, str(script), "--port", str(port), "--say", say, *extra])


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"not really a model")
    return path


def _use_command(monkeypatch: pytest.MonkeyPatch, command: Callable[[int], list[str]]) -> None:
    monkeypatch.setattr(LlamaServer, "_command", lambda self, port: command(port))


def test_server_start_waits_for_models_and_stop_closes_the_port(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_server(tmp_path, monkeypatch)
    log = tmp_path / "server.log"

    with LlamaServer(model_file, "fake", log_path=log, startup_timeout=30) as server:
        assert server.port is not None
        assert server.url == f"http://127.0.0.1:{server.port}/v1"
        assert httpx.get(f"{server.url}/models", trust_env=False).status_code == 200
        port = server.port

    assert not _port_open(port)
    assert "fake server listening" in log.read_text()
    server.stop()  # idempotent


@pytest.mark.parametrize("amx", [True, False])
def test_server_that_crashes_on_its_first_completion_is_reported(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, amx: bool
) -> None:
    _fake_server(tmp_path, monkeypatch, say="AMX_INT8 = 1 |" if amx else "AVX2 = 1 |", segv_on_post=True)
    server = LlamaServer(model_file, "fake", log_path=tmp_path / "server.log", startup_timeout=30)

    with pytest.raises(LocalModelUnavailable, match="exited with code -11 on its first completion") as info:
        server.start()

    assert ("GGML_NATIVE=OFF" in str(info.value)) is amx
    assert server._process is None


def test_server_that_exits_early_is_reported_with_its_log(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_command(
        monkeypatch,
        lambda port: [sys.executable, "-c", "print('cannot load model: boom'); raise SystemExit(3)"],
    )
    server = LlamaServer(model_file, "fake", log_path=tmp_path / "server.log")

    with pytest.raises(LocalModelUnavailable, match=r"(?s)exited with code 3.*cannot load model: boom"):
        server.start()


def test_server_that_never_answers_times_out_and_is_stopped(model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # flush: the log is a file, block-buffered wherever PYTHONUNBUFFERED is not set; 3 s: a busy machine's start-up
    command = "import time; print('loading', flush=True); time.sleep(60)"
    _use_command(monkeypatch, lambda port: [sys.executable, "-c", command])
    server = LlamaServer(model_file, "fake", startup_timeout=3.0)

    with pytest.raises(LocalModelUnavailable, match=r"(?s)within 3 s.*loading") as info:
        server.start()

    assert server._process is None
    # The default log lives on after a failure because the error message points at it.
    assert server.log_path is not None
    assert str(server.log_path) in str(info.value)
    server.log_path.unlink()


# -- the real thing ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_real_smollm2_answers_through_llama_server(tmp_path: Path) -> None:
    # No skip: a machine set up for this project has the local extra, and its absence is a failure.
    assert llama_server_available(), (
        'llama-cpp-python[server] is not installed in this interpreter: pip install -e ".[local]"'
    )
    model = resolve_weights(SMOLLM2_135M, tmp_path / "cache")
    log = tmp_path / "server.log"

    with LlamaServer(model, "smollm2", log_path=log) as server:
        assert server.port is not None
        port = server.port
        response = httpx.post(
            f"{server.url}/chat/completions",
            json={
                "model": "smollm2",
                "messages": [{"role": "user", "content": "Answer with a single number from 1 to 5: I like cats."}],
                "temperature": 0,
                "max_tokens": 8,
            },
            timeout=120,
            trust_env=False,
        )
        assert response.status_code == 200, response.text
        content = response.json()["choices"][0]["message"]["content"]
        assert isinstance(content, str)
        assert content.strip(), response.text

    assert not _port_open(port)


def test_server_threads_default_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    from snap_bench.asking.endpoints import THREADS_VARIABLE, EndpointProblem, server_threads

    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert server_threads() == 2
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    assert server_threads() == 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(THREADS_VARIABLE, bad)
        with pytest.raises(EndpointProblem, match=THREADS_VARIABLE):
            server_threads()
