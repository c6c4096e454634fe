"""End to end: vf-eval, serve-env, the wheels and the README commands, through the real verifiers
tools.
"""
