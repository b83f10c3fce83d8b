"""The servings under pytest's own collection and xdist's workers, through pytest in a process of its own: each
worker resolves the same servings from the options (and takes the catalogue facts the controller read, keyed by
serving), so every serving's conditions are test items, asked pinned and recorded once; replayed offline under
plain pytest, the same observations. The session's own behaviour, in-process: tests/session/test_serving_factors.py.
Two pytest sessions."""

from __future__ import annotations

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import BenchProject
from tests.fake_openrouter import FAKE_OPENROUTER_KEY
from tests.fake_serving_providers import PROVIDERS, serving_models_yaml, serving_openrouter

# M01 x 3 paraphrases x 2 contexts, one prompt, one temperature, one run: six conditions a serving.
SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
ASK = ("--model=served", f"--snap-providers={','.join(PROVIDERS)}", *SMALL)


def test_servings_recorded_by_two_workers_replay_offline_under_plain_pytest(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
    with serving_openrouter() as fake:
        (bench.root / "config" / "models.yaml").write_text(serving_models_yaml(fake.base_url), encoding="utf-8")
        recorded = bench.run(*ASK, "-n", "2", "-rA")
        asked = sorted(str(exchange.body["provider"]["only"]) for exchange in fake.script.chat_exchanges())
    recorded.assert_outcomes(passed=3 * 6)
    recorded.stdout.fnmatch_lines(["PASSED *::test_likert[[]served@ProviderC-M01-P1-NEU-t0-C0-r1[]]*"])
    assert asked == sorted(str([provider]) for provider in PROVIDERS * 6)  # each condition asked once, pinned
    first = sorted((o.model, o.condition_id, o.provider, o.score) for o in read_jsonl(bench.out / "observations.jsonl"))
    assert {model for model, *_ in first} == {f"served@{provider}" for provider in PROVIDERS}

    monkeypatch.delenv("OPENROUTER_API_KEY")  # and the fake is stopped: nothing can be asked
    replayed = bench.run(*ASK)
    replayed.assert_outcomes(passed=3 * 6)
    again = read_jsonl(bench.out / "observations.jsonl")
    assert all(o.replayed for o in again)
    assert sorted((o.model, o.condition_id, o.provider, o.score) for o in again) == first
