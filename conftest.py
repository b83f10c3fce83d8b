"""Root conftest: snap-bench itself is loaded through its pytest11 entry point (snap_bench.plugin.hooks)."""
