"""Heavy imports are lazy: what a fresh interpreter has imported after importing the report or the plugin.

Each test starts a Python interpreter of its own (an import already done in the test process proves nothing),
so they are this tier's, not the unit tier's (which starts no process).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_importing_the_report_imports_no_plotting_no_pandas_no_pytest() -> None:
    code = (
        "import sys, snap_bench.report; "
        "print(sorted(m for m in ('matplotlib', 'pandas', 'pytest', 'numpy') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_plugin_imports_no_numerical_library() -> None:
    """Heavy imports are lazy: the plugin loads in every xdist worker, and the statistics run on the
    controller at the end only (an outcome name imported from the gate once pulled numpy in at import)."""
    code = (
        "import sys, snap_bench.plugin.hooks; "
        "heavy = ('numpy', 'pandas', 'scipy', 'matplotlib', 'pingouin', 'psycopg'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
