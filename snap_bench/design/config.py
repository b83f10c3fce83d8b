"""Read the config files with errors that name the file, the key and the fix.

The files come from a project's config folder (``config/``, ``--snap-config``, ini ``snap_config``) over
the defaults that ship inside the package (``snap_bench/design/defaults/``), file by file: see
:class:`ConfigFiles`. Every reader goes through :class:`Node`, which remembers where a value came from,
so that a bad value anywhere produces one :class:`ConfigError` such as::

    config/profile.yaml: temperatures[2]: 3.5 is not a temperature; use a number from 0 to 2.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# The one file a project's config extends rather than replaces (its entries over the packaged ones).
MODELS_FILE = "models.yaml"
# The instruments' defaults: profile.yaml, compass.yaml, prompts, data, thresholds.yaml and models.yaml.
PACKAGED = Path(__file__).resolve().with_name("defaults")


@dataclass(frozen=True)
class ConfigFiles:
    """A project's config folder over the packaged defaults.

    A file the project's ``folder`` holds wins over the packaged one of the same relative path; any other
    is read from the package. (models.yaml is the one file read from both: the project's entries extend
    the packaged list, :func:`snap_bench.design.models.load_models`.) The folder need not exist.
    """

    folder: Path
    packaged: Path = PACKAGED

    @classmethod
    def shipped(cls) -> ConfigFiles:
        """The packaged defaults alone (what a project without a config folder reads)."""
        return cls(PACKAGED)

    def path(self, relative: str | Path) -> Path:
        """Where ``relative`` is read from: the project's file, else the packaged one; when neither exists,
        the project's path (so that an error says where to create it)."""
        own = self.folder / relative
        if own.is_file():
            return own
        packaged = self.packaged / relative
        return packaged if packaged.is_file() else own

    def relative(self, path: Path) -> Path:
        """``path`` below the folder that holds it, the project's or the package's: its place in the design,
        the same wherever it is read from (``path`` itself if neither holds it)."""
        for root in (self.folder, self.packaged):
            if path.is_relative_to(root):
                return path.relative_to(root)
        return path

    def own(self, relative: str | Path) -> Path | None:
        """The project's own file ``relative``, if it has one that is not the packaged file itself."""
        own = self.folder / relative
        if not own.is_file() or own.resolve() == (self.packaged / relative).resolve():
            return None
        return own

    def digest(self, pattern: str = "*.y*ml") -> str:
        """sha256 (12 hex digits) over the files matching ``pattern`` that a session reads, by relative path
        and content: the packaged ones, each replaced by the project's file of the same path, and the
        project's own models.yaml after the packaged one, which it extends."""
        relative = {path.relative_to(self.packaged) for path in self.packaged.rglob(pattern)}
        if self.folder.is_dir():
            relative |= {path.relative_to(self.folder) for path in self.folder.rglob(pattern)}
        digest = hashlib.sha256()
        for name in sorted(relative):
            read = [self.packaged / name] if name == Path(MODELS_FILE) and self.own(name) else []
            for path in [*read, self.path(name)]:
                if path.is_file():
                    digest.update(name.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()[:12]


class ConfigError(Exception):
    """A configuration file is unreadable or holds a value we cannot use."""

    def __init__(self, path: Path | str, key: str, problem: str, fix: str) -> None:
        self.path = str(path)
        self.key = key
        self.problem = problem
        self.fix = fix
        where = f"{self.path}: {key}" if key else self.path
        super().__init__(f"{where}: {problem}. Fix: {fix}")


def load_yaml(path: Path) -> Node:
    """Parse one YAML file into a :class:`Node`; a missing or malformed file is a ConfigError."""
    if not path.is_file():
        raise ConfigError(path, "", "file not found", f"create {path.name} or point --snap-config at the folder")
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown position"
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(path, "", f"malformed YAML at {at} ({problem})", "correct the YAML syntax there") from None
    except UnicodeDecodeError:
        raise ConfigError(path, "", "not UTF-8 text", "save the file as UTF-8") from None
    return Node(document if document is not None else {}, path, "")


@dataclass(frozen=True)
class Node:
    """A value read from a YAML file, with the file and the dotted key it was found at."""

    value: Any
    path: Path
    key: str

    def error(self, problem: str, fix: str) -> ConfigError:
        return ConfigError(self.path, self.key, problem, fix)

    def _child_key(self, name: str | int) -> str:
        if isinstance(name, int):
            return f"{self.key}[{name}]"
        return f"{self.key}.{name}" if self.key else name

    def mapping(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.error(f"expected a mapping, found {_kind(self.value)}", "write it as `key: value` lines")
        return self.value

    def has(self, name: str) -> bool:
        return name in self.mapping()

    def get(self, name: str, default: Any = ...) -> Node:
        """The child ``name``; without a default a missing key is an error naming it."""
        values = self.mapping()
        if name not in values:
            if default is ...:
                raise ConfigError(
                    self.path, self._child_key(name), "missing", f"add `{name}:` under {self.key or 'the top level'}"
                )
            return Node(default, self.path, self._child_key(name))
        return Node(values[name], self.path, self._child_key(name))

    def items(self) -> Iterator[tuple[str, Node]]:
        for name, value in self.mapping().items():
            yield str(name), Node(value, self.path, self._child_key(str(name)))

    def elements(self) -> list[Node]:
        if not isinstance(self.value, list):
            raise self.error(f"expected a list, found {_kind(self.value)}", "write it as a YAML list (`- item` lines)")
        return [Node(value, self.path, self._child_key(index)) for index, value in enumerate(self.value)]

    def text(self) -> str:
        if not isinstance(self.value, str) or not self.value.strip():
            raise self.error(f"expected non-empty text, found {_kind(self.value)}", "give a quoted string")
        return self.value

    def optional_text(self) -> str | None:
        return None if self.value is None else self.text()

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, found {_kind(self.value)}", "write true or false")
        return self.value

    def integer(self, low: int, high: int) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int) or not low <= self.value <= high:
            raise self.error(
                f"{self.value!r} is not a whole number from {low} to {high}", f"use a number in {low}..{high}"
            )
        return self.value

    def number(self, low: float, high: float, what: str = "number") -> float:
        if isinstance(self.value, bool) or not isinstance(self.value, int | float) or not low <= self.value <= high:
            raise self.error(f"{self.value!r} is not a {what}", f"use a number from {low:g} to {high:g}")
        return float(self.value)

    def choice(self, allowed: list[str] | tuple[str, ...]) -> str:
        if self.value not in allowed:
            raise self.error(f"{self.value!r} is not one of the known values", f"use one of: {', '.join(allowed)}")
        return str(self.value)

    def unique_texts(self) -> list[str]:
        """A list of distinct non-empty strings (ids, level names)."""
        texts = [element.text() for element in self.elements()]
        seen: set[str] = set()
        for element, text in zip(self.elements(), texts, strict=True):
            if text in seen:
                raise element.error(f"duplicate {text!r}", "list each value once")
            seen.add(text)
        if not texts:
            raise self.error("empty list", "list at least one value")
        return texts


def known_keys(node: Node, keys: Sequence[str]) -> None:
    """A key the reader does not know is a typo until shown otherwise: an error naming it, the closest known
    key (``api_key_evn`` -> ``api_key_env``) and every known one, rather than a key silently left unread."""
    for key, child in node.items():
        if key not in keys:
            close = difflib.get_close_matches(key, list(keys), n=1, cutoff=0.6)
            guess = f"write `{close[0]}` (the closest known key), or " if close else ""
            raise child.error("unknown key", f"{guess}use one of: {', '.join(keys)}")


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"
