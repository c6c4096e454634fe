"""Tests of the shared floor (redaction_pressure/: corpus, levels, splits, seal, identity) and of
the import graph.
"""
