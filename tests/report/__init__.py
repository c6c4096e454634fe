"""Tests of the run report (redaction_pressure/report/): its numbers, reading runs, and real runs
opened in Chromium.
"""
