"""Leave the heap of a finished benchmark session to the operating system.

When a session ends, pytest runs a full garbage collection (to report exceptions raised in
finalizers) and the interpreter walks every tracked object again while it shuts down. A benchmark
session's heap is large (every test report, the observations, numpy, scipy, pandas and matplotlib),
so those passes cost about 0.6 s of a 2,268-condition run against a 200 ms server, all after the last
answer (measured by ``python -m bench.throughput``). Freezing the heap at unconfigure moves what the
session built out of the collector's sight; the next session in the same process (pytester, an IDE
calling ``pytest.main`` again) unfreezes it first, so nothing stays uncollectable for longer than
one session.

The cost: cyclic garbage made during the session is not collected at its end, so an exception in
such an object's finalizer is not reported by pytest. Only benchmark sessions freeze; the project's
own test runs (and any session without benchmark tests) keep pytest's collection.
"""

from __future__ import annotations

import gc

_frozen_by_us = False


def freeze_session_heap() -> None:
    """At the end of a benchmark session: no collector pass walks its objects any more."""
    global _frozen_by_us
    gc.freeze()
    _frozen_by_us = True


def thaw_previous_session_heap() -> None:
    """At the start of a session in a process that ran one before: its objects are collectable again."""
    global _frozen_by_us
    if _frozen_by_us:
        gc.unfreeze()
        _frozen_by_us = False
