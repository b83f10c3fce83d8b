"""Speed and size measurements; run each as a module from the repository root: python -m bench.NAME."""
