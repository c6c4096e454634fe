"""Scripts that print figures, not tests; each runs from the repository's root as `uv run python -m benchmarks.NAME`."""
