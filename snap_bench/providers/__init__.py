"""The providers: one module per API snap-bench can ask, each a :class:`Provider` value registered through the
``snap_bench.providers`` entry point group (docs/providers.md). Facts and pure functions only; the design, the
wire, the recordings and the asking read them here.
"""

from __future__ import annotations

from snap_bench.providers.base import Parsed, Provider
from snap_bench.providers.registry import (
    PLAIN,
    ProviderError,
    key_shapes,
    key_variables,
    provider_named,
    provider_names,
    provider_of_recording,
    provider_of_url,
    registered,
    secret_headers,
)

__all__ = [
    "PLAIN",
    "Parsed",
    "Provider",
    "ProviderError",
    "key_shapes",
    "key_variables",
    "provider_named",
    "provider_names",
    "provider_of_recording",
    "provider_of_url",
    "registered",
    "secret_headers",
]
