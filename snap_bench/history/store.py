"""Each session's headline figures per model and instrument, kept across runs to follow a model over time.

The same store as the compass placements (``reports/history.sqlite`` by default, or a PostgreSQL database:
``--snap-history``, :mod:`snap_bench.history.database`), a table of its own: one row per (session, model,
instrument, metric) with the value, interval, coverage, the verdict and composite, the code version and a
digest of the config, and what the session measured of the model's design (complete, conditions answered /
designed: :mod:`snap_bench.history.session_coverage`), so an incomplete session is kept as incomplete, and what
of the design it set out to ask (:mod:`snap_bench.history.session_subset`), so a ``--snap-items`` run is kept as
a subset. A
replay that repeats the latest stored result of a model and instrument exactly (same figures, same code, same
config) adds nothing, so re-running the shipped recordings does not flood the trend with copies. The
comparison with the latest result and the insert are one transaction under the store's write lock, so this
holds for sessions writing at once too: of two identical replays, one adds its rows.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from snap_bench.analysis.coverage import Coverage
from snap_bench.analysis.design_subset import DesignSubset, subsets_of
from snap_bench.design.config import ConfigFiles
from snap_bench.history.database import Store, StoreError, StoreLike, insert, opened
from snap_bench.history.schema import COVERAGE_COLUMNS
from snap_bench.history.session_coverage import StoredCoverage
from snap_bench.history.session_subset import StoredSubset
from snap_bench.judging.checks import CheckRecord


@dataclass(frozen=True)
class Headline:
    """One figure of one model and instrument in one session."""

    recorded_at: str
    model: str
    instrument: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_designed: int
    verdict: str
    composite: float | None
    code_version: str
    config_digest: str
    result_digest: str
    session: str = ""  # the id shared by one session's rows ('' before the store kept one)
    # The session's coverage of the model's design (None: not known, stored before the store kept it).
    complete: bool | None = None
    conditions_answered: int | None = None
    conditions_designed: int | None = None
    # What of the model's design the session set out to ask, as stored (StoredSubset.column: None not known).
    subset: str | None = None

    @property
    def coverage(self) -> StoredCoverage:
        return StoredCoverage(self.complete, self.conditions_answered, self.conditions_designed)

    @property
    def design(self) -> StoredSubset:
        return StoredSubset.stored(self.subset)

    def values(self) -> tuple[Any, ...]:
        """The row as stored (the flag an integer)."""
        return (*astuple(self)[:_COVERAGE_AT], *self.coverage.columns(), self.subset)

    @classmethod
    def stored(cls, row: tuple[Any, ...]) -> Headline:
        """A row as a backend returns it, in :data:`COLUMNS` order."""
        covered = StoredCoverage.stored(*row[_COVERAGE_AT:-1])
        return cls(*row[:_COVERAGE_AT], *astuple(covered), *row[-1:])


# Where the coverage columns begin in a row (the subset column follows them).
_COVERAGE_AT = -len(COVERAGE_COLUMNS) - 1


COLUMNS = tuple(field.name for field in fields(Headline))


def config_digest(config: ConfigFiles) -> str:
    """sha256 (12 hex digits) over every YAML file the session reads (the project's over the packaged ones),
    by relative path and content."""
    return config.digest("*.y*ml")


def code_version(rootdir: Path) -> str:
    """The package version, with the checkout's commit when it is a git checkout (``0.1.0+a1b2c3d``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("snap-bench")
    except PackageNotFoundError:
        __version__ = "unknown"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=rootdir, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return str(__version__)
    return f"{__version__}+{commit}" if commit else str(__version__)


def provenance(config: ConfigFiles, rootdir: Path) -> dict[str, str]:
    """What a stored result was produced with: the code version and the config's digest (in session.json too)."""
    return {"code_version": code_version(rootdir), "config_digest": config_digest(config)}


def headlines_of(
    checks: Sequence[CheckRecord],
    verdicts: Mapping[tuple[str, str], tuple[str, float | None]],
    recorded_at: str,
    code: str,
    config: str,
    session: str = "",
    coverage: Mapping[str, Coverage] | None = None,
    subsets: Mapping[tuple[str, str], DesignSubset] | None = None,
) -> list[Headline]:
    """The rows of one session: each model and instrument's judged figures, sharing a digest of them all, with
    the session's coverage of the model (``coverage``, by model; unknown for a model it lacks) and what of its
    design the session left out (``subsets``, by model and instrument: the whole design for a pair it lacks;
    None: not known)."""
    rows: list[Headline] = []
    for (model, instrument), (verdict, composite) in sorted(verdicts.items()):
        own = sorted(
            (c for c in checks if c.kind == "threshold" and (c.model, c.instrument) == (model, instrument)),
            key=lambda c: c.metric,
        )
        covered = StoredCoverage.of((coverage or {}).get(model), verdict)
        design = StoredSubset() if subsets is None else StoredSubset.of(subsets.get((model, instrument)))
        kept = (*astuple(covered), design.column())  # the coverage and subset columns of every row
        figures = [(c.metric, c.value, c.ci_low, c.ci_high, c.n, c.n_designed) for c in own]
        summary: list[Any] = [verdict, composite, code, config, figures]
        if covered.incomplete:  # (only then: a complete session's digest is what it was before version 3)
            summary.append(covered.columns())
        if design.is_subset:  # (only then, as above: the whole design's digest is what it was before version 4)
            summary.append(design.column())
        result = json.dumps(summary, default=str)
        digest = hashlib.sha256(result.encode()).hexdigest()[:16]
        rows += [
            Headline(
                recorded_at,
                model,
                instrument,
                metric,
                value,
                low,
                high,
                n,
                designed,
                verdict,
                composite,
                code,
                config,
                digest,
                session,
                *kept,
            )
            for metric, value, low, high, n, designed in figures
        ]
        if not own:  # a model without checks still has its verdict and composite in the trend
            rows.append(
                Headline(
                    recorded_at,
                    model,
                    instrument,
                    "composite",
                    composite,
                    None,
                    None,
                    0,
                    0,
                    verdict,
                    composite,
                    code,
                    config,
                    digest,
                    session,
                    *kept,
                )
            )
    return rows


def append_new(store: StoreLike, rows: Iterable[Headline]) -> int:
    """Store the rows whose model and instrument's latest stored result differs; how many were written.

    One transaction under the store's write lock: a session writing at the same time waits, then compares
    with what this one stored."""
    by_key: dict[tuple[str, str], list[Headline]] = {}
    for row in rows:
        by_key.setdefault((row.model, row.instrument), []).append(row)
    written = 0
    with opened(store) as open_store, open_store.writing() as database:
        for (model, instrument), own in by_key.items():
            latest = database.execute(
                "SELECT result_digest FROM headlines WHERE model = ? AND instrument = ? "
                "ORDER BY recorded_at DESC, id DESC LIMIT 1",
                (model, instrument),
            )
            if latest and latest[0][0] == own[0].result_digest:
                continue  # the same result again (a replay): nothing new to follow
            database.executemany(insert("headlines", COLUMNS), [row.values() for row in own])
            written += len(own)
    return written


def read_headlines(store: StoreLike, models: Sequence[str] = (), instruments: Sequence[str] = ()) -> list[Headline]:
    """Every stored row (optionally of some models and instruments), oldest first; [] without a store."""
    with opened(store) as open_store:
        rows = [
            Headline.stored(row)
            for row in open_store.read(f"SELECT {', '.join(COLUMNS)} FROM headlines ORDER BY recorded_at, id")
        ]
    return [r for r in rows if (not models or r.model in models) and (not instruments or r.instrument in instruments)]


def keep_headlines(
    store: Store,
    gate_result: Any,
    session_meta: Mapping[str, Any],
    recorded_at: str,
    coverage: Mapping[str, Coverage] | None = None,
) -> str | None:
    """Append a session's headlines (called at the end of the gate) with each model's coverage of its design and
    what of it the session left out (session.json's ``subsets``: not known without it); an error message instead
    of raising."""
    verdicts = {key: (v.verdict, v.composite) for key, v in gate_result.verdicts.items()}
    rows = headlines_of(
        gate_result.checks,
        verdicts,
        recorded_at,
        str(session_meta.get("code_version", "unknown")),
        str(session_meta.get("config_digest", "unknown")),
        store.session,
        coverage,
        subsets_of(session_meta),
    )
    try:
        append_new(store, rows)
    except StoreError as error:
        return f"results store not updated: {error}"
    return None
