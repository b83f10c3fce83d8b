"""The batch step against each fake batch API, without a session: Anthropic's Message Batches (whose native
dialect is not in this package yet: its requests are built here as Messages bodies), the split by a batch's
limits, the ledger that keeps a batch from being submitted twice, and what no ledger may hold."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.batch.ledger import COLLECTED, PENDING, pending_cassettes, read_records
from snap_bench.asking.batch.step import SUBMIT, WAIT, BatchStep, ModelBatches
from snap_bench.asking.replay import recorded_reply
from snap_bench.design.models import ModelSpec, Price
from snap_bench.providers.anthropic import AnthropicBatches
from snap_bench.providers.openai import OpenAIBatches
from snap_bench.recordings.cassettes import CassetteState, examine, recorded_models
from snap_bench.wire.request import METHOD, ConditionRequest
from snap_bench.wire.scrub import Scrubber
from tests.conftest import FAKE_KEY
from tests.fake_batch_apis import ANTHROPIC, OPENAI, BatchScript, FakeBatchApis


def numbered_answer(body: dict[str, Any]) -> str:
    """The question's own number: an answer filed under another condition's cassette would show."""
    return str(body["messages"][-1]["content"]).removeprefix("question ")


def model(dialect: str) -> ModelSpec:
    return ModelSpec(
        name="fake-model",
        label="fake",
        provider_id="fake/model",
        tier="test",
        base_url=None,
        api_key_env="FAKE_OPENAI_KEY",
        price=Price(1.0, 2.0),
        weights=None,
        dialect=dialect,
    )


def requests(uri: str, root: Path, count: int) -> list[tuple[ConditionRequest, Path]]:
    found = []
    for number in range(count):
        messages = [{"role": "user", "content": f"question {number}"}]
        body = json.dumps({"max_tokens": 16, "messages": messages, "model": "fake/model"}, sort_keys=True).encode()
        request = ConditionRequest("fake-model", "profile", f"C{number:02d}", messages, uri, body, 16)
        found.append((request, root / "fake-model" / "profile" / f"C{number:02d}.json"))
    return found


@pytest.fixture
def anthropic() -> Iterator[FakeBatchApis]:
    with FakeBatchApis(BatchScript(flavour=ANTHROPIC, answer=numbered_answer)) as fake:
        yield fake
    assert not fake.script.errors, fake.script.errors[:3]


def step(root: Path, said: list[str], timeout_s: float = 30.0) -> BatchStep:
    return BatchStep(root, Scrubber([FAKE_KEY]), said.append, 0.0, timeout_s, sleep=lambda _: None)


def test_anthropic_results_out_of_order_reach_their_own_conditions(anthropic: FakeBatchApis, tmp_path: Path) -> None:
    anthropic.script.fail = {1: "errored", 2: "expired", 3: "canceled"}
    work = requests(f"{anthropic.base_url}/v1/messages", tmp_path, 8)
    entry = ModelBatches(model(ANTHROPIC), AnthropicBatches(), anthropic.base_url, FAKE_KEY, work)
    said: list[str] = []
    report = step(tmp_path, said).run([entry], WAIT)
    assert anthropic.script.chat_requests == []
    assert len(anthropic.script.submissions) == 1
    assert anthropic.script.authorizations
    assert set(anthropic.script.authorizations) == {FAKE_KEY}
    for number, (request, path) in enumerate(work):
        if number in (1, 2, 3):
            assert not path.exists()  # errored, expired, canceled: left for the synchronous path
            continue
        state, _why, responses = examine(path, METHOD, request.uri, request.body)
        assert state is CassetteState.MATCHES
        message = json.loads(responses[0].body)
        assert message["type"] == "message"
        assert message["content"][0]["text"] == str(number)
    [record] = read_records(tmp_path, "fake-model")
    assert record.status == COLLECTED
    assert sorted(v["outcome"] for v in record.collected.values()) == ["errored"] * 3 + ["recorded"] * 5
    assert report.failed == {"fake-model": 3}
    assert report.spend["fake-model"]["cost_usd"] == pytest.approx(anthropic.script.billed_usd)
    assert report.pending == []
    # every custom_id fits Anthropic's pattern (the fake refuses any other)
    assert all(len(custom_id) <= 64 for custom_id in record.items)


def test_a_pending_batch_is_never_submitted_again_and_is_collected_later(
    anthropic: FakeBatchApis, tmp_path: Path
) -> None:
    anthropic.script.never_finish = True
    work = requests(f"{anthropic.base_url}/v1/messages", tmp_path, 5)
    entry = ModelBatches(model(ANTHROPIC), AnthropicBatches(), anthropic.base_url, FAKE_KEY, work)
    first = step(tmp_path, []).run([entry], SUBMIT)
    assert [(m, done, total) for m, _id, done, total in first.pending] == [("fake-model", 0, 5)]
    assert set(pending_cassettes(tmp_path, ["fake-model"])) == {path for _request, path in work}
    # A pending batch's ledger is not a recording of the model.
    assert recorded_models(tmp_path) == []
    ledger_text = next((tmp_path / "fake-model" / ".batches").glob("*.json")).read_text()
    assert FAKE_KEY not in ledger_text
    again = step(tmp_path, [], timeout_s=0.0).run([entry], WAIT)
    assert len(anthropic.script.submissions) == 1
    assert len(again.pending) == 1
    anthropic.script.never_finish = False
    collected = step(tmp_path, []).run([dataclasses.replace(entry, to_submit=())], None)
    assert collected.pending == []
    assert len(anthropic.script.submissions) == 1
    assert all(path.is_file() for _request, path in work)
    assert read_records(tmp_path, "fake-model")[0].status == COLLECTED
    assert pending_cassettes(tmp_path, ["fake-model"]) == {}
    assert recorded_models(tmp_path) == ["fake-model"]


class SmallBatches(OpenAIBatches):
    max_requests = 4


def test_a_model_s_conditions_are_split_by_the_batch_limits_and_each_answer_replays(tmp_path: Path) -> None:
    with FakeBatchApis(BatchScript(flavour=OPENAI, answer=numbered_answer)) as fake:
        work = requests(f"{fake.base_url}/chat/completions", tmp_path, 10)
        entry = ModelBatches(model(OPENAI), SmallBatches(), fake.base_url, FAKE_KEY, work)
        report = step(tmp_path, []).run([entry], WAIT)
        assert [len(fake.script.batches[b].items) for b in fake.script.submissions] == [4, 4, 2]
        assert fake.script.chat_requests == []
    for number, (request, path) in enumerate(work):
        state, _why, responses = examine(path, METHOD, request.uri, request.body)
        assert state is CassetteState.MATCHES
        assert recorded_reply(responses).text == str(number)
    assert report.spend["fake-model"]["requests"] == 10
    assert all(record.status == COLLECTED for record in read_records(tmp_path, "fake-model"))
    assert PENDING not in {record.status for record in read_records(tmp_path, "fake-model")}


def test_a_damaged_ledger_is_an_error_naming_it_never_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "fake-model" / ".batches"
    folder.mkdir(parents=True)
    (folder / "batch_1.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"batch_1\.json: not a batch ledger"):
        pending_cassettes(tmp_path, ["fake-model"])


def test_a_batch_that_failed_as_a_whole_leaves_its_conditions_to_be_asked_again(tmp_path: Path) -> None:
    with FakeBatchApis(BatchScript(flavour=OPENAI, fail_whole=True)) as fake:
        work = requests(f"{fake.base_url}/chat/completions", tmp_path, 3)
        entry = ModelBatches(model(OPENAI), OpenAIBatches(), fake.base_url, FAKE_KEY, work)
        report = step(tmp_path, []).run([entry], WAIT)
    assert report.failed == {"fake-model": 3}
    assert report.pending == []
    assert not any(path.exists() for _request, path in work)
    # Nothing holds them any more: the synchronous path (or a new batch) asks them.
    assert pending_cassettes(tmp_path, ["fake-model"]) == {}
    assert read_records(tmp_path, "fake-model")[0].status == COLLECTED
