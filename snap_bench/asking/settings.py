"""How a session asks: where it keeps recordings and its shared state, and the limits of asking.

The part of the session's settings the asking side reads (the plugin parses the command line and the ini
file into them: snap_bench.session.settings), so that the asker, the endpoints and the batch step are
built from one plain value and know nothing of pytest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from snap_bench.recordings.cassettes import RecordMode


@dataclass(frozen=True)
class AskingSettings:
    rootdir: Path  # where a .env file is read
    out_dir: Path  # the shared state (budget, pace, claims, stops) lives under it, and local servers' logs
    cassette_dir: Path
    record_mode: RecordMode | None  # None: record what is missing where a model can be asked, else replay
    max_attempts: int
    timeout_s: float
    rate_limit_per_minute: float | None
    concurrency: int | None
    adaptive_pace: bool  # --snap-pace=adaptive; fixed keeps the concurrency (and only --snap-rate-limit's pace)
    max_requests: int | None
    max_cost_usd: float | None
    # --snap-batch: "wait" or "submit", None when off; the seconds between looks at pending batches, and the
    # most it waits for them.
    batch: str | None
    batch_poll_s: float
    batch_timeout_s: float
