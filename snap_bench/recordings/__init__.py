"""Recordings: one cassette per condition, written atomically, and what is recorded, stale or damaged."""
