"""Recording and replay of HTTP exchanges with vcrpy: one JSON cassette per test.

Cassettes live at ``cassettes/<model>/<instrument>/<condition-id>.json``. Requests match on method,
URI and body (so a changed prompt never replays an old answer); the Authorization header, other key
headers and the key itself are never written. Files are written atomically, so a session killed
mid-write leaves either the old cassette or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

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
REDACTED = "<redacted>"


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
    """Models with at least one cassette under ``root``."""
    if not root.is_dir():
        return []
    return sorted(
        folder.name for folder in root.iterdir() if folder.is_dir() and next(folder.rglob("*.json"), None) is not None
    )


def cassette_state(path: Path, method: str, uri: str, body: bytes) -> tuple[CassetteState, str]:
    """Whether the cassette at ``path`` holds this exact request, and a reason when it does not."""
    if not path.is_file():
        return CassetteState.MISSING, "no cassette"
    try:
        interactions = json.loads(path.read_text(encoding="utf-8"))["interactions"]
        recorded = [interaction["request"] for interaction in interactions]
    except (ValueError, KeyError, TypeError) as error:
        return CassetteState.MALFORMED, f"unreadable cassette ({type(error).__name__}: {error})"
    if not recorded:
        return CassetteState.MISSING, "empty cassette"
    wanted = _json_or_text(body.decode("utf-8"))
    for request in recorded:
        if (
            request.get("method", "").upper() == method.upper()
            and request.get("uri") == uri
            and _json_or_text(request.get("body") or "") == wanted
        ):
            return CassetteState.MATCHES, ""
    first = recorded[0]
    if first.get("uri") != uri:
        return CassetteState.STALE, f"recorded for {first.get('uri')}, now asking {uri}"
    return CassetteState.STALE, "the recorded request body differs (prompt or parameters changed)"


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


TEMPORARY_SUFFIX = ".tmp"


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
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def atomic_persister() -> type:
    """A vcrpy persister that writes through a temporary file and os.replace."""
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serialize import serialize

    class AtomicFilesystemPersister(FilesystemPersister):  # type: ignore[misc]
        @staticmethod
        def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
            data = serialize(cassette_dict, serializer)
            target = Path(cassette_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            # The writer's pid in the name lets a later session tell a kill -9's leftover from a live write.
            handle, temporary = tempfile.mkstemp(
                dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=TEMPORARY_SUFFIX
            )
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as file:
                    file.write(data)
                os.replace(temporary, target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise

    return AtomicFilesystemPersister


def make_vcr(record_mode: RecordMode, secrets: Iterable[str], canonical_urls: dict[str, str]) -> Any:
    """A configured ``vcr.VCR``.

    ``secrets`` are literal strings (API keys) scrubbed from anything recorded. ``canonical_urls``
    maps a run-time base URL (a local server on a random port) to the stable URL stored in the
    cassette; vcrpy applies the same rewrite before matching, so replay works on any port.
    """
    import vcr

    secret_values = [secret for secret in secrets if secret]

    def scrub(text: str) -> str:
        for secret in secret_values:
            text = text.replace(secret, REDACTED)
        return text

    def before_record_request(request: Any) -> Any:
        for actual, canonical in canonical_urls.items():
            if request.uri.startswith(actual):
                request.uri = canonical + request.uri[len(actual) :]
        if secret_values and request.body:
            body = request.body.decode("utf-8", "replace") if isinstance(request.body, bytes) else request.body
            request.body = scrub(body).encode("utf-8")
        return request

    def before_record_response(response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            if name.lower() in SECRET_HEADERS:
                del headers[name]
        body = response.get("body", {})
        if secret_values and isinstance(body.get("string"), str):
            body["string"] = scrub(body["string"])
        elif secret_values and isinstance(body.get("string"), bytes):
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
