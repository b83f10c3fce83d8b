"""Where a project's snap-bench folders are: the nearest folder holding ``snap-bench.toml``.

``snap-bench init`` writes that file at the project's root. pytest's own rootdir depends on where pytest is
started and which ini files it finds on the way (``cd benchmarks && pytest team.yaml`` in a repository without
a pytest section makes ``benchmarks/`` the rootdir), so the plugin looks for this file instead, walking up from
the run's paths and from the folder pytest was started in: ``config/``, ``cassettes/``, ``reports/`` and ``.env``
are then the root's wherever pytest is started. A separate file, not a table in the project's
``pyproject.toml``: the team's own pytest settings stay untouched and its own test runs unaffected.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

PROJECT_FILE = "snap-bench.toml"

PROJECT_FILE_TEXT = """\
# Written by `snap-bench init`: this folder is the root of the project's snap-bench folders. Wherever pytest
# is started in the repository (a subfolder included), config/, cassettes/, reports/, baselines/ and .env are
# read here, not beside the folder pytest was started in. The file holds nothing else; delete it and the
# plugin uses pytest's rootdir instead.
"""


def project_root(starts: Iterable[Path]) -> Path | None:
    """The nearest folder at or above one of ``starts`` (tried in order) holding :data:`PROJECT_FILE`."""
    for start in starts:
        folder = start if start.is_dir() else start.parent
        for candidate in (folder, *folder.parents):
            if (candidate / PROJECT_FILE).is_file():
                return candidate
    return None
