"""Fitness of the layout: the core names no instrument, no instrument imports another, and every
registered instrument brings what the core calls (metrics, an analysis, a thresholds section).

The core is everything in snap_bench/ outside an instrument's own package; the registry
(snap_bench/instruments/__init__.py) is the one place that lists the shipped instruments.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.design.config import load_yaml
from snap_bench.instruments import Instrument, registered
from snap_bench.judging.verdicts import THRESHOLDS_FILE, load_thresholds
from tests.conftest import REPO, SHIPPED

PACKAGE = REPO / "snap_bench"
INSTRUMENTS = PACKAGE / "instruments"
REGISTRY = INSTRUMENTS / "__init__.py"
NAMES = sorted(registered())


def core_modules() -> list[Path]:
    own = {INSTRUMENTS / name for name in NAMES}
    return sorted(
        path for path in PACKAGE.rglob("*.py") if path != REGISTRY and not any(folder in path.parents for folder in own)
    )


def code_words(path: Path) -> Iterator[tuple[int, str]]:
    """Every identifier, attribute, imported name and string the module's code holds (docstrings and
    comments are prose, not code: they may speak of an instrument)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, node.module or ""
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            yield node.lineno, node.name


def mentions(word: str, name: str) -> bool:
    """``name`` as a word of its own in ``word`` (``snap_compass_per_prompt`` mentions compass)."""
    return re.search(rf"(?<![a-z]){re.escape(name)}(?![a-z])", word, re.IGNORECASE) is not None


def test_the_registry_holds_the_shipped_instruments() -> None:
    # the BFI-25 and the prompt-perturbation study are YAML files (benchmarks/), read by the questionnaire
    # and task machinery, which is core: it names neither registered instrument
    assert NAMES == ["compass", "profile"]


def test_no_core_module_names_an_instrument() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {word!r}"
        for path in core_modules()
        for line, word in code_words(path)
        for name in NAMES
        if mentions(word, name)
    ]
    assert found == []


def test_the_fitness_check_finds_a_mention(tmp_path: Path) -> None:
    """The check above can fail: a core module that special-cases an instrument is caught."""
    module = tmp_path / "special.py"
    module.write_text('"""The compass is fine in prose."""\nif instrument == "compass":\n    pass\n', "utf-8")
    assert [word for _, word in code_words(module) if mentions(word, "compass")] == ["compass"]


@pytest.mark.parametrize("name", NAMES)
def test_no_instrument_imports_another(name: str) -> None:
    others = [other for other in NAMES if other != name]
    imported = [
        f"{path.relative_to(REPO)}:{line}: {word}"
        for path in sorted((INSTRUMENTS / name).rglob("*.py"))
        for line, word in code_words(path)
        if any(word.startswith(f"snap_bench.instruments.{other}") for other in others)
    ]
    assert imported == []


@pytest.mark.parametrize("name", NAMES)
def test_every_instrument_brings_what_the_core_calls(name: str) -> None:
    kind = registered()[name]
    assert kind.title, f"{name}: no title"
    assert kind.metrics, f"{name}: no metric specs"
    assert kind.hooks.analyse is not Instrument.analyse
    # its thresholds.yaml section names only metrics it reports, with their own direction
    config = load_thresholds(SHIPPED, name, {}, None, {**SHARED_METRICS, **kind.metrics})
    assert config.metrics, f"{THRESHOLDS_FILE} has no metrics for {name}"
    # its design is a packaged questionnaire file named after it, read by the one questionnaire reader
    assert load_yaml(SHIPPED.path(f"{name}.yaml")).get("questionnaire").text() == name


def imported_modules(path: Path, module: str) -> set[str]:
    """The snap_bench modules ``module`` imports anywhere (top level, type checking or inside a function)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every path from a module back to itself in ``graph`` (module -> the modules it imports)."""
    cycles = []
    for start in sorted(graph):
        # depth-first search for a path from the module back to itself
        stack, seen = [(start, (start,))], set()
        while stack:
            node, trail = stack.pop()
            for following in graph[node]:
                if following == start:
                    cycles.append(" -> ".join((*trail, start)))
                elif following not in seen:
                    seen.add(following)
                    stack.append((following, (*trail, following)))
    return cycles


def test_no_import_cycle_in_the_package() -> None:
    """Every module can be read on its own terms: no two modules import each other, even lazily."""
    modules = {
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): path
        for path in PACKAGE.rglob("*.py")
    }
    graph = {name: imported_modules(path, name) & set(modules) - {name} for name, path in modules.items()}
    assert import_cycles(graph) == []


def test_the_cycle_check_finds_a_lazy_cycle(tmp_path: Path) -> None:
    """The check above can fail: an import inside a function closes a cycle as much as one at the top."""
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("import pkg.second\n", "utf-8")
    second.write_text("def late() -> None:\n    from pkg import first\n", "utf-8")
    graph = {
        "pkg.first": imported_modules(first, "pkg.first") & {"pkg.second"},
        "pkg.second": imported_modules(second, "pkg.second") & {"pkg.first"},
    }
    assert import_cycles(graph) == ["pkg.first -> pkg.second -> pkg.first", "pkg.second -> pkg.first -> pkg.second"]


# A module is read whole: past this many lines it holds more than one job (split it along its seams).
MODULE_LINES = 450


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {
        str(path.relative_to(REPO)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MODULE_LINES
    }
    assert long == {}


def test_the_top_of_the_package_is_its_stages() -> None:
    """`ls snap_bench` reads as the data flow: stage folders, and at most the package's door and its command."""
    assert sorted(path.name for path in PACKAGE.glob("*.py")) == ["__init__.py", "cli.py"]
    stages = {
        "design",
        "asking",
        "recordings",
        "wire",
        "observations",
        "analysis",
        "judging",
        "report",
        "history",
        "plugin",
    }
    assert stages <= {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}


# The plugin's jobs: hooks, options, settings, the session's lifecycle, its end, the ledger, instrument files,
# outputs, reporting, the process. What is not pytest glue lives in the stage it belongs to.
PLUGIN_MODULES = 10


def test_the_plugin_is_at_most_ten_modules() -> None:
    modules = sorted(path.name for path in (PACKAGE / "plugin").glob("*.py") if path.name != "__init__.py")
    assert len(modules) <= PLUGIN_MODULES, modules


# The stages below the instruments (pyproject.toml's layers contract); they name what they ask of an instrument as
# a protocol of their own (wire's Asked, asking's Answered, analysis's Analyser, judging's Compared, the report's
# Titled, Sectioned and Narrated), which every Instrument satisfies.
BELOW_THE_INSTRUMENTS = ("report", "history", "judging", "analysis", "asking", "recordings", "wire", "observations")


def test_no_stage_below_the_instruments_names_them_even_for_typing() -> None:
    found = [
        f"{path.relative_to(REPO)} imports {name}"
        for stage in BELOW_THE_INSTRUMENTS
        for path in sorted((PACKAGE / stage).rglob("*.py"))
        for name in sorted(imported_modules(path, ".".join(path.relative_to(REPO).with_suffix("").parts)))
        if name == "snap_bench.instruments" or name.startswith("snap_bench.instruments.")
    ]
    assert found == []


def test_the_state_folder_is_spelled_once() -> None:
    """Everything the processes of a session share (budget, paces, stops, claims, the interrupt flag) asks
    snap_bench.asking.state_folder where it is."""
    spelled = [
        f"{path.relative_to(REPO)}:{line}"
        for path in PACKAGE.rglob("*.py")
        for line, word in code_words(path)
        if word == ".state"
    ]
    assert spelled == ["snap_bench/asking/state_folder.py:10"]


def test_no_class_is_made_at_run_time() -> None:
    """The registry keeps factories: no module makes a class with the three-argument type() (an instrument file's
    instrument is an instance of its kind's class, named from the file)."""
    made = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 3
    ]
    assert made == []
