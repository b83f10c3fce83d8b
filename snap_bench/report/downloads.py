"""The data behind the report, embedded in it as ``data:`` links, so the one HTML file is the whole record.

The observation CSV is the ``observations.csv`` written next to the report (the same
:func:`snap_bench.observations.export.csv_bytes`), and analysis.json has the layout of the file on disk.
A full run's CSV repeats the prompts on every row (about 0.7 kB per observation, 38 MB for ten models over
every shipped instrument); above ``compress_over`` bytes (1 MB: a small run's CSV stays one a reader opens as
it is) it is embedded xz-compressed, which shrinks it about fortyfold and which ``pandas.read_csv`` reads as
it is. analysis.json grows with the models too (1.3 MB at ten models over every
shipped instrument, 0.1 MB compressed): above ``ANALYSIS_GZIP_OVER`` it is embedded compressed as well.
"""

from __future__ import annotations

import base64
import gzip
import json
import lzma
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snap_bench.observations.export import csv_bytes
from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import text

CSV_COMPRESS_OVER = 1_000_000
ANALYSIS_GZIP_OVER = 500_000


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


def csv_download(observations: Sequence[Observation], compress_over: int = CSV_COMPRESS_OVER) -> Download:
    payload = csv_bytes(list(observations))
    description = f"{len(observations):,} observations, one row per test (raw answer, scores, codes, messages)"
    if len(payload) > compress_over:
        # xz, not gzip: its larger window finds the prompts repeated rows apart (38 MB of CSV at ten models:
        # 1.0 MB, against 1.3 MB gzip-compressed, in 2 s); the same observations give the same bytes
        return Download(
            "observations.csv.xz",
            "application/x-xz",
            lzma.compress(payload, preset=1),
            description + "; xz-compressed, pandas.read_csv reads it as is (or unpack it with xz -d or 7-Zip)",
        )
    return Download("observations.csv", "text/csv;charset=utf-8", payload, description)


def analysis_download(document: Mapping[str, Any], gzip_over: int = ANALYSIS_GZIP_OVER) -> Download:
    # the layout analysis.json has on disk; default=str so a hand-built document never breaks the report
    payload = (json.dumps(document, indent=2, default=str) + "\n").encode("utf-8")
    description = "every metric with its interval, n and status; the verdicts; the baseline comparison"
    if len(payload) > gzip_over:
        return Download(
            "analysis.json.gz",
            "application/gzip",
            gzip.compress(payload, mtime=0),
            description + "; gzip-compressed",
        )
    return Download("analysis.json", "application/json;charset=utf-8", payload, description)
