"""The stats package's contract: its exception, its public names, and what it may import."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

import snap_bench.stats
from snap_bench.stats import UndefinedStatistic

STATS_DIRECTORY = Path(snap_bench.stats.__file__).parent


def test_undefined_statistic_is_a_value_error_with_a_reason() -> None:
    error = UndefinedStatistic("ICC(2,1)", "zero variance")
    assert isinstance(error, ValueError)
    assert (error.statistic, error.reason) == ("ICC(2,1)", "zero variance")
    assert str(error) == "ICC(2,1) is undefined: zero variance"


def test_undefined_statistic_survives_pickling() -> None:
    """xdist and multiprocessing pickle exceptions; the two-argument constructor must round-trip."""
    copy = pickle.loads(pickle.dumps(UndefinedStatistic("alpha", "zero variance")))
    assert (copy.statistic, copy.reason, str(copy)) == ("alpha", "zero variance", "alpha is undefined: zero variance")


def test_every_public_name_is_exported() -> None:
    for name in snap_bench.stats.__all__:
        assert hasattr(snap_bench.stats, name), name
    for required in [
        "UndefinedStatistic",
        "cronbach_alpha",
        "cronbach_alpha_ci",
        "icc",
        "krippendorff_alpha",
        "mean_pairwise_r",
        "coefficient_of_variation",
        "eta_squared",
        "all_runs_agree_share",
        "bootstrap_ci",
    ]:
        assert required in snap_bench.stats.__all__


@pytest.mark.parametrize("module", sorted(STATS_DIRECTORY.glob("*.py")), ids=lambda path: path.name)
def test_stats_modules_import_neither_pytest_nor_pandas_nor_pingouin(module: Path) -> None:
    """The statistics are pure numpy/scipy (ARCHITECTURE.md: stats/ never imports pytest)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & {"pytest", "_pytest", "pandas", "pingouin"}
