"""Anthropic's Message Batches: ``POST {base}/v1/messages/batches {requests: [{custom_id, params}]}`` where
``params`` is the Messages body; each result's ``message`` is what ``POST /v1/messages`` would have
returned. Results come as JSONL from ``results_url``, not in request order; a request is validated only
once processed, so a bad one comes back errored."""

from __future__ import annotations

import json
from collections.abc import Sequence

import httpx

from snap_bench.asking.batch.apis import BatchItem, BatchState, ItemResult, Usage, call, json_lines

API_VERSION = "2023-06-01"


def request_of(item: BatchItem) -> bytes:
    return b'{"custom_id":' + json.dumps(item.custom_id).encode() + b',"params":' + item.body + b"}"


class AnthropicBatches:
    """The base URL is the Messages API's own (``https://api.anthropic.com``, no version: the anthropic dialect
    adds ``/v1/messages``)."""

    name = "anthropic"
    # docs.anthropic.com batch processing: 100,000 requests or 256 MB per batch.
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def item_bytes(self, item: BatchItem, model_id: str) -> int:
        return len(request_of(item)) + 1

    def submit(self, http: httpx.Client, base_url: str, model_id: str, items: Sequence[BatchItem]) -> str:
        content = b'{"requests":[' + b",".join(map(request_of, items)) + b"]}"
        url = f"{base_url.rstrip('/')}/v1/messages/batches"
        created = call(http, "POST", url, content=content, headers={"Content-Type": "application/json"}).json()
        return str(created["id"])

    def state(self, http: httpx.Client, base_url: str, batch_id: str) -> BatchState:
        document = call(http, "GET", f"{base_url.rstrip('/')}/v1/messages/batches/{batch_id}").json()
        counts = document.get("request_counts") or {}
        total = sum(int(counts.get(key) or 0) for key in ("processing", "succeeded", "errored", "canceled", "expired"))
        status = str(document.get("processing_status"))
        return BatchState(status == "ended", status, total - int(counts.get("processing") or 0), total, document)

    def results(self, http: httpx.Client, base_url: str, state: BatchState) -> list[ItemResult]:
        text = call(http, "GET", str(state.document["results_url"])).text
        return [self._result(line) for line in json_lines(text)]

    @staticmethod
    def _result(line: dict[str, object]) -> ItemResult:
        custom_id = str(line.get("custom_id"))
        result = line.get("result")
        if isinstance(result, dict) and result.get("type") == "succeeded" and isinstance(result.get("message"), dict):
            return ItemResult(custom_id, json.dumps(result["message"], ensure_ascii=False), None)
        kind = result.get("type") if isinstance(result, dict) else None
        said = json.dumps(result.get("error")) if isinstance(result, dict) and result.get("error") else ""
        return ItemResult(custom_id, None, f"{kind or 'no result'} {said}".strip()[:300])

    def usage(self, body: str) -> Usage:
        usage = json.loads(body).get("usage") or {}
        return Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))
