"""The asker of a session's process, built with the limits of asking its processes share: requests in flight per
model (``--snap-concurrency`` / ``concurrency:``, the ceiling), each model's pace (adapted to the provider's
rate-limit headers and refusals, and never past ``--snap-rate-limit``) and the budget."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from snap_bench.asking.ask_ahead import AskAhead
from snap_bench.asking.asker import Asker, Endpoint, chat_client
from snap_bench.asking.batch.ledger import pending_cassettes
from snap_bench.asking.claims import ClaimBoard, clear_claims
from snap_bench.asking.client import RetryPolicy
from snap_bench.asking.credentials import configured_scrubber
from snap_bench.asking.interruption import InterruptFlag
from snap_bench.asking.pacing import Pacer, PaceSettings, clear_paces, pace_file
from snap_bench.asking.settings import AskingSettings
from snap_bench.asking.state_folder import BUDGET_FILE, state_folder
from snap_bench.asking.stops import StopBoard, clear_stops
from snap_bench.asking.throttle import Budget, BudgetLimits, SharedState
from snap_bench.design.models import ModelSpec
from snap_bench.recordings.cassettes import remove_stale_temporaries
from snap_bench.wire.scrub import Scrubber


def build_asker(
    options: AskingSettings,
    workers: int,
    models: list[ModelSpec],
    endpoints: dict[str, Endpoint],
    stops: StopBoard,
) -> Asker:
    """The process's asker: its endpoints, with the session's shared limits, scrubber, stops and asking ahead."""
    # Under the fixed pace a 429 counts against --snap-max-attempts as any failure (as before the adaptive pace).
    rate_limited = RetryPolicy.max_rate_limited if options.adaptive_pace else 0
    policy = RetryPolicy(max_attempts=options.max_attempts, timeout_s=options.timeout_s, max_rate_limited=rate_limited)
    paces, budget = pacers(options, models), session_budget(options)
    return Asker(
        options.cassette_dir,
        options.record_mode,
        policy,
        endpoints,
        paces,
        budget,
        configured_scrubber([model.api_key_env for model in models], options.rootdir / ".env"),
        stops,
        ask_ahead_factory(options, workers, endpoints, paces, budget, policy),
        InterruptFlag(options.out_dir),
        # read once the controller's batch step is over (the workers start after it)
        pending_cassettes(options.cassette_dir, [model.name for model in models]),
    )


def process_shares(options: AskingSettings, workers: int, models: list[ModelSpec]) -> dict[str, int]:
    """Model -> requests this process may have in flight: N split evenly over the ``workers`` test processes,
    so that all of them together never exceed N (models without a concurrency are left out)."""
    shares: dict[str, int] = {}
    for model in models:
        total = options.concurrency or model.concurrency
        if total:
            shares[model.name] = max(1, math.floor(total / workers))
    return shares


def ask_ahead_factory(
    options: AskingSettings,
    workers: int,
    endpoints: dict[str, Endpoint],
    paces: dict[str, Pacer],
    budget: Budget,
    policy: RetryPolicy,
) -> Callable[[Scrubber], AskAhead] | None:
    """What builds this process's AskAhead once the asker's scrubber exists; None without a concurrency."""
    models = [endpoint.model for endpoint in endpoints.values()]
    shares = process_shares(options, workers, models)
    if not shares:
        return None

    def build(scrub: Scrubber) -> AskAhead:
        stops = StopBoard(options.out_dir, {model.name: model.api_key_env for model in models})
        claims = ClaimBoard(options.out_dir)
        # Built here, on the test thread (see AskAhead's clients), each with room for the model's share.
        clients = {name: chat_client(endpoints[name], policy, max_connections=share) for name, share in shares.items()}
        return AskAhead(shares, budget, paces, scrub, stops, claims, InterruptFlag(options.out_dir), clients)

    return build


def pacers(options: AskingSettings, models: list[ModelSpec]) -> dict[str, Pacer]:
    """Each model's pace, shared by every process of the session: adapted to what the provider says, within
    the ceiling of requests in flight (--snap-concurrency or the entry's) and the fixed rate (--snap-rate-limit
    or the entry's rate_limit_per_minute), where set."""
    paces: dict[str, Pacer] = {}
    for model in models:
        settings = PaceSettings(
            ceiling=options.concurrency or model.concurrency or None,
            fixed_per_minute=options.rate_limit_per_minute or model.rate_limit_per_minute or None,
            adaptive=options.adaptive_pace,
        )
        paces[model.name] = Pacer(
            SharedState(pace_file(state_folder(options.out_dir), model.name), durable=False), settings
        )
    return paces


def session_budget(options: AskingSettings) -> Budget:
    """The session's request and cost budget, shared by every process (--snap-max-requests, --snap-max-cost)."""
    limits = BudgetLimits(options.max_requests, options.max_cost_usd)
    return Budget(SharedState(state_folder(options.out_dir) / BUDGET_FILE), limits)


def start_session_state(out_dir: Path) -> None:
    """What an earlier session left: half-written temporaries (writers killed mid-write), its budget (each
    session has its own), its paces, stops, claims and interrupt flag."""
    remove_stale_temporaries(state_folder(out_dir))
    (state_folder(out_dir) / BUDGET_FILE).unlink(missing_ok=True)
    clear_paces(state_folder(out_dir))
    clear_stops(out_dir)
    clear_claims(out_dir)
    InterruptFlag(out_dir).lower()
