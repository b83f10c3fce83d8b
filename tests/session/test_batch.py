"""--snap-batch, the session run in-process: every unrecorded condition asked through the provider's batch API
before any condition is asked, its answers written as synchronous recordings, its batches kept with the recordings
so that no run submits twice."""

from __future__ import annotations

import json
import textwrap
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.observations.observation import Observation
from snap_bench.recordings.cassettes import leaked_secrets
from snap_bench.session.settings import UsageProblem
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, BenchProject
from tests.fake_batch_apis import ANTHROPIC, GEMINI, OPENAI, OPENROUTER, BatchScript, FakeBatchApis
from tests.session.asking_checks import outcomes, shows_in_order

FAST = ("--snap-batch-poll=0.01",)


def varied_answer(body: dict[str, Any]) -> str:
    """An answer from 1 to 5 that depends on the prompt, so that the figures are not all alike."""
    return str(1 + zlib.crc32(json.dumps(body["messages"], sort_keys=True).encode()) % 5)


@pytest.fixture(params=[OPENAI, OPENROUTER])
def provider(request: pytest.FixtureRequest) -> Iterator[FakeBatchApis]:
    with FakeBatchApis(BatchScript(flavour=request.param, answer=varied_answer)) as fake:
        yield fake
    assert not fake.script.errors, fake.script.errors[:3]


def batch_project(root: Path, fake: FakeBatchApis, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    root.mkdir()
    project = BenchProject(root, fake.base_url)
    (project.root / "config" / "models.yaml").write_text(
        textwrap.dedent(f"""\
        models:
          fake-model:
            id: fake/model
            dialect: {fake.script.flavour}
            base_url: {fake.base_url}
            api_key_env: FAKE_OPENAI_KEY
            price: {{input_per_million: 1.0, output_per_million: 2.0}}
        """),
        encoding="utf-8",
    )
    return project


@pytest.fixture
def bench(tmp_path: Path, provider: FakeBatchApis, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    return batch_project(tmp_path / "project", provider, monkeypatch)


def test_every_condition_is_recorded_through_the_batch_api_without_a_synchronous_request(
    bench: BenchProject, provider: FakeBatchApis
) -> None:
    result = bench.session("--model=fake-model", *SLICE, "--snap-batch", *FAST)
    assert outcomes(result) == {"passed": SLICE_SIZE}
    assert provider.script.chat_requests == []
    assert len(provider.script.submissions) == 1
    assert len(list((bench.cassettes / "fake-model" / "profile").glob("*.json"))) == SLICE_SIZE
    done = ["*fake-model: batch * submitted (18 requests*", "*fake-model: batch * 18/18 done*"]
    assert shows_in_order(result.summary, done), result.summary
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert all(o.replayed and o.score is not None for o in observations)
    spend = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))["spend"]["fake-model"]
    assert spend["batch_requests"] == SLICE_SIZE
    assert spend["cost_usd"] == pytest.approx(provider.script.billed_usd)
    # The key went to the provider, and nowhere else: no cassette, ledger or output holds it.
    assert set(provider.script.authorizations) == {f"Bearer {FAKE_KEY}"}
    assert leaked_secrets(bench.cassettes) == []
    for path in [*bench.cassettes.rglob("*"), *bench.out.rglob("*")]:
        assert not path.is_file() or FAKE_KEY not in path.read_text(encoding="utf-8", errors="replace")


def replayed_figures(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The analysis of a replay of what is recorded (no key: nothing can be asked), less the session's own facts."""
    with monkeypatch.context() as offline:
        offline.delenv("FAKE_OPENAI_KEY")
        bench.session("--model=fake-model", *SLICE, gate=True)
    document = bench.analysis()
    return {key: value for key, value in document.items() if key != "session"}


def test_a_replay_of_batch_answers_equals_a_replay_of_the_same_answers_asked_synchronously(
    bench: BenchProject, provider: FakeBatchApis, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert outcomes(bench.session("--model=fake-model", *SLICE, "--snap-batch", *FAST)) == {"passed": SLICE_SIZE}
    assert provider.script.chat_requests == []
    from_batch = replayed_figures(bench, monkeypatch)
    batch_cassettes = {p.relative_to(bench.cassettes): p.read_text() for p in bench.cassettes.glob("*/profile/*.json")}
    for path in bench.cassettes.glob("*/profile/*.json"):
        path.unlink()
    assert outcomes(bench.session("--model=fake-model", *SLICE)) == {"passed": SLICE_SIZE}
    assert len(provider.script.chat_requests) == SLICE_SIZE
    synchronous = replayed_figures(bench, monkeypatch)
    assert from_batch["instruments"]["profile"]["models"]["fake-model"]
    assert from_batch == synchronous
    # The same requests and answers, recorded the same way.
    for relative, text in batch_cassettes.items():
        batch = json.loads(text)["interactions"]
        sync = json.loads((bench.cassettes / relative).read_text())["interactions"]
        assert [i["request"]["uri"] for i in batch] == [i["request"]["uri"] for i in sync]
        assert [i["request"]["body"] for i in batch] == [i["request"]["body"] for i in sync]
        assert [i["response"]["status"]["code"] for i in batch] == [i["response"]["status"]["code"] for i in sync]
        answers = [json.loads(i["response"]["body"]["string"])["choices"] for i in (*batch, *sync)]
        assert answers[0] == answers[1]


def pending_run_then_collect(bench: BenchProject, provider: FakeBatchApis, first: tuple[str, ...]) -> None:
    """A first run that leaves its batch pending (exit 6, the batch named), then runs that collect it: nothing is
    submitted twice, nothing asked synchronously."""
    result = bench.session("--model=fake-model", *SLICE, *first)
    assert result.exit_status == 6, result.summary
    assert len(provider.script.submissions) == 1
    batch_id = provider.script.submissions[0]
    pending = [
        f"*fake-model: batch {batch_id} pending (0/18 done)*",
        "*fake-model: batch pending: 0/18 conditions answered (18 pending in a batch)*",
        "*exit status 6: the batch is pending: 18 condition(s) submitted and not ended yet*",
    ]
    assert shows_in_order(result.summary, pending), result.summary
    assert outcomes(result) == {"skipped": SLICE_SIZE}
    ledgers = list((bench.cassettes / "fake-model" / ".batches").glob("*.json"))
    assert [json.loads(path.read_text())["batch_id"] for path in ledgers] == [batch_id]
    assert FAKE_KEY not in ledgers[0].read_text()
    # Again with --snap-batch while it is still pending: nothing new is submitted, nothing asked.
    provider.script.never_finish = False
    provider.script.polls_to_finish = 1_000
    again = bench.session("--model=fake-model", *SLICE, "--snap-batch=submit", *FAST)
    assert again.exit_status == 6
    assert len(provider.script.submissions) == 1
    # A later run without --snap-batch collects the batch once it has ended, and replays it.
    provider.script.polls_to_finish = 0
    collected = bench.session("--model=fake-model", *SLICE)
    assert outcomes(collected) == {"passed": SLICE_SIZE}
    assert collected.exit_status == 0
    assert provider.script.submissions == [batch_id]
    assert provider.script.chat_requests == []
    assert all(o.replayed for o in read_jsonl(bench.out / "observations.jsonl"))
    assert json.loads(ledgers[0].read_text())["status"] == "collected"


def test_snap_batch_submit_exits_6_naming_what_is_pending_and_a_later_run_collects_it(
    bench: BenchProject, provider: FakeBatchApis
) -> None:
    provider.script.never_finish = True
    pending_run_then_collect(bench, provider, ("--snap-batch=submit", *FAST))


def test_a_session_whose_batch_outlasts_its_timeout_is_collected_by_the_next_without_submitting_again(
    bench: BenchProject, provider: FakeBatchApis
) -> None:
    provider.script.never_finish = True
    pending_run_then_collect(bench, provider, ("--snap-batch", "--snap-batch-poll=0.05", "--snap-batch-timeout=0.2"))


def test_errored_expired_and_canceled_items_are_asked_again_and_never_scored_from_the_error(
    bench: BenchProject, provider: FakeBatchApis
) -> None:
    provider.script.fail = {0: "errored", 5: "expired", 11: "canceled"}
    result = bench.session("--model=fake-model", *SLICE, "--snap-batch", *FAST)
    assert outcomes(result) == {"passed": SLICE_SIZE}
    assert len(provider.script.submissions) == 1
    # Those three, and only those, were asked synchronously: the same requests the batch held.
    batch = provider.script.batches[provider.script.submissions[0]]
    failed_bodies = sorted(json.dumps(batch.items[place][1], sort_keys=True) for place in provider.script.fail)
    assert sorted(json.dumps(body, sort_keys=True) for body in provider.script.chat_requests) == failed_bodies
    assert shows_in_order(result.summary, ["*3 request(s) of batch * ended errored, expired or cancelled*"])
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert all(o.score == int(varied_answer({"messages": o.messages})) for o in observations)
    assert sum(not o.replayed for o in observations) == 3
    # Every cassette holds one answer (200): no error was recorded as an answer.
    for path in (bench.cassettes / "fake-model" / "profile").glob("*.json"):
        assert [i["response"]["status"]["code"] for i in json.loads(path.read_text())["interactions"]] == [200]
    spend = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))["spend"]["fake-model"]
    assert spend["batch_requests"] == SLICE_SIZE - 3
    assert spend["batch_cost_usd"] == pytest.approx(provider.script.billed_usd)
    assert spend["requests"] == SLICE_SIZE


def test_a_model_without_a_batch_api_is_asked_synchronously_and_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeBatchApis(BatchScript(flavour=OPENAI)) as fake:
        bench = batch_project(tmp_path / "project", fake, monkeypatch)
        models = bench.root / "config" / "models.yaml"
        models.write_text(models.read_text().replace("dialect: openai", "dialect: openai-compatible"))
        result = bench.session("--model=fake-model", *SLICE, "--snap-batch", *FAST)
        assert outcomes(result) == {"passed": SLICE_SIZE}
        assert fake.script.submissions == []
        assert len(fake.script.chat_requests) == SLICE_SIZE
        said = "*fake-model: its endpoint (openai-compatible) has no batch API*synchronously*"
        assert sum(shows_in_order([line], [said]) for line in result.summary) == 1, result.summary


def test_snap_batch_with_a_budget_is_a_usage_error(bench: BenchProject) -> None:
    with pytest.raises(UsageProblem, match="--snap-batch with --snap-max-requests or --snap-max-cost"):
        bench.session("--model=fake-model", *SLICE, "--snap-batch", "--snap-max-cost=1")


def test_an_anthropic_model_is_recorded_through_message_batches_and_replays_as_if_asked_synchronously(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The native anthropic dialect's Messages bodies go whole into a Message Batch (``params``); each result's
    message is written as the answer ``POST /v1/messages`` would have given, so the replay reads it through the
    dialect like any recording. Some results fail and are asked synchronously, through the same dialect."""
    with FakeBatchApis(BatchScript(flavour=ANTHROPIC, answer=varied_answer_of_messages, fail={2: "errored"})) as fake:
        bench = batch_project(tmp_path / "project", fake, monkeypatch)
        result = bench.session("--model=fake-model", *SLICE, "--snap-batch", *FAST)
        assert outcomes(result) == {"passed": SLICE_SIZE}
        assert len(fake.script.submissions) == 1
        batch = fake.script.batches[fake.script.submissions[0]]
        # The batch held the dialect's own bodies: the system prompt at the top level, max_tokens set.
        assert all("max_tokens" in body and body["messages"][0]["role"] == "user" for _, body in batch.items)
        assert [json.dumps(body, sort_keys=True) for body in fake.script.chat_requests] == [
            json.dumps(batch.items[2][1], sort_keys=True)
        ]
        assert set(fake.script.authorizations) == {FAKE_KEY}  # x-api-key, never a bearer header
        for path in (bench.cassettes / "fake-model" / "profile").glob("*.json"):
            interactions = json.loads(path.read_text())["interactions"]
            assert [i["request"]["uri"] for i in interactions] == [f"{fake.base_url}/v1/messages"]
            assert FAKE_KEY not in path.read_text()
        observations = read_jsonl(bench.out / "observations.jsonl")
        assert all(o.score == int(varied_answer_of_messages({"messages": o.messages})) for o in observations)
        assert_billed_once_and_replayed(bench, fake, batch.id, observations, monkeypatch)


def assert_billed_once_and_replayed(
    bench: BenchProject,
    fake: FakeBatchApis,
    batch_id: str,
    observations: list[Observation],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batch's requests (all but the failed one) billed as the provider billed them, and offline the same
    answers come back from the recordings alone, with no batch submitted again."""
    spend = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))["spend"]["fake-model"]
    assert spend["batch_requests"] == SLICE_SIZE - 1
    assert spend["batch_cost_usd"] == pytest.approx(fake.script.billed_usd)
    with monkeypatch.context() as offline:
        offline.delenv("FAKE_OPENAI_KEY")
        replay = bench.session("--model=fake-model", *SLICE)
    assert outcomes(replay) == {"passed": SLICE_SIZE}
    assert [o.score for o in read_jsonl(bench.out / "observations.jsonl")] == [o.score for o in observations]
    assert fake.script.submissions == [batch_id]


def varied_answer_of_messages(body: dict[str, Any]) -> str:
    """varied_answer on the user turns alone: an Anthropic body carries its system prompt outside ``messages``."""
    return varied_answer({"messages": [m for m in body["messages"] if m["role"] != "system"]})


def test_a_gemini_model_is_recorded_through_its_batch_api_and_replays_as_if_asked_synchronously(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gemini dialect's generateContent bodies go whole into one batchGenerateContent call as inline requests;
    each inline response is written as the answer generateContent would have given, so the replay reads it through
    the dialect like any recording, priced at half the entry's price. A failed one is asked synchronously."""
    with FakeBatchApis(BatchScript(flavour=GEMINI, answer=varied_answer_of_contents, fail={2: "errored"})) as fake:
        bench = batch_project(tmp_path / "project", fake, monkeypatch)
        result = bench.session("--model=fake-model", *SLICE, "--snap-batch", *FAST)
        assert outcomes(result) == {"passed": SLICE_SIZE}
        assert len(fake.script.submissions) == 1
        batch = fake.script.batches[fake.script.submissions[0]]
        # The batch held the dialect's own bodies (contents and generationConfig), and nothing else went inline.
        assert all("contents" in body and "generationConfig" in body for _, body in batch.items)
        assert [json.dumps(body, sort_keys=True) for body in fake.script.chat_requests] == [
            json.dumps(batch.items[2][1], sort_keys=True)
        ]
        assert set(fake.script.authorizations) == {FAKE_KEY}  # x-goog-api-key, never a bearer header
        for path in (bench.cassettes / "fake-model" / "profile").glob("*.json"):
            interactions = json.loads(path.read_text())["interactions"]
            uri = f"{fake.base_url}/v1beta/models/fake/model:generateContent"
            assert [i["request"]["uri"] for i in interactions] == [uri]
            assert json.loads(path.read_text())["provider"] == "gemini"
            assert FAKE_KEY not in path.read_text()
        observations = read_jsonl(bench.out / "observations.jsonl")
        assert all(o.score == int(varied_answer_of_contents(contents_of(o.messages))) for o in observations)
        assert_billed_once_and_replayed(bench, fake, batch.id, observations, monkeypatch)


def contents_of(messages: list[dict[str, str]]) -> dict[str, Any]:
    """The turns of a generateContent body made of ``messages`` (its system prompt is outside ``contents``)."""
    return {"contents": [{"parts": [{"text": m["content"]}]} for m in messages if m["role"] != "system"]}


def varied_answer_of_contents(body: dict[str, Any]) -> str:
    """varied_answer on a generateContent body's turns."""
    turns = [{"content": part["text"]} for content in body["contents"] for part in content["parts"]]
    return str(1 + zlib.crc32(json.dumps(turns, sort_keys=True).encode()) % 5)
