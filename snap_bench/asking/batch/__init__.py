"""Asking a model's unrecorded conditions through its provider's batch API (``--snap-batch``)."""
