"""Instruments written in YAML (questionnaires and classification tasks), found under the run's paths and
collected as test modules.

A YAML file whose top-level key is ``questionnaire`` or ``task`` is an instrument: the session finds every
such file under the paths it was given (the controller of an xdist run collects nothing, yet analyses them),
and pytest collects each as a module with one test per model and condition, as a test module marked
with its instrument would be: the same fixtures, parametrisation, node ids, JUnit and report rows.
"""

from __future__ import annotations

import fnmatch
import re
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.endpoints import NotRecorded
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
from snap_bench.observations.case import Case
from snap_bench.plugin.session_options import empty_selection

_TEST_MODULE = '''
def test_{name}(case, ask):
    """Ask the model one condition of {name}."""
    ask(case)
'''


def instrument_file_paths(config: pytest.Config, skip: Path) -> list[Path]:
    """Every instrument file under the run's paths, in a stable order (``skip``: the recordings)."""
    return [path for path in _run_files(config, skip, SUFFIXES) if instrument_file_key(path)]


def checked_other_yaml_files(config: pytest.Config, skip: Path) -> list[Path]:
    """The YAML files under the run's paths that are no instrument file (data, norms), to be named; one whose
    top-level key is a misspelt instrument key (``questionaire:``) is a usage error, never silently left out."""
    others = [path for path in _run_files(config, skip, SUFFIXES) if not instrument_file_key(path)]
    for path in others:
        misspelt = misspelt_instrument_key(path)
        if misspelt is not None:
            key, meant = misspelt
            raise pytest.UsageError(
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
            raise pytest.UsageError(empty[0])
        if empty is not None:
            not_asked[name] = empty[0]
    if names and len(not_asked) == len(names):
        raise pytest.UsageError(
            "the selection leaves no instrument of this run a condition, so nothing would be measured: "
            + "; ".join(not_asked.values())
        )
    return not_asked


def marked_instruments(config: pytest.Config, names: Iterable[str], skip: Path) -> dict[str, Path]:
    """Which of the instruments ``names`` (the plugin's, run by a Python test module) have a test module under
    the run's paths (a ``test_*.py`` file that marks its tests with the instrument), with the first such module.
    Read as text, before collection, so that the controller of an xdist run (which collects nothing) knows
    them too."""
    patterns = {name: re.compile(_MARKER.format(name=re.escape(name))) for name in names}
    found: dict[str, Path] = {}
    for module in _run_files(config, skip, (".py",)):
        if module.name.startswith("test_"):
            text = module.read_text(encoding="utf-8", errors="replace")
            for name, pattern in patterns.items():
                if pattern.search(text):
                    found.setdefault(name, module)
    return found


# ``pytest.mark.instrument("profile")``, as benchmarks/test_profile.py and snap-bench init write it.
_MARKER = r"mark\.instrument\(\s*[\"']{name}[\"']"


def _run_files(config: pytest.Config, skip: Path, suffixes: Iterable[str]) -> list[Path]:
    """The files with one of ``suffixes`` under the run's paths, each once, in a stable order."""
    found: dict[Path, None] = {}
    ignored = [str(pattern) for pattern in config.getini("norecursedirs")]
    for argument in config.args:
        path = Path(argument.split("::")[0])
        path = (path if path.is_absolute() else Path(config.invocation_params.dir) / path).resolve()
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

    def follow_up(self, config: pytest.Config) -> frozenset[str]:
        """The files' instruments whose follow-up stage was asked for (a task's phase 2 follows the same
        option as the sentiment study's, --snap-perturbation-phase2)."""
        return frozenset(name for name, kind in self.kinds.items() if kind.follow_up_requested(config))


class InstrumentFileModule(pytest.Module):
    """An instrument file as pytest sees it: a module marked with its instrument, holding one test function
    that takes the ``case`` and ``ask`` fixtures (what benchmarks/test_profile.py holds for the profile)."""

    instrument_name: str = ""

    def _getobj(self) -> Any:
        module = types.ModuleType(f"snap_bench_instrument_{self.instrument_name}")
        module.__file__ = str(self.path)
        exec(compile(_TEST_MODULE.format(name=self.instrument_name), str(self.path), "exec"), module.__dict__)
        module.__dict__["pytestmark"] = [pytest.mark.instrument(self.instrument_name)]
        return module


class BrokenInstrumentFile(pytest.File):
    """An instrument file with a mistake: its collection fails with the message naming file, key and fix."""

    def __init__(self, *, problem: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problem = problem

    def collect(self) -> Iterator[pytest.Item]:
        raise self.CollectError(self.problem)


def wholly_unrecorded(items: Sequence[pytest.Item], left: Sequence[NotRecorded], models: int) -> list[pytest.Item]:
    """The test functions of instruments no model of the run has recorded: with no condition to parametrise them
    they would each be a "got empty parameter set" skip; they are deselected instead (named once already)."""
    counts: dict[str, int] = {}
    for entry in left:
        counts[entry.instrument] = counts.get(entry.instrument, 0) + 1
    gone = {name for name, count in counts.items() if count == models}
    found = []
    for item in items:
        marker = item.get_closest_marker("instrument")
        callspec = getattr(item, "callspec", None)
        # (pytest gives an empty parametrisation one item whose `case` is a placeholder, not a Case)
        unparametrised = callspec is None or not isinstance(callspec.params.get("case"), Case)
        if marker is not None and marker.args and str(marker.args[0]) in gone and unparametrised:
            found.append(item)
    return found
