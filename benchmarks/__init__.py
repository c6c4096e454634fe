"""Scripts that print figures, not tests; each runs from the repository's root as `uv run python -m benchmarks.NAME`
(`processes.py` is no script: the /proc helpers `load.py` and `bench_throughput.py` share)."""
