"""The unit tier starts no process and no pytest session: functions and objects in-process, so the tier stays as
fast as it can be. A unit test that asks for pytester (or testdir) fails at its setup; one that starts a process
(subprocess, multiprocessing, os.system, os.fork, os.spawn*, os.exec*, os.popen) fails where it does. Such a test
belongs to tests/session/ (the session in-process), tests/contract/ (pytest's own contract) or tests/slow/."""

from __future__ import annotations

import multiprocessing.process
import os
import subprocess
from typing import Any, NoReturn

import pytest

NO_PYTEST_SESSION = frozenset({"pytester", "testdir"})
STARTS_A_PROCESS = (
    (subprocess, "Popen"),
    (os, "system"),
    (os, "popen"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "fork"),
    (multiprocessing.process.BaseProcess, "start"),
    *((os, name) for name in dir(os) if name.startswith(("spawn", "exec"))),
)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A unit test asking for pytester fails before pytester makes anything."""
    asked = sorted(NO_PYTEST_SESSION & set(getattr(item, "fixturenames", ())))
    if asked:
        pytest.fail(
            f"{item.nodeid} asks for {asked[0]}: a unit test starts no pytest session. Move it to tests/session/"
            " (run_session, in-process) or tests/contract/ (pytest's own contract).",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _no_process_in_the_unit_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting a process raises, so a test that would start one fails, naming the tier it belongs to."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError(
            "a unit test starts no process (tests/unit/conftest.py): move it to tests/session/, tests/contract/ or "
            "tests/slow/"
        )

    for module, name in STARTS_A_PROCESS:
        if hasattr(module, name):
            monkeypatch.setattr(module, name, refuse)
