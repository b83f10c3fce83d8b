"""The servings under pytest's own collection, xdist's workers and pytest-html, through pytest in a process of its
own. One model routed to three providers (ProviderC one point higher on half the items) and a reasoning model asked
at two efforts (high one point higher on the same half), each level a serving of its own: recorded by two workers
(each worker resolves the same servings from the entries and takes the catalogue facts the controller read, so
every serving's conditions are test items, asked pinned and recorded once), then replayed offline under plain
pytest and under two workers again, with the same observations. Every session's report names ProviderC, the items
it moved, its variance share and the provider_flip_rate checks, does not flag the two providers that agree, and
shows the two efforts differing; the run fails on them (gated with the thresholds). The session's own behaviour,
in-process: tests/session/test_serving_factors.py and tests/session/test_serving_report.py. Three pytest sessions.
"""

from __future__ import annotations

import html
import re

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import BenchProject
from tests.fake_openrouter import FAKE_OPENROUTER_KEY
from tests.fake_serving_providers import PROVIDERS, serving_models_yaml, serving_openrouter

# Four moral items x 3 paraphrases x 2 contexts, one prompt, temperature 0, two runs: 48 conditions a serving.
DESIGN = ("--snap-items=M01,M02,M03,M04", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=2")
ASK = ("--model=served,thinker", *DESIGN)
SERVINGS = (*(f"served@{p}" for p in PROVIDERS), "thinker@effort-low", "thinker@effort-high")
PER_SERVING = 48


def with_levels(models_yaml: str) -> str:
    """The fake's models.yaml with each model's levels in its entry (an option would set them for both models)."""
    served = "    id: open/served-model\n    dialect: openrouter\n"
    thinker = "    id: open/thinking-model\n    dialect: openrouter\n"  # thinker's entry comes before roomy's
    text = models_yaml.replace(served, f"{served}    providers: [{', '.join(PROVIDERS)}]\n", 1)
    return text.replace(thinker, f"{thinker}    reasoning_efforts: [low, high]\n", 1)


def assert_report_names_the_differing_levels(bench: BenchProject) -> None:
    report = html.unescape((bench.out / "report.html").read_text(encoding="utf-8"))
    first_screen = report[: report.index('id="snap-summary"')]
    assert "Providers and reasoning efforts" in first_screen
    line = re.search(r"served · profile · provider: ([^<]*)<", first_screen)
    assert line is not None, first_screen[-2000:]
    assert "provider ProviderC differs from the other levels (ProviderA, ProviderB)" in line.group(1)
    assert re.search(r"items moved \(FDR 5 %\): M0\d, M0\d", line.group(1))
    assert re.search(r"provider's variance share \d+% at t0", line.group(1))
    assert "provider_flip_rate: 2 fail, 1 pass" in line.group(1)
    assert "the two effort levels differ" in first_screen
    section = report[report.index('id="snap-servings"') :]
    for pair, outcome in (("ProviderA vs ProviderB", "pass"), ("ProviderA vs ProviderC", "fail")):
        row = re.search(rf"{pair}</th>.*?snap-badge snap-\w+\">(\w[\w ]*)<", section)
        assert row is not None
        assert row.group(1) == outcome
    assert "served-profile-provider_flip_rate[ProviderB-vs-ProviderC]" in report  # the table of checks


def test_servings_recorded_by_two_workers_replay_offline_and_report_the_level_that_differs(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
    with serving_openrouter() as fake:
        (bench.root / "config" / "models.yaml").write_text(with_levels(serving_models_yaml(fake.base_url)), "utf-8")
        recorded = bench.run(*ASK, "-n", "2", "-rA", gate=True)
        asked = [exchange.body for exchange in fake.script.chat_exchanges() if exchange.body is not None]
    recorded.stdout.fnmatch_lines(["PASSED *::test_likert[[]served@ProviderC-M01-P1-NEU-t0-C0-r1[]]*"])
    pinned = sorted(str(body["provider"]["only"]) for body in asked if body["model"] == "open/served-model")
    assert pinned == sorted(str([provider]) for provider in PROVIDERS * PER_SERVING)  # each asked once, pinned
    assert recorded.ret == 1  # the servings that differ fail the run: gated with the thresholds
    assert_report_names_the_differing_levels(bench)
    first = sorted((o.model, o.condition_id, o.provider, o.score) for o in read_jsonl(bench.out / "observations.jsonl"))
    assert {model for model, *_ in first} == set(SERVINGS)

    monkeypatch.delenv("OPENROUTER_API_KEY")  # and the fake is stopped: nothing can be asked
    for workers in ((), ("-n", "2")):
        replayed = bench.run(*ASK, *workers, gate=True)
        assert replayed.ret == 1
        again = read_jsonl(bench.out / "observations.jsonl")
        assert all(o.replayed for o in again)
        assert sorted((o.model, o.condition_id, o.provider, o.score) for o in again) == first
        assert_report_names_the_differing_levels(bench)
