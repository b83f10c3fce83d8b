"""The data behind the report, embedded in it as ``data:`` links, so the one HTML file is the whole record.

The observation CSV is the ``observations.csv`` written next to the report (the same
:func:`snap_bench.observations.export.csv_bytes`), and analysis.json has the layout of the file on disk.
A full run's CSV repeats the prompts on every row (about 1 kB per observation, 20 MB for ten models);
above ``gzip_over`` bytes it is embedded gzip-compressed, which shrinks it about twentyfold and which
``pandas.read_csv`` reads as it is.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snap_bench.observations.export import csv_bytes
from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import text

CSV_GZIP_OVER = 5_000_000


@dataclass(frozen=True)
class Download:
    filename: str
    media_type: str
    payload: bytes
    description: str

    @property
    def uri(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.payload).decode('ascii')}"

    def link(self) -> str:
        size = (
            f"{len(self.payload) / 1e6:.1f} MB" if len(self.payload) >= 100_000 else f"{len(self.payload) / 1e3:.1f} kB"
        )
        return (
            f'<a class="snap-download" download="{text(self.filename)}" href="{self.uri}">{text(self.filename)}</a>'
            f" ({size}): {text(self.description)}"
        )


def csv_download(observations: Sequence[Observation], gzip_over: int = CSV_GZIP_OVER) -> Download:
    payload = csv_bytes(list(observations))
    description = f"{len(observations):,} observations, one row per test (raw answer, scores, codes, messages)"
    if len(payload) > gzip_over:
        # mtime=0: the same observations give the same bytes
        return Download(
            "observations.csv.gz",
            "application/gzip",
            gzip.compress(payload, mtime=0),
            description + "; gzip-compressed, pandas.read_csv reads it as is",
        )
    return Download("observations.csv", "text/csv;charset=utf-8", payload, description)


def analysis_download(document: Mapping[str, Any]) -> Download:
    # the layout analysis.json has on disk; default=str so a hand-built document never breaks the report
    payload = (json.dumps(document, indent=2, default=str) + "\n").encode("utf-8")
    return Download(
        "analysis.json",
        "application/json;charset=utf-8",
        payload,
        "every metric with its interval, n and status; the verdicts; the baseline comparison",
    )
