"""Where a project's snap-bench folders are: the nearest folder holding ``snap-bench.toml``.

``snap-bench init`` writes that file at the project's root. pytest's own rootdir depends on where pytest is
started and which ini files it finds on the way (``cd benchmarks && pytest team.yaml`` in a repository without
a pytest section makes ``benchmarks/`` the rootdir), so the plugin looks for this file instead, walking up from
the run's paths and from the folder pytest was started in: ``config/``, ``cassettes/``, ``reports/`` and ``.env``
are then the root's wherever pytest is started. A separate file, not a table in the project's
``pyproject.toml``: the team's own pytest settings stay untouched and its own test runs unaffected.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
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


def root_of_run_paths(invoked: Path, run_paths: Sequence[Path]) -> Path:
    """The rootdir pytest takes when it finds no ini file, worked out from the paths the run collects: the
    nearest folder holding ``setup.py`` at or above their common folder, else the common folder of that and the
    folder pytest was started in (pytest's documented rule, "Finding the rootdir").

    pytest itself applies this rule to every existing path on the command line, and it does so before any
    plugin is loaded, so a plugin's option is not known yet: in ``--snap-out /some/folder`` the value counts as
    a run path and moves the rootdir to a parent of both. The run's own paths (``config.args``, parsed once the
    options are known) are what this reads instead, so no option's value moves it.
    """
    folders = [path if path.is_dir() else path.parent for path in run_paths if path.exists()]
    ancestor = Path(os.path.commonpath(folders)) if folders else invoked
    for folder in (ancestor, *ancestor.parents):
        if (folder / "setup.py").is_file():
            return folder
    common = Path(os.path.commonpath([invoked, ancestor]))
    return ancestor if common == Path(common.anchor) else common
