"""Tests of the one-turn environment (redaction_pressure/redact/): rules, scanner, rubric, API,
pool, taskset, harness, policies.
"""
