"""Recording and replay of HTTP exchanges with vcrpy: one JSON cassette per test.

Cassettes live at ``cassettes/<model>/<instrument>/<condition-id>.json``. Requests match on method,
URI and the body's exact bytes (so a changed prompt never replays an old answer); what matches is handed
back as recorded, and the asker reads the answer out of it as it reads a live one. The Authorization
header, other key headers and the key itself are never written. Files are written atomically, so a session killed
mid-write leaves either the old cassette or the new one, never half of one.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from snap_bench.providers import key_shapes, secret_headers
from snap_bench.wire.atomic import TEMPORARY_SUFFIX, process_alive, write_atomically
from snap_bench.wire.scrub import Scrubber

# Headers of any session (a proxy's credential); each registered provider adds those that carry its key.
SESSION_SECRET_HEADERS = ("cookie", "set-cookie", "proxy-authorization")


@functools.cache
def secret_header_names() -> tuple[str, ...]:
    """The headers never written to a cassette: every registered provider's key headers (its module's
    secret_headers), and any session's."""
    return (*secret_headers(), *SESSION_SECRET_HEADERS)


SECRET_QUERY_PARAMETERS = ("key", "api_key", "api-key", "access_token")
# A cassette's top-level key naming the provider (snap_bench.providers) it was recorded through; a cassette
# recorded before it has none, and its provider is recognised from its URI.
PROVIDER_KEY = "provider"


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
    instruments' folders, such as the endpoint's catalogue entry, is not a recording, nor is a hidden folder's,
    such as the model's batch ledgers in ``.batches/``)."""
    if not root.is_dir():
        return []
    return sorted(
        folder.name
        for folder in root.iterdir()
        if folder.is_dir()
        and not folder.name.startswith(".")
        and any(not path.parent.name.startswith(".") for path in folder.glob("*/*.json"))
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


@dataclass(frozen=True)
class RecordedResponse:
    """One recorded attempt's response, as the cassette holds it (the asker parses it)."""

    status: int
    body: str
    # vcrpy keeps each header as a list, under the case the server sent.
    headers: dict[str, Any]

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        for key, values in self.headers.items():
            if key.lower() == name.lower() and values:
                return str(values[0] if isinstance(values, list) else values)
        return None


def _matching(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], method: str, uri: str, body: bytes
) -> tuple[RecordedResponse, ...]:
    # The body is compared as bytes: the recording holds exactly what was sent (both recorders store the
    # sent bytes decoded), and the request is built by one function (snap_bench.wire.request).
    return tuple(
        RecordedResponse(response["status"]["code"], response["body"]["string"], response.get("headers") or {})
        for request, response in pairs
        if request["method"].upper() == method.upper()
        and request["uri"] == uri
        and (request.get("body") or "").encode("utf-8") == body
    )


def examine(path: Path, method: str, uri: str, body: bytes) -> tuple[CassetteState, str, tuple[RecordedResponse, ...]]:
    """Whether the cassette at ``path`` holds this exact request, a reason when it does not, and the
    responses recorded for it when it does (every attempt, in order; the file read once)."""
    if not path.is_file():
        return CassetteState.MISSING, "no cassette", ()
    try:
        pairs = _interactions(path)
    except DamagedCassette as error:
        return CassetteState.MALFORMED, str(error), ()
    matching = _matching(pairs, method, uri, body)
    if matching:
        return CassetteState.MATCHES, "", matching
    first = pairs[0][0]
    if first["uri"] != uri:
        return CassetteState.STALE, f"recorded for {first['uri']}, now asking {uri}", ()
    return CassetteState.STALE, "the recorded request body differs (prompt or parameters changed)", ()


def restore(path: Path, previous: bytes | None) -> None:
    """Put back the file as it was before a failed re-ask: byte for byte, or no file at all."""
    if previous is None:
        path.unlink(missing_ok=True)
        return
    write_atomically(path, previous)


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


def atomic_persister(provider_of: Callable[[Path], str | None] | None = None) -> type:
    """A vcrpy persister that writes through a temporary file and os.replace, naming the provider each cassette
    was recorded through (``provider_of``: a cassette's path -> its provider's name) beside its interactions."""
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serialize import serialize

    class AtomicFilesystemPersister(FilesystemPersister):  # type: ignore[misc]
        @staticmethod
        def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
            text = serialize(cassette_dict, serializer)
            provider = provider_of(Path(cassette_path)) if provider_of is not None else None
            if provider is not None:
                text = named_provider(text, provider)
            write_atomically(Path(cassette_path), text.encode("utf-8"))

    return AtomicFilesystemPersister


def named_provider(text: str, provider: str) -> str:
    """vcrpy's JSON document with the provider it was recorded through named (as vcrpy's serializer writes it)."""
    document = json.loads(text)
    named = {"version": document["version"], PROVIDER_KEY: provider, "interactions": document["interactions"]}
    return json.dumps(named, indent=4) + "\n"


def recorded_provider(document: Any) -> str | None:
    """The provider a cassette's document names, or None (recorded before cassettes named it)."""
    provider = document.get(PROVIDER_KEY) if isinstance(document, dict) else None
    return provider if isinstance(provider, str) else None


def make_vcr(
    record_mode: RecordMode,
    secrets: Iterable[str],
    canonical_urls: dict[str, str],
    provider_of: Callable[[Path], str | None] | None = None,
) -> Any:
    """A configured ``vcr.VCR``.

    ``secrets`` are literal strings (API keys) scrubbed from anything recorded, with anything shaped
    like a key (:class:`snap_bench.wire.scrub.Scrubber`). ``canonical_urls``
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
            if name.lower() in secret_header_names():
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
        filter_headers=list(secret_header_names()),
        filter_query_parameters=list(SECRET_QUERY_PARAMETERS),
        before_record_request=before_record_request,
        before_record_response=before_record_response,
        decode_compressed_response=True,
    )
    recorder.register_persister(atomic_persister(provider_of))
    # allow_playback_repeats stays at its default (False): runs of one condition must stay distinct.
    return recorder


# What a leaked credential looks like in a cassette: the providers' key formats, a bearer token, and any recorded
# header that carries a key (vcrpy writes headers as JSON object keys).
@functools.cache
def leak_patterns() -> tuple[re.Pattern[str], ...]:
    headers = (*secret_headers(), "proxy-authorization")
    return (
        *(re.compile(shape) for shape in key_shapes()),
        re.compile(r"\bBearer\s+[A-Za-z0-9._-]{8,}"),
        re.compile('"(?:' + "|".join(re.escape(name) for name in headers) + ')"\\s*:', re.IGNORECASE),
    )


def leaked_secrets(root: Path) -> list[str]:
    """``path: pattern`` for every cassette under ``root`` that holds something like a key."""
    leaks: list[str] = []
    for path in sorted(root.rglob("*.json")):
        text = path.read_text(encoding="utf-8", errors="replace")
        leaks.extend(f"{path}: {pattern.pattern}" for pattern in leak_patterns() if pattern.search(text))
    return leaks


def sampled_responses(folder: Path, limit: int = 200) -> list[tuple[RecordedResponse, ...]]:
    """The recorded responses of up to ``limit`` cassettes in ``folder``, spread evenly over its files (so a
    dry run stays quick beside thousands of them); a damaged cassette is left out."""
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    sampled = []
    for path in files[:: max(1, len(files) // limit)][:limit]:
        try:
            pairs = _interactions(path)
        except DamagedCassette:
            continue
        sampled.append(
            tuple(
                RecordedResponse(response["status"]["code"], response["body"]["string"], response.get("headers") or {})
                for _request, response in pairs
            )
        )
    return sampled
