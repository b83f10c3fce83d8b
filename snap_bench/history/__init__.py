"""The results history: each session's headline figures kept across runs."""
