"""Tests of the command-line tool (redaction_pressure/cli/), run as a user runs it."""
