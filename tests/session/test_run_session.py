"""run_session, the session in one call, as the README shows it: from a script in the project's folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snap_bench.session.run import run_session
from snap_bench.session.settings import UsageProblem
from tests.conftest import REPO


def test_a_session_from_python_replays_the_shipped_recordings_from_a_relative_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's snippet: root=Path(".") in the project's folder. Resolved as pytest resolves its invocation
    # folder; a relative root used to make 182 of these 216 recordings look missing.
    monkeypatch.chdir(REPO)
    out = tmp_path / "reports"
    argv = ["benchmarks", "--model=smollm2-135m", "--snap-items=M01", "--snap-record-mode=none", f"--snap-out={out}"]
    result = run_session(argv, root=Path("."))
    assert result.planned == 216
    assert len(result.observations) == 216, result.reason
    # the same files a pytest session writes, and the status it would end with (a threshold fails: 1)
    assert result.exit_status == 1, result.reason
    document = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    assert document["session"]["observations"] == 216
    assert not result.check("smollm2-135m-profile-unscored_rate").passed
    assert result.summary[-1].startswith("exit status 1: ")


def test_a_dry_run_is_never_a_paid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # run_session asks what it plans: given --snap-dry-run it would have asked (and paid for) every condition
    monkeypatch.chdir(REPO)
    argv = ["benchmarks", "--model=smollm2-135m", "--snap-dry-run", f"--snap-out={tmp_path / 'reports'}"]
    with pytest.raises(UsageProblem, match=r"Fix: pytest benchmarks --snap-dry-run"):
        run_session(argv, root=Path("."))
    assert not (tmp_path / "reports").exists()
