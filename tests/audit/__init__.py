"""Tests of the multi-turn environment (redaction_pressure/audit/), one module per module, and the
attacks on its grader.
"""
