"""A session's command line without pytest: the same declarations (snap_bench.session.options) parsed by argparse,
so that a session run in-process (snap_bench.session.run) reads its settings exactly as the plugin does."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snap_bench.session.options import declare_options


@dataclass(frozen=True)
class Invocation:
    dir: Path


class _Parser:
    """argparse behind the declarations' ``addoption`` / ``addini`` shape."""

    def __init__(self) -> None:
        self.parser = argparse.ArgumentParser(prog="snap-bench", add_help=False, exit_on_error=False)
        self.ini: dict[str, tuple[Any, Any]] = {}  # name -> (type, default)

    def addoption(self, *flags: str, **attributes: Any) -> None:
        self.parser.add_argument(*flags, **attributes)

    def addini(self, name: str, help: str, type: Any = None, default: Any = None) -> None:
        self.ini[name] = (type, default)


class CommandLine:
    """An argument list (``["--model=m", "--snap-items=M01"]``) and ini values read like pytest's config: an
    OptionSource of snap_bench.session.settings. Paths in ``args`` are the run's paths, relative to ``root``."""

    def __init__(self, argv: Sequence[str], *, root: Path, ini: Mapping[str, str] | None = None) -> None:
        parser = _Parser()
        declare_options(parser, parser)
        try:
            namespace, paths = parser.parser.parse_known_args(list(argv))
        except argparse.ArgumentError as error:
            raise ValueError(str(error)) from None
        unknown = [path for path in paths if path.startswith("-")]
        if unknown:
            raise ValueError(f"unknown option(s): {', '.join(unknown)}")
        self._values = vars(namespace)
        self._ini = parser.ini
        self._ini_values = dict(ini or {})
        self.args = list(paths)
        self.invocation_params = Invocation(root)
        self.rootpath = root
        self.inipath: Path | None = None

    def getoption(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def getini(self, name: str) -> Any:
        kind, default = self._ini[name]
        if name not in self._ini_values:
            return default
        value = self._ini_values[name]
        return [line.strip() for line in value.splitlines() if line.strip()] if kind == "linelist" else value
