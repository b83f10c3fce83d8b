"""A cassette written from the responses of one ask, without vcrpy (for asking ahead, many at once).

vcrpy records by patching httpx for the duration of one ``use_cassette`` block, which cannot hold
several requests in flight on one event loop. Asking ahead instead collects each attempt's response
(``ChatClient.complete(on_response=...)``) and writes the same document vcrpy writes (version 1, the
request and response of every attempt, headers as lists), through the same scrubbing: no key header, no
key in a body, the canonical URI of a local server. Replay cannot tell the two apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from snap_bench.recordings.cassettes import PROVIDER_KEY, secret_header_names
from snap_bench.wire.atomic import write_atomically
from snap_bench.wire.scrub import Scrubber

# The body is stored decoded (as vcrpy's decode_compressed_response does), so its encoding header goes too.
_DECODED = "content-encoding"


def _headers(headers: httpx.Headers) -> dict[str, list[str]]:
    kept: dict[str, list[str]] = {}
    for name, value in headers.multi_items():
        if name.lower() not in secret_header_names() and name.lower() != _DECODED:
            kept.setdefault(name.lower(), []).append(value)
    return kept


def interaction(response: httpx.Response, uri: str, scrub: Scrubber) -> dict[str, Any]:
    """One attempt as vcrpy stores it, scrubbed, with the request's canonical ``uri``."""
    request = response.request
    return {
        "request": {
            "method": request.method,
            "uri": uri,
            "body": scrub(request.content.decode("utf-8", "replace")),
            "headers": _headers(request.headers),
        },
        "response": {
            "status": {"code": response.status_code, "message": response.reason_phrase},
            "headers": _headers(response.headers),
            "body": {"string": scrub(response.text)},
        },
    }


def write_cassette(path: Path, interactions: list[dict[str, Any]], provider: str | None = None) -> None:
    """Write the cassette atomically (a kill leaves the old state or the new file, never half of one), naming the
    provider it was recorded through."""
    document: dict[str, Any] = {"version": 1, "interactions": interactions}
    if provider is not None:
        document = {"version": 1, PROVIDER_KEY: provider, "interactions": interactions}
    write_atomically(path, (json.dumps(document, indent=4, ensure_ascii=False) + "\n").encode("utf-8"))


def answered_interaction(uri: str, body: str, response_body: str, scrub: Scrubber) -> dict[str, Any]:
    """A request answered with 200 and ``response_body`` (a batch's result), written by :func:`interaction` as a
    synchronous ask records it: the request's canonical uri and exact body, a JSON response, scrubbed."""
    json_type = {"content-type": "application/json"}
    request = httpx.Request("POST", uri, content=body.encode("utf-8"), headers=json_type)
    response = httpx.Response(200, request=request, content=response_body.encode("utf-8"), headers=json_type)
    return interaction(response, uri, scrub)
