"""The one registry of instruments: the name a test module's ``instrument`` marker uses -> its factory (an
:class:`InstrumentKind`: a registered class is its own); and the kinds of instrument a YAML file may write, each
a factory (file, config) -> instrument.

The profile and the compass register here (the BFI-25 and the prompt-perturbation study are YAML files);
another one registers itself with :func:`register` (for example from a conftest.py or a plugin module) and
needs no change to any core module. A YAML file whose top-level key (near its top) is ``questionnaire`` is a
Likert questionnaire, ``task`` a classification task asked through rewordings (only the opening of a file is
read to tell: recordings are YAML too).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments.base import Instrument, InstrumentKind, Selection
from snap_bench.instruments.compass import CompassInstrument
from snap_bench.instruments.compass.instrument import COMPASS
from snap_bench.instruments.profile import ProfileInstrument
from snap_bench.instruments.questionnaire import KIND_KEY as QUESTIONNAIRE_KEY
from snap_bench.instruments.questionnaire import QuestionnaireInstrument
from snap_bench.instruments.questionnaire.reader import LIKERT, read_questionnaire
from snap_bench.instruments.task import TASK_KEY, TaskInstrument, task_kind
from snap_bench.observations.observation import Scored

__all__ = [
    "INSTRUMENT_FILE_KEYS",
    "SUFFIXES",
    "CompassInstrument",
    "Instrument",
    "InstrumentKind",
    "ProfileInstrument",
    "Scored",
    "Selection",
    "TaskInstrument",
    "instrument_file_key",
    "instrument_file_kind",
    "instrument_kinds",
    "load_instrument",
    "load_instruments",
    "metric_catalogue",
    "misspelt_instrument_key",
    "register",
    "register_questionnaire_kind",
    "registered",
]

_REGISTRY: dict[str, InstrumentKind] = {}

# A questionnaire file's `kind` -> the instrument it is (register_questionnaire_kind).
_QUESTIONNAIRE_KINDS: dict[str, type[QuestionnaireInstrument]] = {}


def register_questionnaire_kind(kind: str, instrument: type[QuestionnaireInstrument]) -> None:
    """Make a questionnaire file's ``kind: <kind>`` build ``instrument`` (a QuestionnaireInstrument that adds its
    own scoring, analysis or report, as the compass does); a team's package can register a kind of its own."""
    if not kind.isidentifier():
        raise TypeError(f"a questionnaire kind is an identifier-like string, got {kind!r}")
    _QUESTIONNAIRE_KINDS[kind] = instrument


register_questionnaire_kind(LIKERT, QuestionnaireInstrument)
register_questionnaire_kind(COMPASS, CompassInstrument)


def questionnaire_kind(path: Path, config: ConfigFiles) -> InstrumentKind:
    """The instrument of the questionnaire written in ``path``, as the registry keeps instruments: named and titled
    from the file, of the kind it names, built for a config (a mistake in it is a ConfigError now, at
    collection)."""
    design = read_questionnaire(path, config)
    if design.kind not in _QUESTIONNAIRE_KINDS:
        known = ", ".join(_QUESTIONNAIRE_KINDS)
        raise ConfigError(path, "kind", f"unknown kind {design.kind!r}", f"use one of: {known}")
    hooks = _QUESTIONNAIRE_KINDS[design.kind]

    def build(wanted: ConfigFiles) -> Instrument:
        # The design read above serves the same config: the file and its norms are read once.
        return hooks(wanted, design if wanted == config else read_questionnaire(path, wanted))

    return InstrumentKind(design.name, design.title, hooks, build)


SUFFIXES = (".yaml", ".yml")
# The top-level key that makes a YAML file an instrument -> what makes the instrument's class from the file.
KINDS: dict[str, Callable[[Path, ConfigFiles], InstrumentKind]] = {
    QUESTIONNAIRE_KEY: questionnaire_kind,
    TASK_KEY: task_kind,
}
INSTRUMENT_FILE_KEYS = tuple(KINDS)
HEAD_BYTES = 4096
_KIND_LINE = re.compile(rf"^({'|'.join(KINDS)})\s*:", re.MULTILINE)


def instrument_file_key(path: Path) -> str | None:
    """The top-level key that makes ``path`` an instrument file (``questionnaire``, ``task``); None for any
    other file."""
    head = _head(path)
    found = _KIND_LINE.search(head) if head is not None else None
    return found.group(1) if found else None


def _head(path: Path) -> str | None:
    """The first HEAD_BYTES of a YAML file as text (enough for its top-level keys); None for any other file."""
    if path.suffix not in SUFFIXES or not path.is_file():
        return None
    try:
        with path.open("rb") as stream:
            return stream.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


_TOP_LEVEL_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:", re.MULTILINE)


def misspelt_instrument_key(path: Path) -> tuple[str, str] | None:
    """A top-level key of the YAML file ``path`` that is close to an instrument key but none (``questionaire``),
    and the key it is close to, so that such a file is named rather than silently left out of the run; None
    otherwise."""
    head = _head(path)
    if head is None or _KIND_LINE.search(head):
        return None
    for key in _TOP_LEVEL_KEY.findall(head):
        close = difflib.get_close_matches(key.lower(), list(KINDS), n=1, cutoff=0.75)
        if close:
            return str(key), close[0]
    return None


def instrument_file_kind(path: Path, config: ConfigFiles) -> InstrumentKind:
    """The instrument of the file ``path``; a mistake in it is a ConfigError naming file, key and fix."""
    key = instrument_file_key(path)
    if key is None:
        raise ConfigError(path, "", "not an instrument file", f"open it with one of: {', '.join(KINDS)}")
    return KINDS[key](path, config)


def register(kind: type[Instrument]) -> type[Instrument]:
    """Add an instrument class to the registry (usable as a class decorator); re-registering a name
    replaces the earlier class, so a test can register its own."""
    name = getattr(kind, "name", None)
    if not isinstance(name, str) or not name.isidentifier():
        raise TypeError(f"{kind.__name__}.name must be an identifier-like string, got {name!r}")
    if not getattr(kind, "title", None):
        raise TypeError(f"{kind.__name__} has no title (how the report and the terminal name it)")
    _REGISTRY[name] = InstrumentKind.of_class(kind)
    return kind


def registered() -> Mapping[str, InstrumentKind]:
    return dict(_REGISTRY)


def load_instrument(name: str, config: ConfigFiles) -> Instrument:
    """Build the instrument ``name`` from ``config`` (a project's files over the packaged ones); KeyError for
    an unknown name."""
    return _REGISTRY[name](config)


def load_instruments(config: ConfigFiles, files: Iterable[Path] = ()) -> dict[str, Instrument]:
    """Every registered instrument and the questionnaire or task written in each file of ``files``, built
    from ``config`` (what a session whose paths hold those files loads; for scripts and tests)."""
    built = {name: load_instrument(name, config) for name in registered()}
    for path in files:
        kind = instrument_file_kind(path, config)
        built[kind.name] = kind(config)
    return built


def metric_catalogue(instruments: Mapping[str, Instrument | InstrumentKind] | None = None) -> MetricCatalogue:
    """What each metric of ``instruments`` (default: every registered one) is: their own specs and the shared."""
    chosen = registered() if instruments is None else instruments
    return MetricCatalogue({name: kind.metrics for name, kind in chosen.items()})


def instrument_kinds() -> dict[str, type[Instrument]]:
    """The registered instruments and the class every task file's instrument derives from: whose options the
    plugin adds (a task's phase 2 is asked with --snap-perturbation-phase2) and whose metrics the glossary
    explains (a questionnaire file's are the profile's)."""
    return {**{name: kind.hooks for name, kind in _REGISTRY.items()}, TaskInstrument.name: TaskInstrument}


for _kind in (ProfileInstrument, CompassInstrument):
    register(_kind)
