"""What the run's paths hold: the instruments written in YAML (questionnaires and classification tasks), the
plugin's instruments whose test modules are there, and the YAML files that are no instrument.

A YAML file whose top-level key is ``questionnaire`` or ``task`` is an instrument: the session finds every
such file under the paths it was given (the controller of an xdist run collects nothing, yet analyses them);
the plugin collects each as a test module (snap_bench.plugin.collection).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments import (
    INSTRUMENT_FILE_KEYS,
    SUFFIXES,
    Instrument,
    InstrumentKind,
    Selection,
    instrument_file_key,
    instrument_file_kind,
    misspelt_instrument_key,
    registered,
)
from snap_bench.session.settings import UsageProblem, empty_selection


@dataclass(frozen=True)
class RunPaths:
    """The paths a run was given (relative to ``invocation_dir``) and the folder names it does not enter."""

    args: tuple[str, ...]
    invocation_dir: Path
    ignored: tuple[str, ...] = ()


def instrument_file_paths(paths: RunPaths, skip: Path) -> list[Path]:
    """Every instrument file under the run's paths, in a stable order (``skip``: the recordings)."""
    return [path for path in _run_files(paths, skip, SUFFIXES) if instrument_file_key(path)]


def checked_other_yaml_files(paths: RunPaths, skip: Path) -> list[Path]:
    """The YAML files under the run's paths that are no instrument file (data, norms), to be named; one whose
    top-level key is a misspelt instrument key (``questionaire:``) is a usage error, never silently left out."""
    others = [path for path in _run_files(paths, skip, SUFFIXES) if not instrument_file_key(path)]
    for path in others:
        misspelt = misspelt_instrument_key(path)
        if misspelt is not None:
            key, meant = misspelt
            raise UsageProblem(
                f"{path}: the top-level key {key!r} is no instrument key, so this file would not be run. Fix: "
                f"write {meant}: (an instrument file starts with one of: {', '.join(INSTRUMENT_FILE_KEYS)}), "
                "or move the file out of the run's paths"
            )
    return others


def not_asked_instruments(
    in_run: Iterable[str], build: Callable[[str], Instrument], select: Callable[[Instrument], Selection]
) -> dict[str, str]:
    """The instruments of the run (``in_run``) that the selection options leave no condition by choice (items
    of another instrument), with why. One left none because it is not asked at a chosen level (a temperature
    it lacks) is a usage error naming its legal values, and so is a selection that leaves every one none: the
    run would measure nothing."""
    names = sorted(set(in_run))
    not_asked: dict[str, str] = {}
    for name in names:
        instrument = build(name)
        empty = empty_selection(instrument, select(instrument))
        if empty is not None and empty[1]:
            raise UsageProblem(empty[0])
        if empty is not None:
            not_asked[name] = empty[0]
    if names and len(not_asked) == len(names):
        raise UsageProblem(
            "the selection leaves no instrument of this run a condition, so nothing would be measured: "
            + "; ".join(not_asked.values())
        )
    return not_asked


def marked_instruments(paths: RunPaths, names: Iterable[str], skip: Path) -> dict[str, Path]:
    """Which of the instruments ``names`` (the plugin's, run by a Python test module) have a test module under
    the run's paths (a ``test_*.py`` file that marks its tests with the instrument), with the first such module.
    Read as text, before collection, so that the controller of an xdist run (which collects nothing) knows
    them too."""
    patterns = {name: re.compile(_MARKER.format(name=re.escape(name))) for name in names}
    found: dict[str, Path] = {}
    for module in _run_files(paths, skip, (".py",)):
        if module.name.startswith("test_"):
            text = module.read_text(encoding="utf-8", errors="replace")
            for name, pattern in patterns.items():
                if pattern.search(text):
                    found.setdefault(name, module)
    return found


# ``pytest.mark.instrument("profile")``, as benchmarks/test_profile.py and snap-bench init write it.
_MARKER = r"mark\.instrument\(\s*[\"']{name}[\"']"


def _run_files(paths: RunPaths, skip: Path, suffixes: Iterable[str]) -> list[Path]:
    """The files with one of ``suffixes`` under the run's paths, each once, in a stable order."""
    found: dict[Path, None] = {}
    ignored = list(paths.ignored)
    for argument in paths.args:
        path = Path(argument.split("::")[0])
        path = (path if path.is_absolute() else paths.invocation_dir / path).resolve()
        found.update(dict.fromkeys(_files(path, ignored, skip.resolve(), tuple(suffixes))))
    return list(found)


def _files(path: Path, ignored: list[str], skip: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    if path.is_file():
        if path.suffix in suffixes:
            yield path
        return
    if not path.is_dir() or path == skip:
        return
    for child in sorted(path.iterdir()):
        if child.is_dir():
            if not any(fnmatch.fnmatch(child.name, pattern) for pattern in ignored):
                yield from _files(child, ignored, skip, suffixes)
        elif child.suffix in suffixes:
            yield child


class InstrumentFiles:
    """The session's instrument files: name -> what builds its instrument, and the file each was read from."""

    def __init__(self, config: ConfigFiles) -> None:
        self.config = config
        self.kinds: dict[str, InstrumentKind] = {}
        self._files: dict[Path, str] = {}

    def add(self, path: Path) -> str:
        """Make the instrument written in ``path`` one of the session's instruments; its name. A mistake in
        the file is a ConfigError naming the file, key and fix."""
        path = path.resolve()
        if path in self._files:
            return self._files[path]
        key = instrument_file_key(path)
        kind = instrument_file_kind(path, self.config)
        taken = next((str(other) for other, name in self._files.items() if name == kind.name), None)
        if taken is not None or kind.name in registered():
            raise ConfigError(
                path,
                str(key),
                f"the name {kind.name!r} is taken by {taken or 'an instrument of the plugin'}",
                "give every instrument file a name of its own",
            )
        self.kinds[kind.name] = kind
        self._files[path] = kind.name
        return kind.name

    def sources(self) -> dict[str, Path]:
        """Each file's instrument name -> the file."""
        return {name: path for path, name in self._files.items()}

    def follow_up(self, switches: Mapping[str, object]) -> frozenset[str]:
        """The files' instruments whose follow-up stage was asked for (a task's phase 2 follows the same
        option as the sentiment study's, --snap-perturbation-phase2)."""
        return frozenset(name for name, kind in self.kinds.items() if kind.follow_up_requested(switches))
