"""A session's command-line paths are relative to where it was started: pytest's invocation folder, or the root
run_session is given, never the calling process's working folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.history.address import StoreAddress
from snap_bench.session.command_line import CommandLine
from snap_bench.session.settings import SessionSettings


def test_json_and_history_paths_are_read_from_the_sessions_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = SessionSettings.from_config(CommandLine(["--snap-json=a.json", "--snap-history=h.sqlite"], root=root))
    assert settings.json_path == root / "a.json"
    assert settings.history == StoreAddress(path=root / "h.sqlite")
