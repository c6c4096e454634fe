"""Helpers the tests share (and the benchmarks import): nothing here is a test.

cases (shared cases and the private secret), calibrate (answers sized to this machine), standin (the stand-in model
servers), bombs (decompression bombs), taskset (tasks and traces of the taskset), runs (vf-eval runs read back),
browser (reports in headless Chromium), cli (the command-line tool run as a user runs it), attacks/ (the scripted
attacks on the secrets-audit grader, one module per family), realism/ (the corpus realism checks, one per concern).
"""
