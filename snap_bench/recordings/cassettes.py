"""Recording and replay of HTTP exchanges with vcrpy: one JSON cassette per test.

Cassettes live at ``cassettes/<model>/<instrument>/<condition-id>.json``. Requests match on method,
URI and body (so a changed prompt never replays an old answer); the Authorization header, other key
headers and the key itself are never written. Files are written atomically, so a session killed
mid-write leaves either the old cassette or the new one, never half of one.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

from snap_bench.asking.client import CACHE_STATUS_HEADER, ChatReply, reply_from_recording
from snap_bench.asking.scrub import Scrubber
from snap_bench.recordings.atomic import TEMPORARY_SUFFIX, process_alive, write_atomically

SECRET_HEADERS = (
    "authorization",
    "x-api-key",
    "api-key",
    "openai-organization",
    "cookie",
    "set-cookie",
    "proxy-authorization",
)
SECRET_QUERY_PARAMETERS = ("key", "api_key", "api-key", "access_token")


class RecordMode(StrEnum):
    """vcrpy's record modes, as offered by ``--snap-record-mode``."""

    NONE = "none"  # replay only; a missing or stale recording fails its test
    ONCE = "once"  # replay what is recorded, record what is missing (resume)
    NEW_EPISODES = "new_episodes"  # like once, and a changed request is recorded beside the old one
    ALL = "all"  # ask again and overwrite every recording


class CassetteState(StrEnum):
    MISSING = "missing"
    MATCHES = "matches"
    STALE = "stale"  # recorded, but for another request (the prompt or parameters changed)
    MALFORMED = "malformed"  # not a cassette we can read


def cassette_path(root: Path, model: str, instrument: str, condition_id: str) -> Path:
    return root / model / instrument / f"{condition_id}.json"


def recorded_models(root: Path) -> list[str]:
    """Models with at least one cassette under ``root`` (``MODEL/INSTRUMENT/CONDITION.json``; a file beside the
    instruments' folders, such as the endpoint's catalogue entry, is not a recording)."""
    if not root.is_dir():
        return []
    return sorted(
        folder.name for folder in root.iterdir() if folder.is_dir() and next(folder.glob("*/*.json"), None) is not None
    )


class DamagedCassette(ValueError):
    """A cassette file that is not a recording we can read (even when it is valid JSON)."""


def _interactions(path: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) pairs of the cassette, checked for every field replay reads."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise DamagedCassette(f"unreadable cassette ({type(error).__name__}: {error})") from None
    interactions = document.get("interactions") if isinstance(document, dict) else None
    if not isinstance(interactions, list):
        raise DamagedCassette("damaged cassette: no list of interactions")
    if not interactions:
        raise DamagedCassette("damaged cassette: it holds no interactions")
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for number, interaction in enumerate(interactions, start=1):
        problem = _interaction_problem(interaction)
        if problem:
            raise DamagedCassette(f"damaged cassette: interaction {number} {problem}")
        pairs.append((interaction["request"], interaction["response"]))
    return pairs


def _interaction_problem(interaction: Any) -> str:
    """What is wrong with one recorded interaction, or "" when replay can read it."""
    if not isinstance(interaction, dict):
        return "is not an object"
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, dict):
        return "has no request object"
    if not isinstance(request.get("method"), str) or not isinstance(request.get("uri"), str):
        return "has a request without method or uri"
    if not isinstance(request.get("body"), str | None):
        return "has a request body that is not text"
    if not isinstance(response, dict):
        return "has no response"
    status = response.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("code"), int):
        return "has a response without a status code"
    body = response.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("string"), str):
        return "has a response without a body"
    return ""


def _matching(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], method: str, uri: str, body: bytes
) -> list[dict[str, Any]]:
    wanted = _json_or_text(body.decode("utf-8"))
    return [
        response
        for request, response in pairs
        if request["method"].upper() == method.upper()
        and request["uri"] == uri
        and _json_or_text(request.get("body") or "") == wanted
    ]


def examine(path: Path, method: str, uri: str, body: bytes) -> tuple[CassetteState, str, ChatReply | None]:
    """Whether the cassette at ``path`` holds this exact request, a reason when it does not, and the
    recorded answer when it does (the file read once).

    A recording of this request that holds no usable answer (only failures) counts as damaged: it
    cannot be replayed, and recording it again is the fix.
    """
    if not path.is_file():
        return CassetteState.MISSING, "no cassette", None
    try:
        pairs = _interactions(path)
    except DamagedCassette as error:
        return CassetteState.MALFORMED, str(error), None
    matching = _matching(pairs, method, uri, body)
    if matching:
        reply = recorded_reply(matching)
        if reply.error is None:
            return CassetteState.MATCHES, "", reply
        codes = ", ".join(str(response["status"]["code"]) for response in matching)
        return CassetteState.MALFORMED, f"damaged cassette: no usable answer recorded (HTTP {codes})", None
    first = pairs[0][0]
    if first["uri"] != uri:
        return CassetteState.STALE, f"recorded for {first['uri']}, now asking {uri}", None
    return CassetteState.STALE, "the recorded request body differs (prompt or parameters changed)", None


def recorded_reply(responses: list[dict[str, Any]]) -> ChatReply:
    """The last usable 200 among a request's recorded responses, else the last recorded failure."""
    last = ChatReply(None, "no recorded response", None, 0.0, 0)
    for attempt, response in enumerate(responses, start=1):
        code, text = response["status"]["code"], response["body"]["string"]
        reply = (
            reply_from_recording(text, attempt, _header(response, CACHE_STATUS_HEADER))
            if code == 200
            else ChatReply(None, f"recorded HTTP {code}", code, 0.0, attempt)
        )
        if reply.error is None or last.error is not None:
            last = reply
    return dataclasses.replace(last, latency_s=0.0)


def _header(response: dict[str, Any], name: str) -> str | None:
    """A recorded response header (vcrpy keeps them as lists, under the case the server sent)."""
    for key, values in (response.get("headers") or {}).items():
        if key.lower() == name and values:
            return str(values[0] if isinstance(values, list) else values)
    return None


def restore(path: Path, previous: bytes | None) -> None:
    """Put back the file as it was before a failed re-ask: byte for byte, or no file at all."""
    if previous is None:
        path.unlink(missing_ok=True)
        return
    write_atomically(path, previous)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def remove_stale_temporaries(root: Path) -> list[Path]:
    """Delete the temporary files that writers killed mid-write (kill -9) left under ``root``.

    They never count as recordings (a cassette is ``*.json``); they are removed so that they do not pile
    up. A file whose writer (the pid in its name) is still alive belongs to a session running now and is
    kept; one without a pid predates the naming and has no live writer to ask.
    """
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for path in root.rglob(f".*{TEMPORARY_SUFFIX}"):
        if _writer_alive(path.name):
            continue
        try:
            path.unlink()
        except OSError:
            continue  # gone already, or not ours to delete: it still never counts as a recording
        removed.append(path)
    return removed


def _writer_alive(name: str) -> bool:
    # ".<cassette>.json.<pid>.<random>.tmp"
    _, _, after = name.partition(".json.")
    pid_text = after.split(".", 1)[0]
    return pid_text.isdigit() and process_alive(int(pid_text))


def atomic_persister() -> type:
    """A vcrpy persister that writes through a temporary file and os.replace."""
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serialize import serialize

    class AtomicFilesystemPersister(FilesystemPersister):  # type: ignore[misc]
        @staticmethod
        def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
            write_atomically(Path(cassette_path), serialize(cassette_dict, serializer).encode("utf-8"))

    return AtomicFilesystemPersister


def make_vcr(record_mode: RecordMode, secrets: Iterable[str], canonical_urls: dict[str, str]) -> Any:
    """A configured ``vcr.VCR``.

    ``secrets`` are literal strings (API keys) scrubbed from anything recorded, with anything shaped
    like a key (:class:`snap_bench.asking.scrub.Scrubber`). ``canonical_urls``
    maps a run-time base URL (a local server on a random port) to the stable URL stored in the
    cassette; vcrpy applies the same rewrite before matching, so replay works on any port.
    """
    import vcr

    scrub = Scrubber(secrets)

    def before_record_request(request: Any) -> Any:
        for actual, canonical in canonical_urls.items():
            if request.uri.startswith(actual):
                request.uri = canonical + request.uri[len(actual) :]
        if request.body:
            body = request.body.decode("utf-8", "replace") if isinstance(request.body, bytes) else request.body
            request.body = scrub(body).encode("utf-8")
        return request

    def before_record_response(response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            if name.lower() in SECRET_HEADERS:
                del headers[name]
        body = response.get("body", {})
        if isinstance(body.get("string"), str):
            body["string"] = scrub(body["string"])
        elif isinstance(body.get("string"), bytes):
            body["string"] = scrub(body["string"].decode("utf-8", "replace")).encode("utf-8")
        return response

    recorder = vcr.VCR(
        serializer="json",
        record_mode=record_mode.value,
        match_on=("method", "uri", "body"),
        filter_headers=list(SECRET_HEADERS),
        filter_query_parameters=list(SECRET_QUERY_PARAMETERS),
        before_record_request=before_record_request,
        before_record_response=before_record_response,
        decode_compressed_response=True,
    )
    recorder.register_persister(atomic_persister())
    # allow_playback_repeats stays at its default (False): runs of one condition must stay distinct.
    return recorder


# What a leaked credential looks like in a cassette: provider key formats, and any recorded
# Authorization / api-key header (vcrpy writes headers as JSON object keys).
LEAK_PATTERNS = (
    re.compile(r"sk-or-v1-[A-Za-z0-9]{16,}"),
    re.compile(r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bBearer\s+[A-Za-z0-9._-]{8,}"),
    re.compile(r'"(?:authorization|x-api-key|api-key|proxy-authorization)"\s*:', re.IGNORECASE),
)


def leaked_secrets(root: Path) -> list[str]:
    """``path: pattern`` for every cassette under ``root`` that holds something like a key."""
    leaks: list[str] = []
    for path in sorted(root.rglob("*.json")):
        text = path.read_text(encoding="utf-8", errors="replace")
        leaks.extend(f"{path}: {pattern.pattern}" for pattern in LEAK_PATTERNS if pattern.search(text))
    return leaks


def recorded_output_tokens(folder: Path, limit: int = 200) -> tuple[float, int] | None:
    """The mean completion tokens of an answer (reasoning included) over up to ``limit`` usable recordings in
    ``folder`` (spread evenly over its files, so a dry run stays quick beside thousands of them), and how many
    were read; None without any that reports its usage."""
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    counts: list[int] = []
    for path in files[:: max(1, len(files) // limit)][:limit]:
        try:
            reply = recorded_reply([response for _request, response in _interactions(path)])
        except DamagedCassette:
            continue
        if reply.error is None and reply.completion_tokens is not None:
            counts.append(reply.completion_tokens)
    return (sum(counts) / len(counts), len(counts)) if counts else None
